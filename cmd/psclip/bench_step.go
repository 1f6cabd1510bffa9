package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/psclip/psclip/bench"
	"github.com/psclip/psclip/dist"
	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/experiments/gpt"
	"github.com/psclip/psclip/internal/procfs"
	"github.com/psclip/psclip/models"
	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/optim"
	"github.com/psclip/psclip/provenance"
	"github.com/psclip/psclip/train"
)

func init() {
	register(&command{
		name:  "bench step",
		short: "time full training steps of several estimators, interleaved in one process (or one job under mpirun)",
		run:   runBenchStep,
		flags: map[string]string{"Clip": "gamma", "Rank": "lora-rank", "Targets": "lora-targets"},
		ranks: true,
	})
}

// stepResult is one estimator's (or clip mode's) line of "bench step --json".
type stepResult struct {
	Estimator    string    `json:"estimator"`
	ClipMode     string    `json:"clip_mode,omitempty"`
	StepMsMedian float64   `json:"step_ms_median"`
	StepMs       []float64 `json:"step_ms"`
	// CPUMsMedian is the process's CPU time (user and system, all threads;
	// under mpirun, of all ranks' processes) per step: on a loaded machine it tracks the work done far more
	// closely than wall time, which also counts waiting for a core.
	CPUMsMedian  float64 `json:"cpu_ms_median,omitempty"`
	ImagesPerS   float64 `json:"images_per_s,omitempty"`
	TokensPerS   float64 `json:"tokens_per_s,omitempty"`
	RatioToFirst float64 `json:"ratio_to_first"`
	// PairedRatioToFirst is the median over rounds of the step time over
	// the first's in the same round: less sensitive to load that drifts
	// over the run than the ratio of the medians.
	PairedRatioToFirst float64 `json:"paired_ratio_to_first"`
	// PairedRatioCI95 is a 95 % interval of that median, distribution-free
	// (bench.MedianCI95: order statistics of the rounds' ratios); absent
	// for fewer than 6 rounds.
	PairedRatioCI95 []float64 `json:"paired_ratio_ci95,omitempty"`
	CPURatioToFirst float64   `json:"cpu_ratio_to_first,omitempty"`
	AllocMBPerStep  float64   `json:"alloc_mb_per_step"`
	// PerSampleMB is the most per-sample gradients a micro-batch of the
	// estimator's steps materialised (train.Stats.PerSampleBytes), in MiB.
	PerSampleMB float64 `json:"persample_mb"`
	// MemoryRatio is the memory the estimator's step holds over the plain
	// step's, both measured (nn.HeldBytes): 1 for a plain estimator; for a
	// per-sample one, the model and optimizer's after every step timed,
	// per-sample buffers included.
	MemoryRatio float64 `json:"memory_ratio"`
}

// benchCase is one configuration timed by bench step.
type benchCase struct {
	name, mode string
}

