package images

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/psclip/psclip/checkpoint"
	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/run"
	"github.com/psclip/psclip/setting"
)

// TestExperimentEndToEnd runs the four methods and a two-point grid (one
// point shared with the main methods, so trained once) over two seeds on a
// tiny data set, then resumes the finished experiment, which must read the
// runs back rather than retrain them.
func TestExperimentEndToEnd(t *testing.T) {
	d := testData(t)
	base := tinyConfig("sgd")
	base.Epochs, base.Augment = 1, "none"
	th := Thresholds{ClipSGD: 1, PSClipSGD: 2, Spec: estimator.Spec{Alpha: 1, Beta: 2}}
	e := Experiment{Base: base, GridAlphas: []float64{1}, GridBetas: []float64{1.5, 2}, Seeds: []uint64{1, 2}}
	for _, name := range PaperMethodNames {
		m, err := th.Method(name)
		if err != nil {
			t.Fatal(err)
		}
		e.Methods = append(e.Methods, m)
	}
	dir := t.TempDir()
	res, err := RunExperiment(context.Background(), e, d, RunOptions{Out: dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 5*2 || len(res.Table) != 4 || len(res.Grid) != 2 {
		t.Fatalf("%d runs, %d table rows, %d grid rows; want 10, 4, 2", len(res.Runs), len(res.Table), len(res.Grid))
	}
	for _, f := range []string{run.ResultsFile, TableMD, GridMD, AccuracyPNG, AccuracySVG, ClippingPNG, ClippingSVG,
		"runs/sgd/seed=1/result.json", "runs/ps-clip-sgd_alpha=1_beta=1.5/seed=2/log.jsonl"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, AugmentMD)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s without AutoAugment: %v", AugmentMD, err)
	}
	if res.Grid[1].ValAcc != res.Table[3].ValAcc {
		t.Errorf("grid point α=1 β=2 has val acc %v, the same method in the table %v", res.Grid[1].ValAcc, res.Table[3].ValAcc)
	}
	for _, want := range []string{"SGD", "Clip-SGD γ=1", "PS-Clip-SGD γ=2", "Increasing-PS-Clip-SGD α=1 β=2", "±"} {
		if !strings.Contains(res.MainTable(), want) {
			t.Errorf("main table lacks %q:\n%s", want, res.MainTable())
		}
	}
	if g := res.GridTable(); strings.Count(g, "\n") != 2+3+2 || !strings.Contains(g, "| Increasing-PS-Clip-SGD | – | 1 | 1.5 |") {
		t.Errorf("grid table: want 3 constant-threshold rows and 2 grid rows:\n%s", g)
	}
	// A resumed experiment reads every finished run back: a retrained run
	// would report another wall time.
	again, err := RunExperiment(context.Background(), e, d, RunOptions{Out: dir, Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range res.Runs {
		if again.Runs[i].Seconds != res.Runs[i].Seconds {
			t.Fatalf("run %d was retrained on resume", i)
		}
	}
}

// TestAggregate checks the table against hand-computed means, standard
// deviations and the accuracy within the fastest method's time.
func TestAggregate(t *testing.T) {
	sgd, ps := Method{estimator.Spec{Estimator: "sgd"}}, Method{estimator.Spec{Estimator: "ps-clip-sgd", Clip: 3}}
	curve := func(elapsed ...float64) []EpochRecord {
		var c []EpochRecord
		for i, e := range elapsed {
			c = append(c, EpochRecord{Epoch: i + 1, Elapsed: e, ValAcc: Float(0.1 * float64(i+1)), ClippedPerBatch: float64(i)})
		}
		return c
	}
	res := Results{
		Experiment: Experiment{Methods: []Method{sgd, ps}, Seeds: []uint64{1, 2}},
		Runs: []RunResult{
			{Method: sgd, Seed: 1, Summary: Summary{ValAcc: 0.5, TestAcc: 0.4, Summary: run.Summary{Seconds: 10}, Curve: curve(5, 10)}},
			{Method: sgd, Seed: 2, Summary: Summary{ValAcc: 0.7, TestAcc: 0.4, Summary: run.Summary{Seconds: 30}, Curve: curve(15, 30)}},
			{Method: ps, Seed: 1, Summary: Summary{ValAcc: 0.6, TestAcc: 0.5, Summary: run.Summary{Seconds: 16}, Curve: curve(8, 16)}},
			{Method: ps, Seed: 2, Summary: Summary{ValAcc: 0.8, TestAcc: 0.5, Summary: run.Summary{Seconds: 20}, Curve: curve(10, 20)}},
		},
	}
	res.aggregate()
	near := func(what string, got Float, want float64) {
		t.Helper()
		if math.Abs(float64(got)-want) > 1e-12 {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	sgdRow, psRow := res.Table[0], res.Table[1]
	near("sgd val mean", sgdRow.ValAcc, 0.6)
	near("sgd val sd", sgdRow.ValAccSD, math.Sqrt(0.02)) // (0.1² + 0.1²)/1
	near("sgd test sd", sgdRow.TestAccSD, 0)
	near("sgd time", sgdRow.Seconds, 20)
	// Seed 1: the fastest run took 10 s; SGD finished both epochs (0.2),
	// PS-Clip-SGD only its first (0.1). Seed 2: the fastest took 20 s;
	// SGD had finished its first epoch (0.1), PS-Clip-SGD both (0.2).
	near("sgd within fastest", sgdRow.ValAtFastest, 0.15)
	near("ps within fastest", psRow.ValAtFastest, 0.15)
	near("ps within fastest sd", psRow.ValAtFastestSD, math.Sqrt(0.01/2))
	near("ps clipped per batch", psRow.ClippedPerBatch, 0.5)
}

func TestExperimentCheck(t *testing.T) {
	good := func() Experiment {
		return Experiment{Base: ExperimentDefault(), Methods: []Method{{estimator.Spec{Estimator: "sgd"}}}, Seeds: []uint64{1}}
	}
	for _, tc := range []struct {
		edit func(*Experiment)
		want string
	}{
		{func(e *Experiment) { e.Methods = nil }, "Methods = [], want at least one method"},
		{func(e *Experiment) { e.Seeds = nil }, "Seeds = [], want at least one value"},
		{func(e *Experiment) { e.Seeds = []uint64{1, 1} }, "Seeds = 1, want each value once"},
		{func(e *Experiment) { e.Methods = append(e.Methods, e.Methods[0]) }, "Methods = SGD, want each method once"},
		{func(e *Experiment) { e.GridBetas = []float64{2} }, "GridAlphas"},
		{func(e *Experiment) { e.GridAlphas, e.GridBetas = []float64{1}, []float64{0} }, "GridBetas = 0"},
		{func(e *Experiment) { e.GridAlphas, e.GridBetas = []float64{1}, []float64{2, 2} }, "GridBetas = 2, want each value once"},
		{func(e *Experiment) { e.GridAlphas, e.GridBetas = []float64{-1}, []float64{2} }, "GridAlphas = -1"},
		{func(e *Experiment) { e.Methods = append(e.Methods, Method{estimator.Spec{Estimator: "clip-sgd"}}) }, "Clip = 0"},
		{func(e *Experiment) { e.Base.Epochs = 0 }, "Epochs = 0"},
	} {
		e := good()
		tc.edit(&e)
		if err := e.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Check() = %v, want an error containing %q", err, tc.want)
		}
	}
	e := good()
	if err := e.Check(); err != nil {
		t.Errorf("good experiment: %v", err)
	}
}

// Validate refuses, with a *setting.Error naming the field, values out of
// range in float32 and estimator settings the estimator does not read.
func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		edit func(*Config)
		want string // "" for a valid configuration
	}{
		{func(c *Config) {}, ""},
		{func(c *Config) { c.Estimator, c.Clip = "sgd", 0 }, ""},
		{func(c *Config) { c.Clip, c.Alpha, c.Beta = 0, 15, 2 }, ""},
		{func(c *Config) { c.Estimator = "adam" }, "Estimator"},
		{func(c *Config) { c.Clip = 0 }, "Clip = 0"},
		{func(c *Config) { c.Estimator, c.Clip = "clip-sgd", -1 }, "Clip = -1"},
		{func(c *Config) { c.Clip = math.NaN() }, "Clip = NaN"},
		{func(c *Config) { c.Clip = 1e39 }, "Clip = 1e+39"},
		{func(c *Config) { c.Clip, c.Alpha, c.Beta = 0, 15, -2 }, "Beta = -2"},
		{func(c *Config) { c.Clip, c.Alpha, c.Beta = 0, 0, 2 }, "Alpha = 0"},
		{func(c *Config) { c.Alpha = 3 }, "Alpha = 3, want unset"},
		{func(c *Config) { c.Estimator, c.Alpha, c.Beta = "clip-sgd", 1, 2 }, "Alpha = 1, want unset"},
		// Issue 13: a setting the estimator does not read is refused.
		{func(c *Config) { c.Estimator = "sgd" }, "Clip = 45, want unset"},
		{func(c *Config) { c.Estimator = "ps-clip-auto" }, "Clip = 45, want unset"},
		{func(c *Config) { c.Batch = 0 }, "Batch"},
		{func(c *Config) { c.Epochs = 0 }, "Epochs"},
		{func(c *Config) { c.WidthDiv = 0 }, "WidthDiv"},
		{func(c *Config) { c.LR = 0 }, "LR = 0"},
		// Issue 13: the learning rate is a positive normal float32.
		{func(c *Config) { c.LR = 1e39 }, "LR = 1e+39"},
		{func(c *Config) { c.LR = 1e-320 }, "LR = 1e-320"},
		{func(c *Config) { c.Momentum = 1 }, "Momentum"},
		{func(c *Config) { c.WeightDecay = -1 }, "WeightDecay"},
		{func(c *Config) { c.WeightDecay = 1e-40 }, "WeightDecay"},
		{func(c *Config) { c.Dropout = 1 }, "Dropout"},
		{func(c *Config) { c.Augment = "mixup" }, "Augment"},
		{func(c *Config) { c.MaxBadSteps = -1 }, "MaxBadSteps"},
		{func(c *Config) { c.Model, c.Dropout, c.Normalize = ModelTanhCNN, 0, NormalizeNone }, ""},
		{func(c *Config) { c.Normalize = NormalizeNone }, ""},
		{func(c *Config) { c.Model, c.Dropout = ModelTanhCNN, 0 }, `Normalize = "channel", want none`},
		{func(c *Config) { c.Model, c.Normalize = ModelTanhCNN, NormalizeNone }, "Dropout = 0.5"},
		{func(c *Config) { c.Model, c.Dropout, c.Normalize, c.WidthDiv = ModelTanhCNN, 0, NormalizeNone, 2 }, "WidthDiv = 2"},
		{func(c *Config) { c.Normalize = NormalizeChannel }, `Normalize = "channel"`},
		{func(c *Config) { c.Model = "lenet" }, "Model"},
		{func(c *Config) { c.Clip, c.AutoAlpha, c.AutoBeta = 0, true, true }, ""},
		{func(c *Config) { c.Clip, c.AutoAlpha, c.Beta = 0, true, 2 }, ""},
		{func(c *Config) { c.Clip, c.Alpha, c.AutoBeta, c.Window = 0, 15, true, 512 }, ""},
		{func(c *Config) { c.Estimator, c.Clip = "ps-clip-auto", 0 }, ""},
		{func(c *Config) {
			c.Estimator, c.Clip, c.TargetQuantile, c.QuantileRate = "ps-clip-quantile", 0, 0.7, 0.1
		}, ""},
		{func(c *Config) { c.Estimator, c.Clip, c.AutoClipR = "auto-clip", 0, 0.1 }, ""},
		{func(c *Config) { c.AutoAlpha = true }, "AutoAlpha = true, want unset"},
		{func(c *Config) { c.Clip, c.AutoBeta = 0, true }, "Alpha = 0"},
		{func(c *Config) { c.Estimator, c.Clip, c.AutoAlpha, c.AutoBeta = "ps-clip-auto", 0, true, true }, "AutoAlpha = true, want unset"},
		{func(c *Config) { c.Window = 512 }, "Window = 512, want unset"},
		{func(c *Config) { c.Clip, c.AutoAlpha, c.AutoBeta, c.Window = 0, true, true, 100 }, "Window = 100"},
		{func(c *Config) { c.TargetQuantile = 0.5 }, "TargetQuantile = 0.5, want unset"},
		{func(c *Config) { c.Estimator, c.Clip = "ps-clip-quantile", -1 }, "Clip = -1"},
		{func(c *Config) { c.Estimator, c.TargetQuantile = "ps-clip-quantile", 1 }, "TargetQuantile = 1"},
		{func(c *Config) { c.Estimator, c.QuantileRate = "ps-clip-quantile", -1 }, "QuantileRate = -1"},
		{func(c *Config) { c.Estimator, c.Clip, c.QuantileRate = "auto-clip", 0, 1 }, "QuantileRate = 1, want unset"},
		{func(c *Config) { c.Estimator, c.Clip, c.AutoClipR = "auto-clip", 0, -1 }, "AutoClipR = -1"},
	} {
		c := Default()
		tc.edit(&c)
		err := c.Validate()
		var se *setting.Error
		if (tc.want == "") != (err == nil) || (err != nil && (!strings.Contains(err.Error(), tc.want) || !errors.As(err, &se))) {
			t.Errorf("%+v: Validate() = %v, want %q", c, err, tc.want)
		}
	}
}

func TestMethodNames(t *testing.T) {
	th := Thresholds{ClipSGD: 3, PSClipSGD: 10, Spec: estimator.Spec{Alpha: 3, Beta: 2}}
	adaptive := Thresholds{ClipSGD: 3, PSClipSGD: 10, Spec: estimator.Spec{AutoAlpha: true, AutoBeta: true,
		Window: 512, TargetQuantile: 0.7, QuantileRate: 0.1, AutoClipR: 0.2}}
	for _, tc := range []struct {
		spec, name, key string
	}{
		{"sgd", "SGD", "sgd"},
		{"clip-sgd", "Clip-SGD γ=3", "clip-sgd_gamma=3"},
		{"clip-sgd=5", "Clip-SGD γ=5", "clip-sgd_gamma=5"},
		{"ps-clip-sgd", "PS-Clip-SGD γ=10", "ps-clip-sgd_gamma=10"},
		{"ps-clip-sgd=40", "PS-Clip-SGD γ=40", "ps-clip-sgd_gamma=40"},
		{"inc-ps-clip-sgd", "Increasing-PS-Clip-SGD α=3 β=2", "ps-clip-sgd_alpha=3_beta=2"},
		{"ps-clip-auto", "Auto-PS-Clip-SGD", "ps-clip-auto"},
		{"ps-clip-quantile", "Quantile-PS-Clip-SGD q=0.5", "ps-clip-quantile"},
		{"auto-clip", "Auto-Clip r=0.01", "auto-clip"},
	} {
		m, err := th.Method(tc.spec)
		if err != nil || m.Name() != tc.name || m.key() != tc.key {
			t.Errorf("Method(%q) = %q, key %q, %v; want %q, %q", tc.spec, m.Name(), m.key(), err, tc.name, tc.key)
		}
	}
	for _, spec := range []string{"adam", "sgd=3", "inc-ps-clip-sgd=3", "ps-clip-sgd=x"} {
		if _, err := th.Method(spec); err == nil || !strings.Contains(err.Error(), spec) {
			t.Errorf("Method(%q): %v, want an error naming it", spec, err)
		}
	}
	// The adaptive thresholds' settings go to the methods that read them
	// and name their directories.
	for _, tc := range []struct {
		th              Thresholds
		spec, name, key string
	}{
		{adaptive, "inc-ps-clip-sgd", "Increasing-PS-Clip-SGD α=auto β=auto window=512", "ps-clip-sgd_alpha=auto_beta=auto_window=512"},
		{adaptive, "ps-clip-auto", "Auto-PS-Clip-SGD window=512", "ps-clip-auto_window=512"},
		{adaptive, "ps-clip-quantile", "Quantile-PS-Clip-SGD q=0.7 rate=0.1", "ps-clip-quantile_q=0.7_rate=0.1"},
		{adaptive, "auto-clip", "Auto-Clip r=0.2", "auto-clip_r=0.2"},
		{adaptive, "sgd", "SGD", "sgd"},
		{adaptive, "ps-clip-sgd", "PS-Clip-SGD γ=10", "ps-clip-sgd_gamma=10"},
		{Thresholds{Spec: estimator.Spec{Alpha: 3, AutoBeta: true}}, "inc-ps-clip-sgd", "Increasing-PS-Clip-SGD α=3 β=auto", "ps-clip-sgd_alpha=3_beta=auto"},
		{Thresholds{Spec: estimator.Spec{Alpha: 3, Beta: 2, Window: 512}}, "inc-ps-clip-sgd", "Increasing-PS-Clip-SGD α=3 β=2", "ps-clip-sgd_alpha=3_beta=2"},
	} {
		m, err := tc.th.Method(tc.spec)
		if err != nil || m.Name() != tc.name || m.key() != tc.key {
			t.Errorf("%+v.Method(%q) = %q, key %q, %v; want %q, %q", tc.th, tc.spec, m.Name(), m.key(), err, tc.name, tc.key)
		}
		c := m.config(Default(), 1)
		if err := c.Validate(); err != nil {
			t.Errorf("%+v.Method(%q): %v", tc.th, tc.spec, err)
		}
	}
	// The paper's methods keep the results.json form of older experiments.
	for spec, want := range map[string]string{
		"inc-ps-clip-sgd": `{"estimator":"ps-clip-sgd","alpha":3,"beta":2}`,
		"ps-clip-auto":    `{"estimator":"ps-clip-auto"}`,
	} {
		m, _ := th.Method(spec)
		if b, err := json.Marshal(m); string(b) != want || err != nil {
			t.Errorf("Method(%q) as JSON: %s, %v; want %s", spec, b, err, want)
		}
	}
	// The automatic thresholds of train cifar's flags.
	for _, tc := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.Clip, c.AutoAlpha, c.AutoBeta = 0, true, true }, "Increasing-PS-Clip-SGD α=auto β=auto"},
		{func(c *Config) { c.Alpha, c.AutoBeta, c.Window = 15, true, 512 }, "Increasing-PS-Clip-SGD α=15 β=auto window=512"},
		{func(c *Config) {
			c.Estimator, c.Clip, c.TargetQuantile, c.QuantileRate = "ps-clip-quantile", 4, 0.7, 0.1
		}, "Quantile-PS-Clip-SGD q=0.7 rate=0.1 γ0=4"},
	} {
		c := Default()
		tc.edit(&c)
		if got := c.Label(); got != tc.want {
			t.Errorf("Label() = %q, want %q", got, tc.want)
		}
	}
}

