package cifar

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExperimentEndToEnd runs the four methods and a two-point grid (one
// point shared with the main methods, so trained once) over two seeds on a
// tiny data set, then resumes the finished experiment, which must read the
// runs back rather than retrain them.
func TestExperimentEndToEnd(t *testing.T) {
	d := testData(t)
	base := tinyConfig("sgd")
	base.Epochs, base.Augment = 1, "none"
	th := Thresholds{ClipSGD: 1, PSClipSGD: 2, Alpha: 1, Beta: 2}
	e := Experiment{Base: base, GridAlphas: []float64{1}, GridBetas: []float64{1.5, 2}, Seeds: []uint64{1, 2}}
	for _, name := range PaperMethodNames {
		m, err := th.Method(name)
		if err != nil {
			t.Fatal(err)
		}
		e.Methods = append(e.Methods, m)
	}
	dir := t.TempDir()
	res, err := RunExperiment(context.Background(), e, d, dir, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 5*2 || len(res.Table) != 4 || len(res.Grid) != 2 {
		t.Fatalf("%d runs, %d table rows, %d grid rows; want 10, 4, 2", len(res.Runs), len(res.Table), len(res.Grid))
	}
	for _, f := range []string{ResultsFile, TableMD, GridMD, AccuracyPNG, AccuracySVG, ClippingPNG, ClippingSVG,
		"runs/sgd/seed=1/result.json", "runs/ps-clip-sgd_alpha=1_beta=1.5/seed=2/log.jsonl"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
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
	again, err := RunExperiment(context.Background(), e, d, dir, true, nil)
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
	sgd, ps := Method{Estimator: "sgd"}, Method{Estimator: "ps-clip-sgd", Clip: 3}
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
			{Method: sgd, Seed: 1, Summary: Summary{ValAcc: 0.5, TestAcc: 0.4, Seconds: 10, Curve: curve(5, 10)}},
			{Method: sgd, Seed: 2, Summary: Summary{ValAcc: 0.7, TestAcc: 0.4, Seconds: 30, Curve: curve(15, 30)}},
			{Method: ps, Seed: 1, Summary: Summary{ValAcc: 0.6, TestAcc: 0.5, Seconds: 16, Curve: curve(8, 16)}},
			{Method: ps, Seed: 2, Summary: Summary{ValAcc: 0.8, TestAcc: 0.5, Seconds: 20, Curve: curve(10, 20)}},
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
		return Experiment{Base: ExperimentDefault(), Methods: []Method{{Estimator: "sgd"}}, Seeds: []uint64{1}}
	}
	for _, tc := range []struct {
		edit func(*Experiment)
		want string
	}{
		{func(e *Experiment) { e.Methods = nil }, "no method"},
		{func(e *Experiment) { e.Seeds = nil }, "no seed"},
		{func(e *Experiment) { e.GridBetas = []float64{2} }, "both"},
		{func(e *Experiment) { e.GridAlphas, e.GridBetas = []float64{1}, []float64{0} }, "β"},
		{func(e *Experiment) { e.GridAlphas, e.GridBetas = []float64{-1}, []float64{2} }, "--alpha"},
		{func(e *Experiment) { e.Methods = append(e.Methods, Method{Estimator: "clip-sgd"}) }, "--clip"},
		{func(e *Experiment) { e.Base.Epochs = 0 }, "--epochs"},
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

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		edit func(*Config)
		want string // "" for a valid configuration
	}{
		{func(c *Config) {}, ""},
		{func(c *Config) { c.Estimator, c.Clip = "sgd", 0 }, ""},
		{func(c *Config) { c.Clip, c.Alpha, c.Beta = 0, 15, 2 }, ""},
		{func(c *Config) { c.Estimator = "adam" }, "--estimator"},
		{func(c *Config) { c.Clip = 0 }, "--clip"},
		{func(c *Config) { c.Estimator, c.Clip = "clip-sgd", -1 }, "--clip"},
		{func(c *Config) { c.Clip = math.NaN() }, "--clip"},
		{func(c *Config) { c.Alpha, c.Beta = 15, -2 }, "--beta"},
		{func(c *Config) { c.Alpha, c.Beta = 0, 2 }, "--alpha"},
		{func(c *Config) { c.Alpha = 3 }, "--alpha needs --beta"},
		{func(c *Config) { c.Estimator, c.Alpha, c.Beta = "clip-sgd", 1, 2 }, "need --estimator ps-clip-sgd"},
		{func(c *Config) { c.Batch = 0 }, "--batch"},
		{func(c *Config) { c.Epochs = 0 }, "--epochs"},
		{func(c *Config) { c.WidthDiv = 0 }, "--width-div"},
		{func(c *Config) { c.LR = 0 }, "--lr"},
		{func(c *Config) { c.Momentum = 1 }, "--momentum"},
		{func(c *Config) { c.WeightDecay = -1 }, "--weight-decay"},
		{func(c *Config) { c.Dropout = 1 }, "--dropout"},
		{func(c *Config) { c.Augment = "mixup" }, "--augment"},
		{func(c *Config) { c.MaxBadSteps = -1 }, "--max-bad-steps"},
		{func(c *Config) { c.AutoAlpha, c.AutoBeta = true, true }, ""},
		{func(c *Config) { c.AutoAlpha, c.Beta = true, 2 }, ""},
		{func(c *Config) { c.Alpha, c.AutoBeta, c.Window = 15, true, 512 }, ""},
		{func(c *Config) { c.Estimator, c.Clip = "ps-clip-auto", 0 }, ""},
		{func(c *Config) {
			c.Estimator, c.Clip, c.TargetQuantile, c.QuantileRate = "ps-clip-quantile", 0, 0.7, 0.1
		}, ""},
		{func(c *Config) { c.Estimator, c.AutoClipR = "auto-clip", 0.1 }, ""},
		{func(c *Config) { c.AutoAlpha = true }, "--alpha needs --beta"},
		{func(c *Config) { c.AutoBeta = true }, "--alpha = 0 with --beta auto"},
		{func(c *Config) { c.Estimator, c.AutoAlpha, c.AutoBeta = "ps-clip-auto", true, true }, "need --estimator ps-clip-sgd"},
		{func(c *Config) { c.Window = 512 }, "--window applies only"},
		{func(c *Config) { c.AutoAlpha, c.AutoBeta, c.Window = true, true, 100 }, "window"},
		{func(c *Config) { c.TargetQuantile = 0.5 }, "--target-quantile applies only"},
		{func(c *Config) { c.Estimator, c.Clip = "ps-clip-quantile", -1 }, "--clip"},
		{func(c *Config) { c.Estimator, c.TargetQuantile = "ps-clip-quantile", 1 }, "target quantile"},
		{func(c *Config) { c.Estimator, c.QuantileRate = "ps-clip-quantile", -1 }, "rate"},
		{func(c *Config) { c.Estimator, c.QuantileRate = "auto-clip", 1 }, "--quantile-rate applies only"},
		{func(c *Config) { c.Estimator, c.AutoClipR = "auto-clip", -1 }, "auto-clip"},
	} {
		c := Default()
		tc.edit(&c)
		err := c.Validate()
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: Validate() = %v, want %q", c, err, tc.want)
		}
	}
}

func TestMethodNames(t *testing.T) {
	th := Thresholds{ClipSGD: 3, PSClipSGD: 10, Alpha: 3, Beta: 2}
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
	// The automatic thresholds of train cifar's flags.
	for _, tc := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.AutoAlpha, c.AutoBeta = true, true }, "Increasing-PS-Clip-SGD α=auto β=auto"},
		{func(c *Config) { c.Alpha, c.AutoBeta, c.Window = 15, true, 512 }, "Increasing-PS-Clip-SGD α=15 β=auto window=512"},
		{func(c *Config) {
			c.Estimator, c.Clip, c.TargetQuantile, c.QuantileRate = "ps-clip-quantile", 4, 0.7, 0.1
		}, "Quantile-PS-Clip-SGD q=0.7 rate=0.1 γ0=4"},
	} {
		c := Default()
		tc.edit(&c)
		if got := c.Method(); got != tc.want {
			t.Errorf("Method() = %q, want %q", got, tc.want)
		}
	}
}