func runBenchStep(fs *flag.FlagSet, args []string) error {
	var m modelFlags
	defineModelFlags(fs, &m)
	b := fs.Int("micro-batch", 64, "samples per micro-batch")
	old := fs.Int("batch", 64, "deprecated spelling of --micro-batch (everywhere else --batch is a step's samples)")
	accum := fs.Int("accum", 1, "micro-batches per step (gradient accumulation)")
	names := fs.String("estimators", "sgd,clip-sgd,ps-clip-sgd", "comma-separated estimators to time: "+strings.Join(estimator.Names, ", "))
	modes := fs.String("clip-modes", "", "comma-separated clip modes to time instead of --estimators (global, micro-batch, per-sample, none), as train gpt runs them")
	steps := fs.Int("steps", 5, "timed steps per estimator")
	warmup := fs.Int("warmup", 1, "untimed steps per estimator first")
	gamma := fs.Float64("gamma", 1, "clipping threshold of clip-sgd, ps-clip-sgd, dp-sgd and the clip modes")
	sigma := fs.Float64("noise-multiplier", 1, "dp-sgd's noise multiplier σ (secure noise; the expected batch is the step's samples)")
	seed := fs.Uint64("seed", 1, "seed of the initialisation, batch and dropout")
	loraRank := fs.Int("lora-rank", 0, "gpt: time LoRA fine-tuning at this rank instead (every weight frozen, adapters on --lora-targets trained)")
	loraTargets := fs.String("lora-targets", "attn", "--lora-rank: the layers of every block to adapt, comma-separated: "+strings.Join(models.LoRATargets, ", "))
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	var budget train.MemoryBudget
	definePerSampleMemory(fs, &budget)
	if err := parse(fs, args); err != nil {
		return err
	}
	bFlag := "micro-batch"
	if flagSet(fs, "batch") {
		if flagSet(fs, "micro-batch") {
			return usagef("--batch and --micro-batch exclude each other: --batch is the deprecated spelling of --micro-batch in bench step")
		}
		*b, bFlag = *old, "batch"
	}
	switch {
	case *b < 1:
		return usagef("--%s %d: need at least 1", bFlag, *b)
	case *accum < 1:
		return usagef("--accum %d: need at least 1", *accum)
	case *steps < 1:
		return usagef("--steps %d: need at least 1", *steps)
	case *warmup < 0:
		return usagef("--warmup %d: must not be negative", *warmup)
	case world.Size() > *accum:
		return usagef("--accum %d: %d ranks share a step's micro-batches, so it needs at least %d", *accum, world.Size(), world.Size())
	}
	type config struct {
		est   estimator.Estimator
		scope train.Scope
		mode  string
	}
	if err := m.check(fs); err != nil {
		return err
	}
	switch {
	case flagSet(fs, "lora-rank") && m.name != "gpt":
		return usagef("--lora-rank applies only to --model gpt")
	case flagSet(fs, "lora-rank") && *loraRank < 1:
		return usagef("--lora-rank %d: want a rank from 1 to --n-embd %d", *loraRank, m.gpt.NEmbd)
	case flagSet(fs, "lora-targets") && !flagSet(fs, "lora-rank"):
		return usagef("--lora-targets applies only with --lora-rank")
	}
	if *modes != "" && flagSet(fs, "estimators") {
		return usagef("--estimators and --clip-modes exclude each other: --clip-modes times clip modes instead of estimators")
	}
	var cfgs []config
	readsGamma := false
	if *modes != "" {
		list := strings.Split(*modes, ",")
		for i, name := range list {
			mode, err := gpt.ParseClipMode(strings.TrimSpace(name))
			if err != nil {
				return usagef("--clip-modes: %v", err)
			}
			if slices.Contains(list[:i], name) {
				return usagef("--clip-modes: %s is listed twice", name)
			}
			e, scope, err := mode.Estimator(*gamma)
			if err != nil {
				return usagef("--gamma: %v", err)
			}
			readsGamma = readsGamma || mode != gpt.ClipNone
			cfgs = append(cfgs, config{e, scope, string(mode)})
		}
	} else {
		list := strings.Split(*names, ",")
		for i, name := range list {
			s := estimator.Spec{Estimator: strings.TrimSpace(name), Clip: *gamma, NoiseMultiplier: *sigma}
			if !slices.Contains(estimator.Names, s.Estimator) {
				return usagef("--estimators: unknown estimator %q (want %s)", s.Estimator, strings.Join(estimator.Names, ", "))
			}
			if slices.Contains(list[:i], name) {
				return usagef("--estimators: %s is listed twice", name)
			}
			readsGamma = readsGamma || s.Reads("Clip")
			e, err := s.Trim().New()
			if err != nil {
				return err
			}
			cfgs = append(cfgs, config{e, train.Global, ""})
		}
	}
	if flagSet(fs, "gamma") && !readsGamma {
		return usagef("--gamma applies to none of the estimators or clip modes timed")
	}
	if flagSet(fs, "noise-multiplier") && !slices.ContainsFunc(cfgs, func(c config) bool { return estimator.NoisyOf(c.est) != nil }) {
		return usagef("--noise-multiplier applies to none of the estimators timed (dp-sgd's)")
	}
	perSample := slices.ContainsFunc(cfgs, func(c config) bool { return c.est.PerSample() })
	if flagSet(fs, "persample-memory") && !perSample {
		return usagef("--persample-memory applies to none of the estimators or clip modes timed (per-sample ones')")
	}
	// Under mpirun every rank times the same steps in step with the
	// others: their flags, which name no files, must be rank 0's.
	if err := dist.Same(world, "the command line", []byte(strings.Join(args, "\x00"))); err != nil {
		return err
	}
	lower, _ := m.trainingBytes(*b, 1)
	if err := m.checkMemory(*b, *accum, 1, budget.Bytes(lower)); err != nil {
		return err
	}
	model, x, y, err := m.build(*b**accum, *seed)
	if err != nil {
		return err
	}
	if bFlag == "batch" && world.Rank() == 0 { // once the flags proved usable: bad input gets one line
		fmt.Fprintln(stderr, "psclip bench step: --batch is deprecated, use --micro-batch: it sets the samples of a micro-batch here, where every other command's --batch is a step's samples (--micro-batch × --accum)")
	}
	if *loraRank > 0 {
		c := models.LoRAConfig{Rank: *loraRank, Alpha: float64(*loraRank), Targets: strings.Split(*loraTargets, ",")}
		if err := model.(*models.GPT).AdaptLoRA(c, *seed); err != nil {
			return usage(err)
		}
	}
	batches, err := train.Split(train.Batch{X: x, Y: y}, *accum)
	if err != nil {
		return err
	}
	// One model and optimizer for all: the weights drift between steps,
	// which does not change the work a step does.
	opt, err := optim.NewSGD(nn.Trainable(model.Params()), optim.SGDConfig{LR: 1e-4, Momentum: 0.9})
	if err != nil {
		return err
	}
	// The plain step's memory, measured on the model before any step, for
	// a budget stated as a ratio and the memory ratios reported.
	plain, err := train.PlainStepBytes(train.Config{Model: model, Loss: nn.CrossEntropy, Optimizer: opt}, batches[0])
	if err != nil {
		return err
	}
	psBytes := budget.Bytes(float64(plain))
	items := float64(*b * *accum)
	cases := make([]benchCase, len(cfgs))
	stepFns := make([]func() error, len(cfgs))
	spent := make([]int64, len(cfgs)) // the most per-sample bytes a step materialised
	for i, c := range cfgs {
		tc := train.Config{Model: model, Loss: nn.CrossEntropy, Estimator: c.est, Optimizer: opt,
			Scope: c.scope, Rand: rand.New(rand.NewPCG(*seed, uint64(i))), Comm: world}
		noisy := estimator.NoisyOf(c.est) != nil
		if noisy {
			tc.ExpectedBatch, tc.SampleStats = items, true
		}
		if c.est.PerSample() {
			tc.PerSampleMemory = psBytes
		}
		tr, err := train.New(tc)
		if err != nil {
			return err
		}
		cases[i] = benchCase{c.est.Name(), c.mode}
		stepFns[i] = func() error {
			var st train.Stats
			var err error
			if noisy { // the same micro-batches, as one Poisson sample
				st, err = tr.PrivateStep(train.Batch{X: x, Y: y}, (x.Dim(0)+*accum-1) / *accum)
			} else {
				st, err = tr.Step(batches...)
			}
			spent[i] = max(spent[i], st.PerSampleBytes)
			return err
		}
	}
	// Under mpirun every rank times the same steps, in step with the
	// others through each step's all-reduce; rank 0 reports for the job.
	progress := stderr
	if world.Rank() != 0 {
		progress = io.Discard
	}
	rec := provenance.New()
	timed, err := bench.Interleave(stepFns, *warmup, *steps, func(done, total int) {
		fmt.Fprintf(progress, "\rbench step: round %d/%d", done, total)
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(progress)
	// What the model and optimizer hold after every step timed: the plain
	// step's and the per-sample buffers of the per-sample steps.
	held := float64(nn.HeldBytes(model, opt)) / float64(plain)
	cpus := make([][]float64, len(timed))
	for i, t := range timed {
		cpus[i] = t.CPUMs
	}
	world.AllReduce(dist.Bufs{F64: cpus}) // the job's CPU time: every rank's
	unit := "images/s"
	if m.name == "gpt" {
		items *= float64(x.Dim(1))
		unit = "tokens/s"
	}
	res := make([]stepResult, len(cases))
	first := timed[0]
	for i, c := range cases {
		t := timed[i]
		med := bench.Median(t.WallMs)
		paired := bench.Ratios(t.WallMs, first.WallMs)
		res[i] = stepResult{Estimator: c.name, ClipMode: c.mode, StepMsMedian: med, StepMs: t.WallMs,
			RatioToFirst: med / bench.Median(first.WallMs), PairedRatioToFirst: bench.Median(paired),
			AllocMBPerStep: float64(t.AllocBytes) / float64(*steps) / (1 << 20), PerSampleMB: float64(spent[i]) / (1 << 20), MemoryRatio: 1}
		if lo, hi, ok := bench.MedianCI95(paired); ok {
			res[i].PairedRatioCI95 = []float64{lo, hi}
		}
		if cfgs[i].est.PerSample() {
			res[i].MemoryRatio = held
		}
		if len(t.CPUMs) > 0 {
			res[i].CPUMsMedian = bench.Median(t.CPUMs)
			res[i].CPURatioToFirst = res[i].CPUMsMedian / bench.Median(first.CPUMs)
		}
		if m.name == "gpt" {
			res[i].TokensPerS = items / med * 1000
		} else {
			res[i].ImagesPerS = items / med * 1000
		}
	}
	rec.Finish()
	lora := ""
	if *loraRank > 0 {
		lora = *loraTargets
	}
	if *asJSON {
		report := struct {
			Model      string     `json:"model"`
			LoRARank   int        `json:"lora_rank,omitempty"`
			LoRATarget string     `json:"lora_targets,omitempty"`
			Batch      int        `json:"batch"`
			Accum      int        `json:"accum"`
			Ranks      int        `json:"ranks"`
			GOMAXPROCS int        `json:"gomaxprocs"`
			LoadAvg    [2]float64 `json:"load_avg_1m,omitzero"`
			PeakRSSMB  float64    `json:"peak_rss_mb,omitempty"`
			// PlainMB is the plain step's memory, measured
			// (train.PlainStepBytes), in MiB.
			PlainMB float64 `json:"plain_step_mb"`
			// PerSampleMemory is the budget as given, and
			// PerSampleBudget the bytes it came to (0 automatic, −1
			// none).
			PerSampleMemory string            `json:"persample_memory"`
			PerSampleBudget int64             `json:"persample_budget_bytes"`
			Results         []stepResult      `json:"results"`
			Provenance      provenance.Record `json:"provenance"`
		}{m.name, *loraRank, lora, *b, *accum, world.Size(), runtime.GOMAXPROCS(0), [2]float64{rec.LoadBefore, rec.LoadAfter}, peakRSSMB(), float64(plain) / (1 << 20), budget.String(), psBytes, res, rec}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(report)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "estimator\tstep ms (median)\tCPU ms\t%s\tvs %s\tpaired [95 %%]\tCPU vs %[2]s\tmemory vs plain\talloc MB/step\tper-sample MiB\t\n", unit, cases[0].label())
	for i, r := range res {
		paired := fmt.Sprintf("%.3f×", r.PairedRatioToFirst)
		if ci := r.PairedRatioCI95; ci != nil {
			paired += fmt.Sprintf(" [%.3f, %.3f]", ci[0], ci[1])
		}
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%.1f\t%.3f×\t%s\t%.3f×\t%.2f×\t%.1f\t%.1f\t\n", cases[i].label(), r.StepMsMedian, r.CPUMsMedian, items/r.StepMsMedian*1000, r.RatioToFirst, paired, r.CPURatioToFirst, r.MemoryRatio, r.AllocMBPerStep, r.PerSampleMB)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if perSample {
		fmt.Fprintf(stdout, "plain step's memory %.0f MiB (measured: what the model and optimizer hold), per-sample budget %s (%s)\n", float64(plain)/(1<<20), budget, budgetBytes(psBytes))
	}
	if rss := peakRSSMB(); rss > 0 {
		fmt.Fprintf(stdout, "peak RSS %.0f MB (the whole process: time one estimator per process to compare memory)\n", rss)
	}
	if rec.LoadAfter > 0 {
		fmt.Fprintf(stdout, "load average %.2f before, %.2f after\n", rec.LoadBefore, rec.LoadAfter)
	}
	if world.Size() > 1 {
		fmt.Fprintf(stdout, "%d ranks of GOMAXPROCS %d (CPU ms: all ranks')\n", world.Size(), runtime.GOMAXPROCS(0))
	}
	return nil
}

func (c benchCase) label() string {
	if c.mode != "" {
		return c.mode
	}
	return c.name
}

// peakRSSMB is the process's peak resident set size (Linux's VmHWM), or 0
// where /proc does not tell.
func peakRSSMB() float64 {
	kb, _ := procfs.Field("/proc/self/status", "VmHWM:")
	return kb / 1024
}

// budgetBytes describes Config.PerSampleMemory's bytes.
func budgetBytes(b int64) string {
	switch {
	case b == 0:
		return "each layer's rule"
	case b < 0:
		return "none"
	}
	return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
}