// TestIncreasingAuto checks that Increasing-PS-Clip-SGD with automatic α
// and β trains with the threshold estimated from the norms: it is
// Auto-PS-Clip-SGD's rule, so the runs match bit for bit; it is not the
// fixed threshold's; and the p̂ and σ̂ it logs are Hill's estimate and the
// moment of the last Window norms the run logged, recomputed here by
// sorting. With α automatic and β = 2, σ̂ is the norms' quadratic mean.
func TestIncreasingAuto(t *testing.T) {
	d := testData(t)
	base := tinyConfig("sgd") // 24 steps of 16: the window of 256 fills at step 16
	const window = 256
	var methods []Method
	for _, m := range []struct {
		th   Thresholds
		spec string
	}{
		{Thresholds{Spec: estimator.Spec{AutoAlpha: true, AutoBeta: true, Window: window}}, "inc-ps-clip-sgd"},
		{Thresholds{Spec: estimator.Spec{Window: window}}, "ps-clip-auto"},
		{Thresholds{Spec: estimator.Spec{AutoAlpha: true, Beta: 2, Window: window}}, "inc-ps-clip-sgd"},
		{Thresholds{Spec: estimator.Spec{Alpha: 1, Beta: 2}}, "inc-ps-clip-sgd"},
	} {
		mm, err := m.th.Method(m.spec)
		if err != nil {
			t.Fatal(err)
		}
		methods = append(methods, mm)
	}
	dir := t.TempDir()
	e := Experiment{Base: base, Methods: methods, Seeds: []uint64{1}, LogNorms: true}
	res, err := RunExperiment(context.Background(), e, d, RunOptions{Out: dir})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Table[0].Name; got != "Increasing-PS-Clip-SGD α=auto β=auto window=256" {
		t.Errorf("table names the automatic method %q", got)
	}
	stats := func(r RunResult) string {
		var b strings.Builder
		for _, ep := range r.Curve {
			fmt.Fprintf(&b, "%v %v %v %v %v %v\n", ep.TrainLoss, ep.ValAcc, ep.PHat, ep.SigmaHat, ep.ClippedPerBatch, ep.MeanSampleNorm)
		}
		return b.String()
	}
	auto, psAuto, alphaAuto, fixed := res.Runs[0], res.Runs[1], res.Runs[2], res.Runs[3]
	if stats(auto) != stats(psAuto) || auto.TestAcc != psAuto.TestAcc {
		t.Errorf("α=auto β=auto and ps-clip-auto differ:\n%s\n%s", stats(auto), stats(psAuto))
	}
	if last := len(fixed.Curve) - 1; fixed.Curve[last].TrainLoss == auto.Curve[last].TrainLoss || !math.IsNaN(float64(fixed.Curve[last].PHat)) {
		t.Errorf("the fixed threshold α=1 β=2 trained as the automatic one:\n%s\n%s", stats(fixed), stats(auto))
	}
	for _, tc := range []struct {
		run  RunResult
		beta float64 // 0: p̂ clamped to [1.05, 2]
	}{{auto, 0}, {alphaAuto, 2}} {
		norms := loggedNorms(t, filepath.Join(dir, run.RunsDir, tc.run.Method.key(), "seed=1", run.LogFile))
		if len(norms) < window {
			t.Fatalf("%s: %d norms logged", tc.run.Name, len(norms))
		}
		norms = norms[len(norms)-window:]
		ep := tc.run.Curve[len(tc.run.Curve)-1]
		// Hill's estimator on the k = ⌈√256⌉ = 16 largest norms.
		sorted := slices.Clone(norms)
		slices.Sort(sorted)
		slices.Reverse(sorted)
		const k = 16
		var sum float64
		for _, x := range sorted[:k] {
			sum += math.Log(x / sorted[k])
		}
		p := (k - 1) / sum
		beta := tc.beta
		if beta == 0 {
			beta = min(max(p, 1.05), 2)
		}
		var m float64
		for _, x := range norms {
			m += math.Pow(x, beta)
		}
		sigma := math.Pow(m/window, 1/beta)
		if rel(float64(ep.PHat), p) > 1e-12 || rel(float64(ep.SigmaHat), sigma) > 1e-12 {
			t.Errorf("%s: logged p̂ = %v, σ̂ = %v; from the logged norms %v, %v", tc.run.Name, ep.PHat, ep.SigmaHat, p, sigma)
		}
	}
}

