package main

import (
	"flag"
	"fmt"
	"math"
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
	})
}

func runExperimentGPT(fs *flag.FlagSet, args []string) error {
	c, d := gpt.ExperimentDefault(), gpt.DataSpec{}
	gptFlags(fs, &c, &d)
	lrs := fs.String("lrs", "6e-4,8e-4,1e-3", "comma-separated peak learning rates (each decays to a tenth)")
	seeds := fs.Int("seeds", 3, "seeds per learning rate and clip mode: 1..N")
	modes := fs.String("clip-modes", "global,micro-batch", "comma-separated clip modes to compare: global, micro-batch, per-sample, none; per-sample runs take --ps-estimator and its flags")
	var ps perSampleFlags
	ps.define(fs, "the per-sample runs")
	out := fs.String("out", "out-experiment-gpt", "output directory: results, tables, curves and one directory per run")
	resume := fs.Bool("resume", false, "reuse finished runs in --out and continue an interrupted one")
	restart := fs.Bool("restart", false, restartExperimentUsage)
	if err := parse(fs, args); err != nil {
		return err
	}
	if slices.ContainsFunc(append(psFlags, "ps-estimator"), func(name string) bool { return flagSet(fs, name) }) {
		ps.set(&c)
	}
	e := gpt.Experiment{Base: c}
	for _, s := range strings.Split(*lrs, ",") {
		lr, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return usagef("--lrs: %q is not a number", s)
		}
		if !(lr > 0) || math.IsInf(lr, 0) {
			return usagef("--lrs: learning rate = %v, want a finite value > 0", lr)
		}
		e.LRs = append(e.LRs, lr)
	}
	for _, s := range strings.Split(*modes, ",") {
		m, err := gpt.ParseClipMode(strings.TrimSpace(s))
		if err != nil {
			return usagef("--clip-modes: %v", err)
		}
		e.Modes = append(e.Modes, m)
	}
	// A --clip no run reads is refused, as train gpt refuses it.
	if flagSet(fs, "clip") && !e.ReadsClip() {
		why := ""
		if slices.Contains(e.Modes, gpt.ClipPerSample) {
			why = fmt.Sprintf(": per-sample mode's %s has a threshold of its own", c.PSMethod())
		}
		return usagef("--clip applies to none of --clip-modes %s%s", *modes, why)
	}
	if *seeds <= 0 {
		return usagef("--seeds = %d, want > 0", *seeds)
	}
	for i := range *seeds {
		e.Seeds = append(e.Seeds, uint64(i+1))
	}
	if err := e.Check(); err != nil {
		return usageError{err.Error()}
	}
	d.VocabSize = c.VocabSize
	corpus, err := gpt.LoadCorpus(d)
	if err != nil {
		return usageError{err.Error()}
	}
	if err := c.CheckCorpus(corpus); err != nil {
		return usageError{err.Error()}
	}
	if *resume && *restart {
		return usagef("--resume and --restart exclude each other")
	}
	ctx, stop := interruptContext()
	defer stop()
	res, err := gpt.RunExperiment(ctx, e, corpus, gpt.RunOptions{Out: *out, Resume: *resume, Restart: *restart, Progress: stderr})
	if err != nil {
		return runErr(err)
	}
	fmt.Fprintf(stdout, "Final validation loss\n\n%s\nTraining time\n\n%s\nResults in %s (%s, %s, %s, %s)\n",
		res.LossTable(), res.TimeTable(), *out, runlayer.ResultsFile, gpt.TableCSV, gpt.CurvesPNG, gpt.CurvesSVG)
	return nil
}
