package images

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/internal/jsonkeys"
	"github.com/psclip/psclip/internal/stats"
	"github.com/psclip/psclip/provenance"
	"github.com/psclip/psclip/run"
	"github.com/psclip/psclip/setting"
)

// Method is one estimator setting of an experiment: an estimator.Spec. In
// JSON its unset settings are left out, so that the methods of the paper
// keep the form of older results.
type Method struct {
	estimator.Spec
}

// MarshalJSON writes the Spec without the unset "clip", "alpha" and "beta"
// (the others are left out when unset anyway).
func (m Method) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(m.Spec)
	if err != nil {
		return nil, err
	}
	return jsonkeys.Rewrite(b, nil, "clip", "alpha", "beta")
}

// PaperAlphas and PaperBetas are the appendix's grid for the increasing
// threshold α·k^(1/β).
var (
	PaperAlphas = []float64{1, 15, 30, 45}
	PaperBetas  = []float64{1.2, 1.5, 1.8, 2.0}
)

func (m Method) config(base Config, seed uint64) Config {
	c := base.seeded(seed)
	c.Spec = m.Spec
	return c
}

// seeded is c with the seed given.
func (c Config) seeded(seed uint64) Config {
	c.Seed = seed
	return c
}

// Name is the paper's name of the method with its thresholds (its Spec's
// Label).
func (m Method) Name() string { return m.Label() }

