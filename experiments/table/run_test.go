package table

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/psclip/psclip/checkpoint"
	tabledata "github.com/psclip/psclip/data/table"
	"github.com/psclip/psclip/internal/loop"
	"github.com/psclip/psclip/run"
	"github.com/psclip/psclip/setting"
)

// writeCSV writes n rows of a table to a file of the test's and returns
// its path: features a (which separates the classes: mean ±2), b (noise
// on a scale of 100, which standardisation must tame) and c, and the
// target column: "label" (yes or no) or "y" = 3a − 0.5c + noise.
func writeCSV(t *testing.T, n int, seed uint64, target string) string {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 1))
	var b strings.Builder
	b.WriteString("a,b,c," + target + "\n")
	for range n {
		yes := r.IntN(2) == 1
		a := r.NormFloat64() - 2
		if yes {
			a += 4
		}
		c := 5 + 3*r.NormFloat64()
		fmt.Fprintf(&b, "%.4f,%.4f,%.4f,", a, 100*r.NormFloat64(), c)
		switch {
		case target == "y":
			fmt.Fprintf(&b, "%.4f\n", 3*a-0.5*c+0.1*r.NormFloat64())
		case yes:
			b.WriteString("yes\n")
		default:
			b.WriteString("no\n")
		}
	}
	path := filepath.Join(t.TempDir(), "data.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// tinyConfig is a short run of est predicting target: an MLP of 16
// hidden units, batches of 32, 4 epochs.
func tinyConfig(est, target string) Config {
	c := Default()
	c.Estimator, c.Target, c.Hidden, c.Batch, c.Epochs, c.LR = est, target, []int{16}, 32, 4, 0.05
	switch est {
	case "clip-sgd", "ps-clip-sgd", "dp-sgd":
		c.Clip = 1
	}
	return c
}

// load reads a table of n rows for cfg, written with seed.
func load(t *testing.T, n int, seed uint64, cfg Config) *Data {
	t.Helper()
	d, err := LoadData(writeCSV(t, n, seed, cfg.Target), "", cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func trainRun(t *testing.T, cfg Config, d *Data, opts RunOptions) (*Summary, error) {
	t.Helper()
	r, err := New(cfg, d, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r.Train(context.Background())
}

// Every loss trains: classification (cross-entropy, binary cross-entropy)
// beats chance by far on the separable classes, regression (MSE, Huber)
// brings the training loss down to a small share of the first epoch's;
// each estimator trains the classifier.
func TestTrains(t *testing.T) {
	for _, tc := range []struct {
		est, target, loss string
	}{
		{"sgd", "label", ""},
		{"sgd", "label", LossBCE},
		{"sgd", "y", ""},
		{"sgd", "y", LossHuber},
		{"clip-sgd", "label", ""},
		{"ps-clip-sgd", "label", ""},
		{"ps-clip-auto", "label", ""},
		{"auto-clip", "label", ""},
	} {
		t.Run(tc.est+"/"+tc.target+"/"+tc.loss, func(t *testing.T) {
			cfg := tinyConfig(tc.est, tc.target)
			cfg.Loss = tc.loss
			if tc.loss == LossHuber {
				cfg.HuberDelta = 1
			}
			out := t.TempDir()
			s, err := trainRun(t, cfg, load(t, 400, 1, cfg), RunOptions{Out: out})
			if err != nil {
				t.Fatal(err)
			}
			l, err := checkpoint.Load(filepath.Join(out, run.CheckpointFile))
			if err != nil {
				t.Fatal(err)
			}
			var sch Schema
			if err := json.Unmarshal([]byte(l.Extra[SchemaKey]), &sch); err != nil || !slices.Equal(sch.Features, []string{"a", "b", "c"}) ||
				len(sch.Mean) != 3 || len(sch.Std) != 3 || sch.Task != s.Config.Task || (tc.target == "label") != slices.Equal(sch.Classes, []string{"no", "yes"}) {
				t.Errorf("the checkpoint's schema (%v): %+v", err, sch)
			}
			first, last := s.Curve[0], s.Curve[len(s.Curve)-1]
			if tc.target == "label" {
				if s.Config.Task != TaskClassification || !(s.ValAcc > 0.9) || !(s.TrainAcc > 0.9) {
					t.Errorf("task %s: validation accuracy %v, train %v; want above 0.9 (chance 0.5)", s.Config.Task, s.ValAcc, s.TrainAcc)
				}
				return
			}
			if s.Config.Task != TaskRegression || !(last.TrainLoss < first.TrainLoss/3) || !(s.ValLoss < first.TrainLoss/3) || !math.IsNaN(float64(s.ValAcc)) {
				t.Errorf("task %s: training loss %v → %v, validation %v (accuracy %v); want a third or less",
					s.Config.Task, first.TrainLoss, last.TrainLoss, s.ValLoss, s.ValAcc)
			}
		})
	}
}

// A dp-sgd run trains the separable classes above chance on a test file
// (on features as the file holds them, one on a scale of 100) and
// accounts ε. The noise seed is fixed, so that the test is deterministic:
// the private runs' secrets are TestPrivateRunsDrawSecretSamples'.
func TestDPSGD(t *testing.T) {
	cfg := tinyConfig("dp-sgd", "label")
	cfg.NoiseMultiplier, cfg.NoiseSeed, cfg.Delta, cfg.MicroBatch, cfg.Epochs, cfg.ValFraction, cfg.LR = 0.8, 11, 1e-3, 10, 8, 0, 0.02
	d, err := LoadData(writeCSV(t, 500, 1, "label"), writeCSV(t, 200, 2, "label"), cfg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := trainRun(t, cfg, d, RunOptions{Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	// Over 80 runs of secret noise the test accuracy was 0.81 to 0.95.
	if s.Config.Standardize != StandardizeNone || !(s.TestAcc > 0.8) || s.Epsilon == nil || !(*s.Epsilon > 0) {
		t.Errorf("standardize %q, test accuracy %v, ε %v", s.Config.Standardize, s.TestAcc, eps(s.Epsilon))
	}
}

func eps(e *Float) float64 {
	if e == nil {
		return 0
	}
	return float64(*e)
}

// TestResumeIsExact interrupts a run in the middle of an epoch, resumes
// it, and checks that the final weights, optimizer state and log match
// those of an uninterrupted run bit for bit (shuffled batches, and
// dp-sgd's Poisson samples and noise of a fixed seed).
func TestResumeIsExact(t *testing.T) {
	dp := tinyConfig("dp-sgd", "label")
	dp.NoiseMultiplier, dp.NoiseSeed, dp.Delta, dp.ReleaseUnprotected = 1, 7, 1e-3, true
	for _, cfg := range []Config{tinyConfig("ps-clip-auto", "label"), tinyConfig("sgd", "y"), dp} {
		t.Run(cfg.Estimator, func(t *testing.T) {
			d := load(t, 300, 3, cfg)
			whole, parts := t.TempDir(), t.TempDir()
			want, err := trainRun(t, cfg, d, RunOptions{Out: whole})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			const interrupt = 11 // in the second epoch of 8 steps
			r, err := New(cfg, d, RunOptions{Out: parts, AfterStep: func(done int) {
				if done == interrupt {
					cancel()
				}
			}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.Train(ctx); !errors.Is(err, loop.ErrInterrupted) {
				t.Fatalf("interrupted run: %v, want loop.ErrInterrupted", err)
			}
			got, err := trainRun(t, cfg, d, RunOptions{Out: parts, Resume: true})
			if err != nil {
				t.Fatal(err)
			}
			sameCheckpoints(t, filepath.Join(whole, run.CheckpointFile), filepath.Join(parts, run.CheckpointFile))
			if a, b := logLines(t, whole), logLines(t, parts); a != b {
				t.Errorf("logs differ:\nuninterrupted %s\nresumed       %s", a, b)
			}
			if got.TrainLoss != want.TrainLoss || got.ValLoss != want.ValLoss || len(got.Curve) != cfg.Epochs {
				t.Errorf("resumed loss %v/%v, %d epochs; uninterrupted %v/%v", got.TrainLoss, got.ValLoss, len(got.Curve), want.TrainLoss, want.ValLoss)
			}
		})
	}
}

// sameCheckpoints fails the test unless the checkpoints at a and b hold
// the same step, weights and optimizer state.
func sameCheckpoints(t *testing.T, a, b string) {
	t.Helper()
	la, err := checkpoint.Load(a)
	if err != nil {
		t.Fatal(err)
	}
	lb, err := checkpoint.Load(b)
	if err != nil {
		t.Fatal(err)
	}
	if la.Step != lb.Step {
		t.Fatalf("steps %d vs %d", la.Step, lb.Step)
	}
	for name, x := range la.Model {
		if !slices.Equal(x.Data, lb.Model[name].Data) {
			t.Fatalf("weight %s differs between the uninterrupted and the resumed run", name)
		}
	}
	for name, x := range la.Optimizer.Tensors {
		if !slices.Equal(x.Data, lb.Optimizer.Tensors[name].Data) {
			t.Fatalf("optimizer state %s differs between the uninterrupted and the resumed run", name)
		}
	}
}

// logLines is the run's log without its wall times.
func logLines(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, run.LogFile))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		delete(m, "elapsed_s")
		delete(m, "epoch_s")
		line, _ := json.Marshal(m)
		out.Write(append(line, '\n'))
	}
	return out.String()
}

// Settings that make no sense together, or with the data, are refused
// with a *setting.Error naming the field, before anything is written.
func TestRefuses(t *testing.T) {
	path := writeCSV(t, 100, 4, "label")
	for _, tc := range []struct {
		name  string
		edit  func(c *Config)
		field string
	}{
		{"mse for classes", func(c *Config) { c.Task, c.Loss = TaskClassification, LossMSE }, "Loss"},
		{"cross-entropy for numbers", func(c *Config) { c.Task, c.Loss = TaskRegression, LossCrossEntropy }, "Loss"},
		{"huber delta without huber", func(c *Config) { c.HuberDelta = 1 }, "HuberDelta"},
		{"unknown loss", func(c *Config) { c.Loss = "hinge" }, "Loss"},
		{"unknown task", func(c *Config) { c.Task = "ranking" }, "Task"},
		{"fitted standardisation under dp-sgd", func(c *Config) {
			c.Estimator, c.Clip, c.NoiseMultiplier, c.Delta, c.Standardize = "dp-sgd", 1, 1, 1e-3, StandardizeFit
		}, "Standardize"},
		{"δ not below 1/N", func(c *Config) { c.Estimator, c.Clip, c.NoiseMultiplier, c.Delta = "dp-sgd", 1, 1, 0.1 }, "Delta"},
		{"a validation share of no row", func(c *Config) { c.ValFraction = 0.001 }, "ValFraction"},
		{"a hidden width of 0", func(c *Config) { c.Hidden = []int{0} }, "Hidden"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tinyConfig("sgd", "label")
			tc.edit(&cfg)
			d, err := LoadData(path, "", Config{Target: cfg.Target}) // the task inferred
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "run")
			_, err = New(cfg, d, RunOptions{Out: out})
			var se *setting.Error
			if !errors.As(err, &se) || se.Field != tc.field {
				t.Errorf("error %v, want a *setting.Error naming %s", err, tc.field)
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("a refused run left a directory")
			}
		})
	}
	d, err := LoadData(writeCSV(t, 100, 4, "y"), "", Config{Target: "y"}) // 100 distinct numbers: regression
	if err != nil {
		t.Fatal(err)
	}
	cfg := tinyConfig("sgd", "y")
	cfg.Loss = LossBCE
	if _, err := New(cfg, d, RunOptions{}); err == nil {
		t.Error("binary cross-entropy on a regression table: no error")
	}
	// A test file of other columns, or of a class the training rows lack.
	other := filepath.Join(t.TempDir(), "other.csv")
	if err := os.WriteFile(other, []byte("a,c,b,label\n1,2,3,yes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadData(path, other, Config{Target: "label"}); err == nil || !strings.Contains(err.Error(), "feature columns") {
		t.Errorf("a test file of other columns: %v", err)
	}
	if err := os.WriteFile(other, []byte("a,b,c,label\n1,2,3,maybe\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var te *tabledata.Error
	if _, err := LoadData(path, other, Config{Target: "label"}); !errors.As(err, &te) || te.Line != 2 {
		t.Errorf("a test class the training rows lack: %v, want a *table.Error at line 2", err)
	}
}

// The features are standardised by the training rows' statistics alone:
// the training split has mean 0 and standard deviation 1 in every
// feature, and the validation rows are shifted and scaled by the same
// numbers, computed here independently from the file's rows.
func TestStandardizedByTrainingRows(t *testing.T) {
	cfg := tinyConfig("sgd", "label")
	d := load(t, 200, 5, cfg)
	r, err := New(cfg, d, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ti, vi, err := cfg.split(d.Train.Len())
	if err != nil {
		t.Fatal(err)
	}
	tb, _ := r.trainSet.Batch(slices.Collect(seq(r.trainSet.Len())))
	vb, _ := r.valSet.Batch(slices.Collect(seq(r.valSet.Len())))
	for j := range d.Train.D() {
		var mean, sq float64
		for _, i := range ti {
			mean += float64(d.Train.X[i*d.Train.D()+j])
		}
		mean /= float64(len(ti))
		for _, i := range ti {
			e := float64(d.Train.X[i*d.Train.D()+j]) - mean
			sq += e * e
		}
		std := math.Sqrt(sq / float64(len(ti)))
		for k, i := range ti {
			if want := (float64(d.Train.X[i*d.Train.D()+j]) - mean) / std; math.Abs(float64(tb.X.Data[k*d.Train.D()+j])-want) > 1e-5*math.Max(1, math.Abs(want)) {
				t.Fatalf("feature %d, training row %d: %v, want %v", j, i, tb.X.Data[k*d.Train.D()+j], want)
			}
		}
		for k, i := range vi {
			if want := (float64(d.Train.X[i*d.Train.D()+j]) - mean) / std; math.Abs(float64(vb.X.Data[k*d.Train.D()+j])-want) > 1e-5*math.Max(1, math.Abs(want)) {
				t.Fatalf("feature %d, validation row %d: %v, want %v (the training rows' statistics)", j, i, vb.X.Data[k*d.Train.D()+j], want)
			}
		}
	}
}

// A private dp-sgd run draws its Poisson samples from a secret key: two
// runs of one configuration draw different samples; a fixed noise seed
// draws the same.
func TestPrivateRunsDrawSecretSamples(t *testing.T) {
	draw := func(noiseSeed uint64) [][]int {
		cfg := tinyConfig("dp-sgd", "label")
		cfg.NoiseMultiplier, cfg.NoiseSeed, cfg.Delta = 1, noiseSeed, 1e-3
		r, err := New(cfg, load(t, 300, 6, cfg), RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if r.Privacy().Private() != (noiseSeed == 0) {
			t.Fatalf("noise seed %d: private %v", noiseSeed, r.Privacy().Private())
		}
		var s [][]int
		for range 5 {
			s = append(s, slices.Clone(r.sampler.Next()))
		}
		return s
	}
	if slices.EqualFunc(draw(0), draw(0), slices.Equal) {
		t.Error("two private runs drew the same samples")
	}
	if !slices.EqualFunc(draw(7), draw(7), slices.Equal) {
		t.Error("two runs of noise seed 7 drew different samples")
	}
}
