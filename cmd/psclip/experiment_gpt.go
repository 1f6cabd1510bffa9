package main

import (
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/psclip/psclip/experiments/gpt"
	runlayer "github.com/psclip/psclip/run"
)

func init() {
	register(&command{
		name:  "experiment gpt",
		short: "GPT with gradient accumulation: global clipping vs MB-Clip (and per-sample thresholds) over learning rates and seeds (tables, curves)",
		run:   runExperimentGPT,
		flags: gptFieldFlags,
	})
}

// experimentPSEstimators are the per-sample estimators of experiment gpt:
// all but dp-sgd, which it does not train (privacy is train gpt's).
var experimentPSEstimators = slices.DeleteFunc(slices.Clone(gpt.PSEstimators), func(e string) bool { return e == "dp-sgd" })

func runExperimentGPT(fs *flag.FlagSet, args []string) error {
	c, d := gpt.ExperimentDefault(), gpt.DataSpec{}
	gptFlags(fs, &c, &d)
	lrs := fs.String("lrs", "6e-4,8e-4,1e-3", "comma-separated peak learning rates (each decays to a tenth)")
	seeds := fs.Int("seeds", 3, "seeds per learning rate and clip mode: 1..N")
	modes := fs.String("clip-modes", "global,micro-batch", "comma-separated clip modes to compare: global, micro-batch, per-sample, none; per-sample runs take --ps-estimator and its flags")
	definePS(fs, &c, "", "the per-sample runs", experimentPSEstimators)
	out := fs.String("out", "out-experiment-gpt", "output directory: results, tables, curves and one directory per run")
	var again experimentResume
	again.bind(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := corruptFlags(fs, &c); err != nil {
		return err
	}
	if err := gptBatch(fs, &c); err != nil {
		return err
	}
	e := gpt.Experiment{Base: c}
	for _, s := range strings.Split(*lrs, ",") {
		lr, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return usagef("--lrs: %q is not a number", s)
		}
		e.LRs = append(e.LRs, lr)
	}
	for _, s := range strings.Split(*modes, ",") {
		m, err := gpt.ParseClipMode(strings.TrimSpace(s))
		if err != nil {
			return usagef("--clip-modes: %q is not a clip mode (want global, micro-batch, per-sample or none)", s)
		}
		e.Modes = append(e.Modes, m)
	}
	if c.Estimator == "dp-sgd" {
		return usagef("--ps-estimator dp-sgd: experiment gpt does not train privately; use train gpt")
	}
	if slices.Contains(e.Modes, gpt.ClipPerSample) && c.Estimator != "" && !slices.Contains(experimentPSEstimators, c.Estimator) {
		return usagef("--ps-estimator %q: want one of %s", c.Estimator, strings.Join(experimentPSEstimators, ", "))
	}
	// A flag no run reads is refused, as train gpt refuses it.
	if name := unreadFlag(fs, gptFieldFlags, gptClipFields, e.Reads); name != "" {
		why := ""
		if name == "clip" && slices.Contains(e.Modes, gpt.ClipPerSample) {
			ps := c
			ps.ClipMode = gpt.ClipPerSample
			why = fmt.Sprintf(": per-sample mode's %s has a threshold of its own", ps.Label())
		}
		return usagef("--%s applies to none of --clip-modes %s%s", name, *modes, why)
	}
	if *seeds <= 0 {
		return usagef("--seeds = %d, want > 0", *seeds)
	}
	for i := range *seeds {
		e.Seeds = append(e.Seeds, uint64(i+1))
	}
	if err := e.Check(); err != nil {
		return err
	}
	corpus, err := corpusFor(d, &c)
	if err != nil {
		return err
	}
	if err := again.check(); err != nil {
		return err
	}
	ctx, stop := interruptContext()
	defer stop()
	res, err := gpt.RunExperiment(ctx, e, corpus, again.options(*out))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Final validation loss\n\n%s\nTraining time\n\n%s\n%s\nResults in %s (%s, %s, %s, %s, %s)\n",
		res.LossTable(), res.TimeTable(), res.ClipTable(), *out, runlayer.ResultsFile, gpt.TableCSV, gpt.ClipTableMD, gpt.CurvesPNG, gpt.CurvesSVG)
	return nil
}