// loggedNorms returns the finite per-sample norms a run's log holds, in
// order.
func loggedNorms(t *testing.T, path string) []float64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var norms []float64
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r normsRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		for _, x := range r.SampleNorms {
			if finite(float64(x)) {
				norms = append(norms, float64(x))
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return norms
}

func rel(got, want float64) float64 { return math.Abs(got-want) / math.Abs(want) }

// Checkpoints of runs made before Config embedded estimator.Spec resume: an
// increasing threshold's run kept the paper's constant γ = 45 in its
// configuration map, which today's run, reading no γ, leaves unset
// (Config.Unread); a setting that changed is still refused.
func TestOlderCheckpointConfigs(t *testing.T) {
	const before = `{"estimator":"ps-clip-sgd","clip":45,"alpha":15,"beta":2,"lr":0.01,"momentum":0.9,"weight_decay":0.0001,"batch":64,"epochs":300,"width_div":1,"dropout":0.5,"augment":"autoaugment","seed":1,"max_bad_steps":10}`
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(before), &raw); err != nil {
		t.Fatal(err)
	}
	old := map[string]string{}
	for k, v := range raw {
		old[k] = string(v)
	}
	c := Default()
	c.Spec = estimator.Spec{Estimator: "ps-clip-sgd", Alpha: 15, Beta: 2}
	meta := checkpoint.Meta{Config: old}
	if err := meta.CheckConfig(run.ConfigMap(c), append(estimator.Keys(c.Unread()), mayDiffer...)...); err != nil {
		t.Error(err)
	}
	c.Beta = 1.5
	if err := meta.CheckConfig(run.ConfigMap(c), append(estimator.Keys(c.Unread()), mayDiffer...)...); err == nil {
		t.Error("another β resumed")
	}
}