// key names the method's directory: "sgd", "clip-sgd_gamma=15",
// "ps-clip-sgd_alpha=15_beta=2", "ps-clip-sgd_alpha=auto_beta=2_window=512",
// "ps-clip-quantile_q=0.7": every setting that differs from the default.
func (m Method) key() string {
	k := m.Estimator
	switch {
	case m.Reads("Alpha"): // the increasing threshold
		k += fmt.Sprintf("_alpha=%s_beta=%s", autoNum(m.Alpha, m.AutoAlpha), autoNum(m.Beta, m.AutoBeta))
	case m.Reads("Clip") && m.Clip != 0:
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

// autoNum is x as the directory names and tables write it: "auto" if auto.
func autoNum(x float64, auto bool) string {
	if auto {
		return "auto"
	}
	return num(x)
}

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
			g = append(g, Method{estimator.Spec{Estimator: "ps-clip-sgd", Alpha: a, Beta: b}})
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

// Check validates the experiment and every configuration in it: methods,
// seeds and grid values each listed once (a repeated one would be trained
// twice into one directory and shrink the standard deviation). Its errors
// are *setting.Error values naming the field.
func (e *Experiment) Check() error {
	for i, m := range e.Methods {
		if slices.Contains(e.Methods[:i], m) {
			return setting.Errorf("Methods", m.Name(), "each method once (it is listed twice)")
		}
	}
	if len(e.Methods) == 0 {
		return setting.Errorf("Methods", "[]", "at least one method")
	}
	if err := setting.Distinct("Seeds", e.Seeds); err != nil {
		return err
	}
	if (len(e.GridAlphas) == 0) != (len(e.GridBetas) == 0) {
		return setting.Errorf("GridAlphas", e.GridAlphas, "values exactly when the grid's β have values (%v)", e.GridBetas)
	}
	if len(e.GridBetas) > 0 {
		for _, g := range []struct {
			field string
			xs    []float64
		}{{"GridAlphas", e.GridAlphas}, {"GridBetas", e.GridBetas}} {
			if err := setting.Distinct(g.field, g.xs); err != nil {
				return err
			}
			for _, x := range g.xs {
				if err := setting.Positive32(g.field, x); err != nil {
					return err
				}
			}
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
	// TestAccVsSGD is, seed by seed in the order of Experiment.Seeds, the
	// test accuracy minus SGD's at the same seed (same initial weights and
	// batches); nil when the methods do not include SGD.
	TestAccVsSGD []Float `json:"test_acc_minus_sgd,omitempty"`
	// TestAccs, BestEpochs and BestTestAccs are, seed by seed in the
	// order of Experiment.Seeds, the final test accuracy, the epoch of
	// highest validation accuracy (early stopping on the validation split,
	// whose labels are never noisy) and the test accuracy at that epoch:
	// NaN (0 for the epoch) for a seed without a run, and the best-epoch
	// test accuracy also where the log has no per-epoch test accuracy
	// (results from before it was logged).
	TestAccs     []Float `json:"test_acc_per_seed"`
	BestEpochs   []int   `json:"best_epoch_per_seed"`
	BestTestAccs []Float `json:"best_test_acc_per_seed"`
	// BestTestAcc is the mean and sd over seeds of BestTestAccs.
	BestTestAcc   Float `json:"best_test_acc_mean"`
	BestTestAccSD Float `json:"best_test_acc_sd"`
	// Paired compares the method with SGD seed by seed; nil for SGD itself
	// and when the methods do not include SGD.
	Paired *VersusSGD `json:"paired,omitempty"`
	// TailIndex is the mean over seeds of the last epoch's tail index p̂
	// of the per-sample norms; null for estimators without them.
	TailIndex Float `json:"tail_index_mean"`
	// Detection averages over seeds the last epoch's clipping-as-detector
	// statistics of the runs with label noise and a per-sample estimator:
	// precision, recall and noisy share, and the mean per-sample norm of
	// clean and mislabelled samples; nil otherwise.
	Detection *Detection `json:"detection,omitempty"`
}

// VersusSGD is a method's paired comparison with SGD over the seeds
// (stats.Pair: at a seed both start from the same weights and see the same
// batches and the same noisy labels), on the final test accuracy and on the
// test accuracy at the epoch of best validation accuracy. Differences are
// fractions, as the accuracies are.
type VersusSGD struct {
	TestAcc     stats.Paired `json:"test_acc"`
	BestTestAcc stats.Paired `json:"best_test_acc"`
}

// Results is the content of results.json.
type Results struct {
	// Provenance says which command gathered the runs and how the runs
	// were made (run.Experiment.Provenance); absent from results written
	// before it was recorded.
	Provenance *provenance.Record `json:"provenance,omitempty"`
	Experiment Experiment         `json:"experiment"`
	Data       string             `json:"data"`
	Runs       []RunResult        `json:"runs"`
	// Table has a row per method of Experiment.Methods; Grid a row per
	// grid point.
	Table []Row `json:"table"`
	Grid  []Row `json:"grid"`
}

// Output files of an experiment, in its directory.
const (
	TableMD    = "table.md"
	ClippingMD = "clipping.md"
	GridMD     = "grid.md"
	// AugmentMD is per-sample clipping by AutoAugment operation
	// (AugmentTable), written when a run logged it.
	AugmentMD   = "augment.md"
	AccuracyPNG = "accuracy.png"
	AccuracySVG = "accuracy.svg"
	ClippingPNG = "clipping.png"
	ClippingSVG = "clipping.svg"
	// DetectionPNG and DetectionSVG show, with label noise, clipping as a
	// detector of the mislabelled samples, epoch by epoch.
	DetectionPNG = "detection.png"
	DetectionSVG = "detection.svg"
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
	if err := e.Check(); err != nil {
		return nil, err
	}
	// Every run's data (its split, subset and label noise) is checked
	// before the directory is opened.
	ids := map[uint64]run.Data{}
	for _, seed := range e.Seeds {
		id, err := data.Identity(e.Base.seeded(seed))
		if err != nil {
			return nil, err
		}
		ids[seed] = id
	}
	o.Kind = Kind + " experiment" // a directory holds one kind of run
	x, err := run.OpenExperiment(o, e, e.Check)
	if err != nil {
		return nil, err
	}
	defer x.Close()
	res := &Results{Experiment: e, Data: data.Dir}
	for _, m := range e.all() {
		for _, seed := range e.Seeds {
			c, id := m.config(e.Base, seed), ids[seed]
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
	rec := x.Provenance(runRecords(res.Runs)...)
	res.Provenance = &rec
	if err := x.Finish(res, res.tables()); err != nil {
		return nil, err
	}
	return res, res.figures(o.Out)
}

// runRecords are the runs' provenance records, in order.
func runRecords(runs []RunResult) []provenance.Record {
	recs := make([]provenance.Record, len(runs))
	for i, r := range runs {
		recs[i] = r.Provenance
	}
	return recs
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
		r.lastEpoch(&w)
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

// sgdMethod is the reference of the paired comparisons.
var sgdMethod = Method{estimator.Spec{Estimator: "sgd"}}

// lastEpoch fills w's per-seed values, its comparison with SGD, tail index
// and detection statistics from the runs of its method.
func (r *Results) lastEpoch(w *Row) {
	var tails, test, best, sgdTest, sgdBest []float64
	var det []*Detection
	hasSGD := false
	w.TestAccs, w.BestEpochs, w.BestTestAccs, w.TestAccVsSGD = nil, nil, nil, nil
	for _, seed := range r.Experiment.Seeds {
		this, sgd := r.run(w.Method, seed), r.run(sgdMethod, seed)
		t, b, e := math.NaN(), math.NaN(), 0
		if this != nil {
			t = float64(this.TestAcc)
			e, b = this.bestEpoch()
		}
		test, best = append(test, t), append(best, b)
		w.TestAccs, w.BestTestAccs, w.BestEpochs = append(w.TestAccs, Float(t)), append(w.BestTestAccs, Float(b)), append(w.BestEpochs, e)
		st, sb := math.NaN(), math.NaN()
		if sgd != nil {
			hasSGD = true
			st = float64(sgd.TestAcc)
			_, sb = sgd.bestEpoch()
		}
		sgdTest, sgdBest = append(sgdTest, st), append(sgdBest, sb)
		if this == nil || len(this.Curve) == 0 {
			continue
		}
		if sgd != nil {
			w.TestAccVsSGD = append(w.TestAccVsSGD, this.TestAcc-sgd.TestAcc)
		}
		last := this.Curve[len(this.Curve)-1]
		tails = append(tails, float64(last.TailIndex))
		if last.Detection != nil {
			det = append(det, last.Detection)
		}
	}
	w.BestTestAcc, w.BestTestAccSD = stats.MeanSD(finiteOnly(best))
	w.Paired = nil
	if hasSGD && w.Method != sgdMethod {
		// Both slices have one value per seed, so Pair cannot fail.
		pt, _ := stats.Pair(test, sgdTest)
		pb, _ := stats.Pair(best, sgdBest)
		w.Paired = &VersusSGD{TestAcc: pt, BestTestAcc: pb}
	}
	w.TailIndex, _ = stats.MeanSD(tails)
	if len(det) == 0 {
		return
	}
	mean := func(get func(*Detection) Float) Float {
		xs := make([]float64, len(det))
		for i, d := range det {
			xs[i] = float64(get(d))
		}
		m, _ := stats.MeanSD(xs)
		return m
	}
	w.Detection = &Detection{
		Precision:     mean(func(d *Detection) Float { return d.Precision }),
		Recall:        mean(func(d *Detection) Float { return d.Recall }),
		NoisyShare:    mean(func(d *Detection) Float { return d.NoisyShare }),
		MeanNormClean: mean(func(d *Detection) Float { return d.MeanNormClean }),
		MeanNormNoisy: mean(func(d *Detection) Float { return d.MeanNormNoisy }),
	}
}

// run returns the run of method m at seed, nil if there is none.
func (r *Results) run(m Method, seed uint64) *RunResult {
	for i, run := range r.Runs {
		if run.Seed == seed && run.Method == m {
			return &r.Runs[i]
		}
	}
	return nil
}

// bestEpoch returns the epoch (1-based) of the run's highest validation
// accuracy, the first of equals, and the test accuracy the model had at its
// end; 0 and NaN when no epoch has a finite validation accuracy. The test
// accuracy is NaN where the log did not record one per epoch.
func (run *RunResult) bestEpoch() (int, float64) {
	top := -1
	for i, ep := range run.Curve {
		if v := float64(ep.ValAcc); finite(v) && (top < 0 || v > float64(run.Curve[top].ValAcc)) {
			top = i
		}
	}
	if top < 0 {
		return 0, math.NaN()
	}
	return run.Curve[top].Epoch, float64(run.Curve[top].TestAcc)
}

// finiteOnly returns the finite values of xs.
func finiteOnly(xs []float64) []float64 {
	var f []float64
	for _, x := range xs {
		if finite(x) {
			f = append(f, x)
		}
	}
	return f
}

// valWithin is the validation accuracy of the last evaluated epoch of
// curve finished within t seconds, NaN if none was.
func valWithin(curve []EpochRecord, t float64) float64 {
	v := math.NaN()
	for _, ep := range curve {
		if ep.Elapsed <= t && finite(float64(ep.ValAcc)) {
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
// tables: the default methods of the experiment command.
var PaperMethodNames = []string{"sgd", "clip-sgd", "ps-clip-sgd", "inc-ps-clip-sgd"}

// MethodNames are the names Thresholds.Method accepts: the paper's methods,
// then the parameter-free per-sample ones (estimator.PSAuto,
// estimator.Quantile, estimator.AutoClip at their default settings).
var MethodNames = append(slices.Clone(PaperMethodNames), "ps-clip-auto", "ps-clip-quantile", "auto-clip")

// Thresholds are the settings of an experiment's methods.
type Thresholds struct {
	ClipSGD   float64 // Clip-SGD's γ
	PSClipSGD float64 // PS-Clip-SGD's constant γ
	// Spec holds the settings of the other methods, each of which takes
	// those it reads: Increasing-PS-Clip-SGD's Alpha and Beta (or
	// AutoAlpha, AutoBeta), and the adaptive thresholds' Window,
	// TargetQuantile, QuantileRate and AutoClipR (0: the estimator's
	// default). Its Estimator and Clip are unset.
	estimator.Spec
}

// PaperThresholds are the paper's thresholds for the full AlexNet on
// CIFAR-100: 15, 45 and α = 15, β = 2.
func PaperThresholds() Thresholds {
	return Thresholds{ClipSGD: PaperClipSGD, PSClipSGD: PaperPSClipSGD, Spec: estimator.Spec{Alpha: PaperAlpha, Beta: PaperBeta}}
}

// Validate checks the thresholds as the methods use them: ClipSGD and
// PSClipSGD as constant thresholds, Alpha and Beta (or their automatic
// forms) as the increasing one α·k^(1/β), which needs a β. Its errors are
// *setting.Error values naming the field of Thresholds.
func (t Thresholds) Validate() error {
	if t.Beta == 0 && !t.AutoBeta {
		return setting.Errorf("Beta", t.Beta, "a positive normal float32 or automatic: the increasing threshold needs a β")
	}
	for _, c := range []struct {
		field string // the field of Thresholds that is the spec's Clip
		spec  estimator.Spec
	}{
		{"ClipSGD", estimator.Spec{Estimator: "clip-sgd", Clip: t.ClipSGD}},
		{"PSClipSGD", estimator.Spec{Estimator: "ps-clip-sgd", Clip: t.PSClipSGD}},
		{"", estimator.Spec{Estimator: "ps-clip-sgd", Alpha: t.Alpha, AutoAlpha: t.AutoAlpha, Beta: t.Beta, AutoBeta: t.AutoBeta}},
	} {
		var se *setting.Error
		if err := c.spec.Validate(); errors.As(err, &se) && se.Field == "Clip" {
			return &setting.Error{Field: c.field, Value: se.Value, Want: se.Want}
		} else if err != nil {
			return err
		}
	}
	return nil
}

// Method returns the method spec names with its settings. A spec is one of
// MethodNames, or "clip-sgd=γ" or "ps-clip-sgd=γ" with a threshold of its
// own, so that one experiment can compare several of them. Errors name the
// field "Methods".
func (t Thresholds) Method(spec string) (Method, error) {
	name, value, hasValue := strings.Cut(spec, "=")
	s := t.Spec
	switch name {
	case "sgd", "ps-clip-auto", "ps-clip-quantile", "auto-clip":
		s.Estimator = name
	case "clip-sgd":
		s = estimator.Spec{Estimator: "clip-sgd", Clip: t.ClipSGD}
	case "ps-clip-sgd":
		s = estimator.Spec{Estimator: "ps-clip-sgd", Clip: t.PSClipSGD}
	case "inc-ps-clip-sgd":
		s.Estimator, s.Clip = "ps-clip-sgd", 0
	default:
		return Method{}, setting.Errorf("Methods", strconv.Quote(spec), "one of %s, or clip-sgd=γ, ps-clip-sgd=γ", strings.Join(MethodNames, ", "))
	}
	if hasValue {
		gamma, err := strconv.ParseFloat(value, 64)
		switch {
		case name != "clip-sgd" && name != "ps-clip-sgd":
			return Method{}, setting.Errorf("Methods", strconv.Quote(spec), "a threshold =γ only after clip-sgd or ps-clip-sgd")
		case err != nil:
			return Method{}, setting.Errorf("Methods", strconv.Quote(spec), "a number after =")
		}
		s.Clip = gamma
	}
	return Method{s.Trim()}, nil
}

// ExperimentThresholds are the default thresholds of "psclip experiment
// cifar", chosen for the narrow AlexNet of ExperimentDefault, whose
// gradients are far smaller than the full model's (README.md shows the
// measurements): with them Clip-SGD clips a share of the steps and
// PS-Clip-SGD a share of the samples of every batch, as the paper's
// thresholds do for the full model.
func ExperimentThresholds() Thresholds {
	return Thresholds{ClipSGD: 3, PSClipSGD: 10, Spec: estimator.Spec{Alpha: 3, Beta: 2}}
}

// ImagesThresholds are the default thresholds of "psclip experiment
// images" and "psclip train images": the best validation accuracy of a
// small grid for SmallCNN on 10,000 Fashion-MNIST images with 40 % label
// noise, 3 epochs (README.md).
func ImagesThresholds() Thresholds {
	return Thresholds{ClipSGD: 2, PSClipSGD: 10, Spec: estimator.Spec{Alpha: 2, Beta: 2}}
}
