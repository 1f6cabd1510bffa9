package cifar

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/psclip/psclip/internal/stats"
	"github.com/psclip/psclip/run"
)

// Method is one estimator setting of an experiment: the estimator's
// command-line name and its settings, as in Config. The settings a method
// leaves zero, the estimator's defaults, are left out of the JSON, so that
// the methods of the paper keep the form of older results.
type Method struct {
	Estimator      string  `json:"estimator"`
	Clip           float64 `json:"clip,omitempty"`
	Alpha          float64 `json:"alpha,omitempty"`
	Beta           float64 `json:"beta,omitempty"`
	AutoAlpha      bool    `json:"auto_alpha,omitempty"`
	AutoBeta       bool    `json:"auto_beta,omitempty"`
	Window         int     `json:"window,omitempty"`
	TargetQuantile float64 `json:"target_quantile,omitempty"`
	QuantileRate   float64 `json:"quantile_rate,omitempty"`
	AutoClipR      float64 `json:"auto_clip_r,omitempty"`
}

// PaperAlphas and PaperBetas are the appendix's grid for the increasing
// threshold α·k^(1/β).
var (
	PaperAlphas = []float64{1, 15, 30, 45}
	PaperBetas  = []float64{1.2, 1.5, 1.8, 2.0}
)

func (m Method) config(base Config, seed uint64) Config {
	c := base
	c.Estimator, c.Clip, c.Alpha, c.Beta, c.Seed = m.Estimator, m.Clip, m.Alpha, m.Beta, seed
	c.AutoAlpha, c.AutoBeta, c.Window = m.AutoAlpha, m.AutoBeta, m.Window
	c.TargetQuantile, c.QuantileRate, c.AutoClipR = m.TargetQuantile, m.QuantileRate, m.AutoClipR
	return c
}

// Name is the paper's name of the method with its thresholds.
func (m Method) Name() string {
	c := m.config(Config{}, 0)
	return c.Method()
}

// increasing reports whether the method uses the increasing threshold.
func (m Method) increasing() bool {
	c := m.config(Config{}, 0)
	return c.increasing()
}

// Reads reports whether the method reads the setting of a flag only some
// estimators read: "window", "target-quantile", "quantile-rate" or
// "auto-clip-r".
func (m Method) Reads(flag string) bool {
	c := m.config(Config{}, 0)
	for _, s := range c.ownSettings() {
		if s.flag == flag {
			return s.reads
		}
	}
	return false
}

// key names the method's directory: "sgd", "clip-sgd_gamma=15",
// "ps-clip-sgd_alpha=15_beta=2", "ps-clip-sgd_alpha=auto_beta=2_window=512",
// "ps-clip-quantile_q=0.7": every setting that differs from the default.
func (m Method) key() string {
	c := m.config(Config{}, 0)
	k := m.Estimator
	switch {
	case c.increasing():
		k += fmt.Sprintf("_alpha=%s_beta=%s", autoNum(m.Alpha, m.AutoAlpha), autoNum(m.Beta, m.AutoBeta))
	case c.readsClip() && m.Clip != 0:
		k += "_gamma=" + num(m.Clip)
	}
	for _, s := range []struct {
		name string
		v    float64
	}{{"window", float64(m.Window)}, {"q", m.TargetQuantile}, {"rate", m.QuantileRate}, {"r", m.AutoClipR}} {
		if s.v != 0 {
			k += "_" + s.name + "=" + num(s.v)
		}
	}
	return k
}