// Thresholds.Validate names the field of Thresholds at fault.
func TestThresholdsValidate(t *testing.T) {
	for _, tc := range []struct {
		th    Thresholds
		field string // "": valid
	}{
		{ExperimentThresholds(), ""},
		{Thresholds{ClipSGD: 1, PSClipSGD: 2, Spec: estimator.Spec{AutoAlpha: true, AutoBeta: true}}, ""},
		{Thresholds{ClipSGD: 0, PSClipSGD: 2, Spec: estimator.Spec{Alpha: 1, Beta: 2}}, "ClipSGD"},
		{Thresholds{ClipSGD: 1, PSClipSGD: 1e39, Spec: estimator.Spec{Alpha: 1, Beta: 2}}, "PSClipSGD"},
		{Thresholds{ClipSGD: 1, PSClipSGD: 2, Spec: estimator.Spec{Alpha: 0, Beta: 2}}, "Alpha"},
		{Thresholds{ClipSGD: 1, PSClipSGD: 2, Spec: estimator.Spec{Alpha: 1}}, "Beta"},
		{Thresholds{ClipSGD: 1, PSClipSGD: 2, Spec: estimator.Spec{Alpha: 1, Beta: -1}}, "Beta"},
	} {
		err := tc.th.Validate()
		var se *setting.Error
		if (tc.field == "") != (err == nil) || (err != nil && (!errors.As(err, &se) || se.Field != tc.field)) {
			t.Errorf("%+v: %v, want an error for %q", tc.th, err, tc.field)
		}
	}
}