func num(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// Experiment is the paper's AlexNet study: every method at every seed from
// the same base configuration, and the appendix's grid of increasing
// thresholds. A seed fixes the split, the initialisation, the data order,
// the augmentations and the dropout masks, so at a given seed all methods
// start from the same weights and see the same batches.
type Experiment struct {
	// Base is the configuration of every run but the estimator settings
	// and the seed.
	Base Config `json:"base"`
	// Methods are compared in the main table and figures.
	Methods []Method `json:"methods"`
	// GridAlphas × GridBetas are the increasing thresholds α·k^(1/β) of
	// the "increasing vs constant threshold" table; empty: no grid. A grid
	// point equal to one of Methods is trained once.
	GridAlphas []float64 `json:"grid_alphas"`
	GridBetas  []float64 `json:"grid_betas"`
	Seeds      []uint64  `json:"seeds"`
	// LogNorms logs the per-sample gradient norms of every step of the
	// runs whose estimator computes them (RunOptions.LogNorms).
	LogNorms bool `json:"log_norms,omitempty"`
}

// grid returns the grid's methods.
func (e *Experiment) grid() []Method {
	var g []Method
	for _, a := range e.GridAlphas {
		for _, b := range e.GridBetas {
			g = append(g, Method{Estimator: "ps-clip-sgd", Alpha: a, Beta: b})
		}
	}
	return g
}

// all returns the methods to train: Methods, then the grid points not among
// them.
func (e *Experiment) all() []Method {
	ms := slices.Clone(e.Methods)
	for _, g := range e.grid() {
		if !slices.Contains(ms, g) {
			ms = append(ms, g)
		}
	}
	return ms
}

// Check validates the experiment and every configuration in it.
func (e *Experiment) Check() error {
	switch {
	case len(e.Methods) == 0:
		return errors.New("--methods: no method")
	case len(e.Seeds) == 0:
		return errors.New("--seeds: no seed")
	case (len(e.GridAlphas) == 0) != (len(e.GridBetas) == 0):
		return errors.New("--grid-alphas and --grid-betas must both be empty or both be given")
	}
	for _, b := range e.GridBetas {
		if !(finite(b) && b > 0) {
			return fmt.Errorf("--grid-betas: β = %v, want a finite β > 0", b)
		}
	}
	for _, m := range e.all() {
		c := m.config(e.Base, e.Seeds[0])
		if err := c.Validate(); err != nil {
			return fmt.Errorf("%s: %w", m.Name(), err)
		}
	}
	return nil
}

// RunResult is what one run of an experiment produced.
type RunResult struct {
	Method Method `json:"method"`
	Name   string `json:"name"`
	Seed   uint64 `json:"seed"`
	Summary
}

// Row is one line of the experiment's tables: one method aggregated over
// seeds. Accuracies are fractions; standard deviations are the sample ones
// (n−1), null for a single seed.
type Row struct {
	Method Method `json:"method"`
	Name   string `json:"name"`
	N      int    `json:"n"`
	// TrainAcc and ValAcc are the last epoch's; TestAcc is the final
	// model's; Seconds is the total wall time of a run.
	TrainAcc   Float `json:"train_acc_mean"`
	TrainAccSD Float `json:"train_acc_sd"`
	ValAcc     Float `json:"val_acc_mean"`
	ValAccSD   Float `json:"val_acc_sd"`
	TestAcc    Float `json:"test_acc_mean"`
	TestAccSD  Float `json:"test_acc_sd"`
	Seconds    Float `json:"train_time_s_mean"`
	SecondsSD  Float `json:"train_time_s_sd"`
	// ValAtFastest is the validation accuracy of the last epoch completed
	// within the total time of the fastest method at the same seed (the
	// paper's "Val Accuracy after 119 min"); null for grid rows.
	ValAtFastest   Float `json:"val_acc_at_fastest_mean"`
	ValAtFastestSD Float `json:"val_acc_at_fastest_sd"`
	// ClippedPerBatch and ClippedStepFraction average the runs' per-epoch
	// clipping statistics.
	ClippedPerBatch     Float `json:"clipped_per_batch_mean"`
	ClippedStepFraction Float `json:"clipped_step_fraction_mean"`
}

// Results is the content of results.json.
type Results struct {
	Experiment Experiment  `json:"experiment"`
	Data       string      `json:"data"`
	Runs       []RunResult `json:"runs"`
	// Table has a row per method of Experiment.Methods; Grid a row per
	// grid point.
	Table []Row `json:"table"`
	Grid  []Row `json:"grid"`
}

// Output files of an experiment, in its directory.
const (
	TableMD     = "table.md"
	GridMD      = "grid.md"
	AccuracyPNG = "accuracy.png"
	AccuracySVG = "accuracy.svg"
	ClippingPNG = "clipping.png"
	ClippingSVG = "clipping.svg"
)

// RunExperiment trains every run of e on data in turn, each in its own
// directory o.Out/runs/<method>/seed=<seed>, then writes results.json, the
// tables (markdown) and the figures (PNG and SVG) to o.Out. The experiment
// directory is held as a run directory is (run.OpenDir): a fresh experiment
// into one that holds an experiment is refused. With o.Resume, finished
// runs are read back rather than retrained and an interrupted run continues
// from its checkpoint (run.Reuse), on the same data only; o.Restart starts
// every run over. o.Progress, if not nil, receives progress lines.
func RunExperiment(ctx context.Context, e Experiment, data *Data, o run.Options) (*Results, error) {
	x, err := run.OpenExperiment(o, e.Check)
	if err != nil {
		return nil, err
	}
	defer x.Close()
	id := data.Identity()
	res := &Results{Experiment: e, Data: data.Dir}
	for _, m := range e.all() {
		for _, seed := range e.Seeds {
			c := m.config(e.Base, seed)
			ro := x.RunOptions(fmt.Sprintf("%s seed=%d", m.Name(), seed), m.key(), fmt.Sprintf("seed=%d", seed))
			ro.LogNorms = e.LogNorms && c.PerSample()
			s, err := run.Train[Summary](ctx, ro, c, id, func(ro RunOptions) (*Run, error) { return New(c, data, ro) })
			if err != nil {
				return nil, err
			}
			res.Runs = append(res.Runs, RunResult{Method: m, Name: m.Name(), Seed: seed, Summary: *s})
		}
	}
	res.aggregate()
	if err := x.Finish(res, map[string]string{TableMD: res.MainTable(), GridMD: res.GridTable()}); err != nil {
		return nil, err
	}
	return res, res.figures(o.Out)
}

// aggregate fills the tables from the runs.
func (r *Results) aggregate() {
	fastest := map[uint64]float64{}
	for _, run := range r.Runs {
		if slices.Contains(r.Experiment.Methods, run.Method) {
			if t, ok := fastest[run.Seed]; !ok || run.Seconds < t {
				fastest[run.Seed] = run.Seconds
			}
		}
	}
	row := func(m Method, withFastest bool) Row {
		var train, val, test, secs, atFastest, clipped, clippedSteps []float64
		for _, run := range r.Runs {
			if run.Method != m {
				continue
			}
			train = append(train, float64(run.TrainAcc))
			val = append(val, float64(run.ValAcc))
			test = append(test, float64(run.TestAcc))
			secs = append(secs, run.Seconds)
			atFastest = append(atFastest, valWithin(run.Curve, fastest[run.Seed]))
			var c, s float64
			for _, ep := range run.Curve {
				c += ep.ClippedPerBatch
				s += ep.ClippedStepFraction
			}
			clipped = append(clipped, c/float64(len(run.Curve)))
			clippedSteps = append(clippedSteps, s/float64(len(run.Curve)))
		}
		w := Row{Method: m, Name: m.Name(), N: len(val)}
		w.TrainAcc, w.TrainAccSD = stats.MeanSD(train)
		w.ValAcc, w.ValAccSD = stats.MeanSD(val)
		w.TestAcc, w.TestAccSD = stats.MeanSD(test)
		w.Seconds, w.SecondsSD = stats.MeanSD(secs)
		w.ValAtFastest, w.ValAtFastestSD = Float(math.NaN()), Float(math.NaN())
		if withFastest {
			w.ValAtFastest, w.ValAtFastestSD = stats.MeanSD(atFastest)
		}
		w.ClippedPerBatch, _ = stats.MeanSD(clipped)
		w.ClippedStepFraction, _ = stats.MeanSD(clippedSteps)
		return w
	}
	r.Table = r.Table[:0]
	for _, m := range r.Experiment.Methods {
		r.Table = append(r.Table, row(m, true))
	}
	r.Grid = r.Grid[:0]
	for _, m := range r.Experiment.grid() {
		r.Grid = append(r.Grid, row(m, false))
	}
}

// valWithin is the validation accuracy of the last epoch of curve finished
// within t seconds, NaN if none was.
func valWithin(curve []EpochRecord, t float64) float64 {
	v := math.NaN()
	for _, ep := range curve {
		if ep.Elapsed <= t {
			v = float64(ep.ValAcc)
		}
	}
	return v
}

// seedsLabel says over how many seeds the tables aggregate.
func (r *Results) seedsLabel() string {
	if n := len(r.Experiment.Seeds); n != 1 {
		return fmt.Sprintf("mean ± sd over %d seeds", n)
	}
	return "1 seed"
}

// PaperMethodNames are the paper's four methods, in the order of its
// tables: the default of "psclip experiment cifar --methods".
var PaperMethodNames = []string{"sgd", "clip-sgd", "ps-clip-sgd", "inc-ps-clip-sgd"}

// MethodNames are the names Thresholds.Method accepts: the paper's methods,
// then the parameter-free per-sample ones (estimator.PSAuto,
// estimator.Quantile, estimator.AutoClip at their default settings).
var MethodNames = append(slices.Clone(PaperMethodNames), "ps-clip-auto", "ps-clip-quantile", "auto-clip")

// Thresholds are the clipping thresholds of an experiment's methods.
type Thresholds struct {
	ClipSGD     float64 // Clip-SGD's γ
	PSClipSGD   float64 // PS-Clip-SGD's constant γ
	Alpha, Beta float64 // Increasing-PS-Clip-SGD's α·k^(1/β)
	// AutoAlpha and AutoBeta estimate Increasing-PS-Clip-SGD's α = σ̂ and
	// β = p̂ while training, overriding Alpha and Beta.
	AutoAlpha, AutoBeta bool
	// Window, TargetQuantile, QuantileRate and AutoClipR are the adaptive
	// thresholds' settings, as in Config (0: the estimator's default);
	// each goes to the methods that read it (Method.Reads).
	Window                                  int
	TargetQuantile, QuantileRate, AutoClipR float64
}

// PaperThresholds are the paper's thresholds for the full AlexNet on
// CIFAR-100: 15, 45 and α = 15, β = 2.
func PaperThresholds() Thresholds {
	return Thresholds{ClipSGD: PaperClipSGD, PSClipSGD: PaperPSClipSGD, Alpha: PaperAlpha, Beta: PaperBeta}
}

// Method returns the method spec names with its threshold. A spec is one
// of MethodNames, or "clip-sgd=γ" or "ps-clip-sgd=γ" with a threshold of
// its own, so that one experiment can compare several of them.
func (t Thresholds) Method(spec string) (Method, error) {
	name, value, hasValue := strings.Cut(spec, "=")
	var m Method
	switch name {
	case "sgd", "ps-clip-auto", "ps-clip-quantile", "auto-clip":
		m = Method{Estimator: name}
	case "clip-sgd":
		m = Method{Estimator: "clip-sgd", Clip: t.ClipSGD}
	case "ps-clip-sgd":
		m = Method{Estimator: "ps-clip-sgd", Clip: t.PSClipSGD}
	case "inc-ps-clip-sgd":
		m = Method{Estimator: "ps-clip-sgd", Alpha: t.Alpha, Beta: t.Beta, AutoAlpha: t.AutoAlpha, AutoBeta: t.AutoBeta}
	default:
		return Method{}, fmt.Errorf("unknown method %q (want one of %s, or clip-sgd=γ, ps-clip-sgd=γ)", spec, strings.Join(MethodNames, ", "))
	}
	if hasValue {
		gamma, err := strconv.ParseFloat(value, 64)
		switch {
		case name != "clip-sgd" && name != "ps-clip-sgd":
			return Method{}, fmt.Errorf("method %q: only clip-sgd and ps-clip-sgd take a threshold =γ", spec)
		case err != nil:
			return Method{}, fmt.Errorf("method %q: %q is not a number", spec, value)
		}
		m.Clip = gamma
	}
	if m.Reads("window") {
		m.Window = t.Window
	}
	if m.Reads("target-quantile") {
		m.TargetQuantile = t.TargetQuantile
	}
	if m.Reads("quantile-rate") {
		m.QuantileRate = t.QuantileRate
	}
	if m.Reads("auto-clip-r") {
		m.AutoClipR = t.AutoClipR
	}
	return m, nil
}

// ExperimentThresholds are the default thresholds of "psclip experiment
// cifar", chosen for the narrow AlexNet of ExperimentDefault, whose
// gradients are far smaller than the full model's (README.md shows the
// measurements): with them Clip-SGD clips a share of the steps and
// PS-Clip-SGD a share of the samples of every batch, as the paper's
// thresholds do for the full model.
func ExperimentThresholds() Thresholds {
	return Thresholds{ClipSGD: 3, PSClipSGD: 10, Alpha: 3, Beta: 2}
}
