package images

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/psclip/psclip/checkpoint"
	cifardata "github.com/psclip/psclip/data/cifar"
	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/experiments/tail"
	"github.com/psclip/psclip/internal/loop"
	"github.com/psclip/psclip/run"
	"github.com/psclip/psclip/setting"
	"github.com/psclip/psclip/tensor"
	"github.com/psclip/psclip/train"
)

// testData is a small synthetic data set with outliers: 200 training
// images (180 after the validation split) of 4 classes and 40 test images.
func testData(t testing.TB) *Data {
	t.Helper()
	s, err := cifardata.Synthesize(cifardata.SynthConfig{Train: 200, Test: 40, Classes: 4, Seed: 5, Noise: 24, Outliers: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	return &Data{Dir: "synthetic", Train: s.Train, Test: s.Test}
}

// tinyConfig is a run of a fraction of a second: 12 steps of 16 images per
// epoch, with dropout and both augmentations so that resuming must restore
// every random stream.
func tinyConfig(est string) Config {
	c := Default()
	c.Spec = estimator.Spec{Estimator: est, Clip: 1}.Trim()
	c.Batch, c.Epochs, c.WidthDiv, c.Augment = 16, 2, 32, "cropflip+autoaugment"
	return c
}

func trainRun(t *testing.T, cfg Config, d *Data, opts RunOptions) (*Summary, error) {
	t.Helper()
	r, err := New(cfg, d, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r.Train(context.Background())
}

// TestResumeIsExact interrupts a run in the middle of an epoch, resumes
// it, and checks that the final weights, optimizer state and log match
// those of an uninterrupted run bit for bit. The adaptive estimators are
// interrupted after their warm-up (16 steps of 16 norms), so that their
// threshold depends on the window or γ the checkpoint must restore; their
// runs log the per-sample norms, which must match too.
func TestResumeIsExact(t *testing.T) {
	d := testData(t)
	for _, tc := range []struct {
		cfg       Config
		interrupt int
	}{
		{tinyConfig("ps-clip-sgd"), 5},
		{tinyConfig("clip-sgd"), 5},
		{autoConfig("ps-clip-auto"), 18},
		{autoConfig("ps-clip-quantile"), 18},
		{released(dpConfig(7)), 5},
	} {
		t.Run(tc.cfg.Estimator, func(t *testing.T) {
			cfg := tc.cfg
			logNorms := cfg.Estimator != "ps-clip-sgd" && cfg.Estimator != "clip-sgd"
			whole, parts := t.TempDir(), t.TempDir()
			want, err := trainRun(t, cfg, d, RunOptions{Out: whole, LogNorms: logNorms})
			if err != nil {
				t.Fatal(err)
			}

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			r, err := New(cfg, d, RunOptions{Out: parts, LogNorms: logNorms, AfterStep: func(done int) {
				if done == tc.interrupt {
					cancel()
				}
			}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.Train(ctx); !errors.Is(err, loop.ErrInterrupted) {
				t.Fatalf("interrupted run: %v, want loop.ErrInterrupted", err)
			}
			if l, err := checkpoint.Load(filepath.Join(parts, run.CheckpointFile)); err != nil || l.Step != tc.interrupt {
				t.Fatalf("checkpoint after the interrupt: %v, %+v; want step %d", err, l, tc.interrupt)
			}
			if _, err := os.Stat(filepath.Join(parts, run.ResultFile)); err == nil {
				t.Error("an interrupted run wrote result.json")
			}
			got, err := trainRun(t, cfg, d, RunOptions{Out: parts, Resume: true, LogNorms: logNorms})
			if err != nil {
				t.Fatal(err)
			}
			sameCheckpoints(t, filepath.Join(whole, run.CheckpointFile), filepath.Join(parts, run.CheckpointFile))
			if a, b := logStats(t, whole), logStats(t, parts); a != b {
				t.Errorf("logs differ:\nuninterrupted %s\nresumed       %s", a, b)
			}
			// The epoch records carry the adaptive estimator's state.
			ep := want.Curve[len(want.Curve)-1]
			if hasP, hasGamma := ep.PHat > 0 && ep.SigmaHat > 0, ep.Gamma > 0; hasP != (cfg.Estimator == "ps-clip-auto") || hasGamma != (cfg.Estimator == "ps-clip-quantile") {
				t.Errorf("last epoch's p_hat %v, sigma_hat %v, gamma %v", ep.PHat, ep.SigmaHat, ep.Gamma)
			}
			if got.TestAcc != want.TestAcc || got.TestLoss != want.TestLoss || len(got.Curve) != cfg.Epochs {
				t.Errorf("resumed test accuracy %v loss %v, %d epochs; uninterrupted %v %v", got.TestAcc, got.TestLoss, len(got.Curve), want.TestAcc, want.TestLoss)
			}
			if cfg.DPSGD() != (eps(want.Epsilon) > 0) || eps(got.Epsilon) != eps(want.Epsilon) || got.Delta != cfg.Delta {
				t.Errorf("resumed ε %v δ %v, uninterrupted ε %v", eps(got.Epsilon), got.Delta, eps(want.Epsilon))
			}
		})
	}
}

// sameCheckpoints fails unless the two checkpoints hold bit-identical
// weights and optimizer state.
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
	if la.Step != lb.Step || la.Optimizer.Steps != lb.Optimizer.Steps {
		t.Fatalf("steps %d/%d vs %d/%d", la.Step, la.Optimizer.Steps, lb.Step, lb.Optimizer.Steps)
	}
	for _, pair := range []struct {
		what string
		x, y map[string]*tensor.Tensor
	}{{"weight", la.Model, lb.Model}, {"optimizer state", la.Optimizer.Tensors, lb.Optimizer.Tensors}} {
		if len(pair.x) == 0 || len(pair.x) != len(pair.y) {
			t.Fatalf("%s: %d vs %d tensors", pair.what, len(pair.x), len(pair.y))
		}
		for name, x := range pair.x {
			if !slices.Equal(x.Data, pair.y[name].Data) {
				t.Fatalf("%s %s differs between the uninterrupted and the resumed run", pair.what, name)
			}
		}
	}
}

// eps is a written ε, 0 if none is.
func eps(e *Float) float64 {
	if e == nil {
		return 0
	}
	return float64(*e)
}

// dpConfig is tinyConfig for dp-sgd with the fixed noise seed (0: secure
// noise): Poisson batches of 16 images expected of 180, cut into
// micro-batches of at most 5, pixels in [0, 1].
func dpConfig(noiseSeed uint64) Config {
	c := tinyConfig("dp-sgd")
	c.NoiseMultiplier, c.NoiseSeed, c.Delta, c.MicroBatch, c.Normalize = 1.1, noiseSeed, 1e-3, 5, NormalizeNone
	return c
}

// released is c with ReleaseUnprotected: a dp-sgd run whose log holds
// what a private run withholds, for tests that compare it.
func released(c Config) Config {
	c.ReleaseUnprotected = true
	return c
}

// autoConfig is tinyConfig for an adaptive estimator (no clipping
// threshold to give).
func autoConfig(est string) Config {
	c := tinyConfig(est)
	c.Clip = 0
	return c
}

// logStats returns the log's lines, the epoch records without the timings.
func logStats(t *testing.T, dir string) string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, run.LogFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.Contains(sc.Text(), `"sample_norms"`) {
			fmt.Fprintln(&b, sc.Text())
			continue
		}
		var r EpochRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		// JSON shows the values behind pointers (ε).
		r.Elapsed, r.EpochSeconds, r.ImagesPerSec = 0, 0, 0
		line, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s\n", line)
	}
	return b.String()
}

// poison sets every pixel of image i of the batch to NaN.
func poison(b *train.Batch, i int) {
	n := b.X.Len() / b.X.Dim(0)
	for j := i * n; j < (i+1)*n; j++ {
		b.X.Data[j] = float32(math.NaN())
	}
}

// TestPoisonedSampleNeverReachesWeights feeds a NaN image at step 3: a
// per-sample estimator drops that sample and updates from the others; a
// batch estimator skips the step, leaving weights and momentum as they
// were. Either way the count is logged and the weights stay finite.
func TestPoisonedSampleNeverReachesWeights(t *testing.T) {
	d := testData(t)
	for _, tc := range []struct {
		est              string
		dropped, skipped int
	}{
		{"ps-clip-sgd", 1, 0},
		{"clip-sgd", 0, 1},
		{"sgd", 0, 1},
	} {
		t.Run(tc.est, func(t *testing.T) {
			cfg := tinyConfig(tc.est)
			cfg.Epochs = 1
			dir := t.TempDir()
			var r *Run
			var before []float32
			opts := RunOptions{Out: dir,
				AfterStep: func(done int) {
					if done != 4 {
						return
					}
					after := r.model.Params()[0].Value.Data
					if unchanged := slices.Equal(before, after); unchanged != (tc.skipped == 1) {
						t.Errorf("weights unchanged by the poisoned step: %v; want %v", unchanged, tc.skipped == 1)
					}
				}}
			var err error
			if r, err = New(cfg, d, opts); err != nil {
				t.Fatal(err)
			}
			r.beforeStep = func(step int, b *train.Batch) {
				if step == 3 {
					poison(b, 2)
					before = slices.Clone(r.model.Params()[0].Value.Data)
				}
			}
			s, err := r.Train(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if s.DroppedSamples != tc.dropped || s.SkippedSteps != tc.skipped {
				t.Errorf("summary: %d dropped samples, %d skipped steps; want %d, %d", s.DroppedSamples, s.SkippedSteps, tc.dropped, tc.skipped)
			}
			if ep := s.Curve[0]; ep.DroppedSamples != tc.dropped || ep.SkippedSteps != tc.skipped || !finite(float64(ep.TrainLoss)) {
				t.Errorf("log: %+v; want %d dropped, %d skipped and a finite loss", ep, tc.dropped, tc.skipped)
			}
			for _, p := range r.model.Params() {
				for _, v := range p.Value.Data {
					if !finite(float64(v)) {
						t.Fatalf("%s holds %v", p.Name, v)
					}
				}
			}
		})
	}
}

// TestBadStepsStop poisons every image: no step may touch the weights, and
// after MaxBadSteps the run stops with an error and a checkpoint.
func TestBadStepsStop(t *testing.T) {
	d := testData(t)
	for _, est := range []string{"ps-clip-sgd", "clip-sgd"} {
		t.Run(est, func(t *testing.T) {
			cfg := tinyConfig(est)
			cfg.MaxBadSteps = 3
			dir := t.TempDir()
			r, err := New(cfg, d, RunOptions{Out: dir})
			if err != nil {
				t.Fatal(err)
			}
			r.beforeStep = func(_ int, b *train.Batch) {
				for i := range b.Y {
					poison(b, i)
				}
			}
			before := r.model.Params()[0].Value.Clone()
			_, err = r.Train(context.Background())
			if err == nil || !strings.Contains(err.Error(), "3 consecutive steps") {
				t.Fatalf("error %v, want one about 3 consecutive bad steps", err)
			}
			if !slices.Equal(r.model.Params()[0].Value.Data, before.Data) {
				t.Error("a NaN gradient reached the weights")
			}
			l, err := checkpoint.Load(filepath.Join(dir, run.CheckpointFile))
			if err != nil || l.Step != 3 {
				t.Fatalf("checkpoint: %v, %+v; want one at step 3", err, l)
			}
			if _, err := os.Stat(filepath.Join(dir, run.ResultFile)); err == nil {
				t.Error("a failed run wrote result.json")
			}
		})
	}
}

// TestGOMAXPROCSInvariant trains the same run on one and on two threads and
// compares the final weights bit for bit.
func TestGOMAXPROCSInvariant(t *testing.T) {
	d := testData(t)
	cfg := tinyConfig("ps-clip-sgd")
	cfg.Epochs = 1
	var dirs []string
	for _, procs := range []int{1, 2} {
		old := runtime.GOMAXPROCS(procs)
		dir := t.TempDir()
		_, err := trainRun(t, cfg, d, RunOptions{Out: dir})
		runtime.GOMAXPROCS(old)
		if err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	sameCheckpoints(t, filepath.Join(dirs[0], run.CheckpointFile), filepath.Join(dirs[1], run.CheckpointFile))
}

// TestResumeChecks refuses to resume with a changed setting, and extends a
// finished run when only --epochs grew.
func TestResumeChecks(t *testing.T) {
	d := testData(t)
	cfg := tinyConfig("ps-clip-sgd")
	cfg.Epochs = 1
	dir := t.TempDir()
	if _, err := trainRun(t, cfg, d, RunOptions{Out: dir}); err != nil {
		t.Fatal(err)
	}
	changed := cfg
	changed.LR = 0.02
	if _, err := New(changed, d, RunOptions{Out: dir, Resume: true}); err == nil || !strings.Contains(err.Error(), "lr") {
		t.Errorf("resume with another learning rate: %v, want an error naming lr", err)
	}
	if _, err := New(cfg, d, RunOptions{Out: t.TempDir(), Resume: true}); err == nil || !strings.Contains(err.Error(), "no checkpoint") {
		t.Errorf("resume without a checkpoint: %v", err)
	}
	longer := cfg
	longer.Epochs = 2
	s, err := trainRun(t, longer, d, RunOptions{Out: dir, Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Curve) != 2 || s.Curve[0].Epoch != 1 || s.Curve[1].Epoch != 2 {
		t.Errorf("extended run's curve has epochs %v, want 1, 2", s.Curve)
	}
}

// TestCorrect checks the accuracy count against hand-computed rows,
// including ties (the first maximum wins, as torch.argmax) and NaN.
func TestCorrect(t *testing.T) {
	nan := float32(math.NaN())
	logits := &tensor.Tensor{Shape: []int{4, 3}, Data: []float32{
		0.1, 0.7, 0.2, // argmax 1
		2, 2, 1, // tie: 0
		nan, 5, 1, // NaN: never correct
		-3, -2, -1, // argmax 2
	}}
	if got := correct(logits, []int32{1, 1, 1, 2}); got != 2 {
		t.Errorf("correct = %d, want 2", got)
	}
}

// TestNormsLogTrace checks the norms a run logs against the automatic
// threshold's own estimate: tail.Trace, reading the log, feeds the logged
// norms through its own window, so its p̂ and σ̂ after the last step equal
// the p̂ and σ̂ the run logs at the end of the epoch only if every norm
// train gave the estimator was logged, in order, exactly.
func TestNormsLogTrace(t *testing.T) {
	d := testData(t)
	cfg := autoConfig("ps-clip-auto")
	dir := t.TempDir()
	s, err := trainRun(t, cfg, d, RunOptions{Out: dir, LogNorms: true})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, run.LogFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := tail.Trace(f, 0)
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(cfg, d, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	steps := r.TotalSteps()
	last, ep := tr.Points[len(tr.Points)-1], s.Curve[len(s.Curve)-1]
	if tr.Steps != steps || last.Step != steps {
		t.Errorf("trace of %d steps ending at step %d; want %d", tr.Steps, last.Step, steps)
	}
	if last.P != float64(ep.PHat) || last.Sigma != float64(ep.SigmaHat) || !(last.P > 0) {
		t.Errorf("trace's last p̂ = %v, σ̂ = %v; the run's estimator: %v, %v", last.P, last.Sigma, ep.PHat, ep.SigmaHat)
	}
	// Estimators without per-sample norms have none to log.
	if _, err := New(tinyConfig("clip-sgd"), d, RunOptions{Out: t.TempDir(), LogNorms: true}); err == nil || !strings.Contains(err.Error(), "LogNorms") {
		t.Errorf("clip-sgd with LogNorms: %v, want an error naming LogNorms", err)
	}
}

// TestAugmentClipping recounts the log's clipping by AutoAugment
// operation and sub-policy from the per-sample norms the run logs (γ = 1:
// a sample is clipped when its norm is above 1) and the augmentations a
// fresh iterator of the same configuration reports; without AutoAugment,
// or without per-sample clipping, the log has no such counts.
func TestAugmentClipping(t *testing.T) {
	d := testData(t)
	cfg := tinyConfig("ps-clip-sgd")
	cfg.Augment = "autoaugment"
	dir := t.TempDir()
	s, err := trainRun(t, cfg, d, RunOptions{Out: dir, LogNorms: true})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, run.LogFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var steps [][]Float
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec normsRecord
		if err := json.Unmarshal(sc.Bytes(), &rec); err == nil && rec.Step > 0 {
			steps = append(steps, rec.SampleNorms)
		}
	}
	fresh, err := New(cfg, d, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	per := fresh.batchesPerEpoch
	clippedSeen := 0
	for e, ep := range s.Curve {
		want := &AugmentClipping{Ops: map[string]AugmentCount{}, SubPolicies: make([]AugmentCount, len(cifardata.CIFAR10Policy))}
		sums := map[string]float64{}
		subSums := make([]float64, len(want.SubPolicies))
		count := func(c *AugmentCount, sum *float64, norm float64) {
			c.Samples++
			if norm > 1 {
				c.Clipped++
			}
			*sum += norm
		}
		for i := range per {
			if _, _, ok := fresh.it.Next(); !ok {
				fresh.it.Next()
			}
			for j, a := range fresh.it.Applied() {
				norm := float64(steps[e*per+i][j])
				count(&want.SubPolicies[a.SubPolicy], &subSums[a.SubPolicy], norm)
				names := []string{AugmentNone}
				if a.Ops != 0 {
					names = nil
					for op := range cifardata.NumOps {
						if a.Ops.Has(cifardata.Op(op)) {
							names = append(names, cifardata.Op(op).String())
						}
					}
				}
				for _, n := range names {
					c := want.Ops[n]
					s := sums[n]
					count(&c, &s, norm)
					want.Ops[n], sums[n] = c, s
				}
				if norm > 1 {
					clippedSeen++
				}
			}
		}
		for n, c := range want.Ops {
			c.MeanNorm = Float(sums[n] / float64(c.Samples))
			want.Ops[n] = c
		}
		for k := range want.SubPolicies {
			want.SubPolicies[k].MeanNorm = Float(subSums[k] / float64(want.SubPolicies[k].Samples))
		}
		got := ep.Augment
		if got == nil {
			t.Fatalf("epoch %d: no augment_clipping", ep.Epoch)
		}
		if len(got.Ops) != len(want.Ops) || len(got.SubPolicies) != len(want.SubPolicies) {
			t.Fatalf("epoch %d: ops %v, sub-policies %v; recounted %v, %v", ep.Epoch, got.Ops, got.SubPolicies, want.Ops, want.SubPolicies)
		}
		close := func(a, b AugmentCount) bool {
			return a.Samples == b.Samples && a.Clipped == b.Clipped &&
				(a.Samples == 0 || math.Abs(float64(a.MeanNorm-b.MeanNorm)) <= 1e-6*float64(b.MeanNorm))
		}
		for n, c := range want.Ops {
			if !close(got.Ops[n], c) {
				t.Errorf("epoch %d, %s: logged %+v, recounted %+v", ep.Epoch, n, got.Ops[n], c)
			}
		}
		for k, c := range want.SubPolicies {
			if !close(got.SubPolicies[k], c) {
				t.Errorf("epoch %d, sub-policy %d: logged %+v, recounted %+v", ep.Epoch, k, got.SubPolicies[k], c)
			}
		}
	}
	fresh.Close()
	if clippedSeen == 0 {
		t.Error("γ = 1 clipped no sample: the test compares nothing")
	}
	for _, c := range []Config{func() Config { c := tinyConfig("ps-clip-sgd"); c.Augment = "cropflip"; return c }(), tinyConfig("clip-sgd")} {
		s, err := trainRun(t, c, d, RunOptions{Out: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		if s.Curve[0].Augment != nil {
			t.Errorf("%s with %s logged augment_clipping", c.Estimator, c.Augment)
		}
	}
}

// greyData is testData's images reduced to their first plane.
func greyData(t testing.TB) *Data {
	d := testData(t)
	grey := func(s *cifardata.Dataset) *cifardata.Dataset {
		g := &cifardata.Dataset{Labels: s.Labels, Classes: s.Classes, Grey: true}
		for i := range s.Len() {
			g.Images = append(g.Images, s.Image(i)[:cifardata.Side*cifardata.Side]...)
		}
		return g
	}
	return &Data{Dir: "synthetic-grey", Train: grey(d.Train), Test: grey(d.Test)}
}

// TestTanhCNNRun trains TanhCNN on grey images with pixels in [0, 1]: the
// normaliser is the identity on that scale, the run learns, and RGB data
// is refused with a *setting.Error naming Model.
func TestTanhCNNRun(t *testing.T) {
	c := tinyConfig("sgd")
	c.Model, c.Dropout, c.Normalize, c.WidthDiv, c.Augment, c.Epochs, c.LR = ModelTanhCNN, 0, NormalizeNone, 1, "none", 4, 0.05
	n := c.normalizer(greyData(t).Train)
	if n.Mean != [cifardata.Channels]float32{} || n.Std != [cifardata.Channels]float32{1, 1, 1} {
		t.Errorf("NormalizeNone: normaliser %+v, want mean 0 and standard deviation 1", n)
	}
	s, err := trainRun(t, c, greyData(t), RunOptions{Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if !(s.TrainAcc > 0.4) {
		t.Errorf("train accuracy %v after %d epochs on 4 separable classes, want above 0.4 (chance: 0.25)", s.TrainAcc, c.Epochs)
	}
	_, err = New(c, testData(t), RunOptions{Out: t.TempDir()})
	var se *setting.Error
	if !errors.As(err, &se) || se.Field != "Model" {
		t.Errorf("tanh-cnn on RGB data: %v, want a *setting.Error naming Model", err)
	}
}

// A dp-sgd run refuses the settings that would make its ε wrong, each with
// a *setting.Error naming the field: δ not below 1/N (N = 180 training
// images), pixels normalised by the training images' statistics; Poisson
// sampling, micro-batch bounds and δ are dp-sgd's only. A run with secure
// noise resumes (with fresh noise) and reports its ε.
func TestDPSGDRun(t *testing.T) {
	d := testData(t)
	for _, tc := range []struct {
		name  string
		edit  func(c *Config)
		field string
	}{
		{"δ = 1/N", func(c *Config) { c.Delta = 1.0 / 180 }, "Delta"},
		{"no δ", func(c *Config) { c.Delta = 0 }, "Delta"},
		{"channel statistics", func(c *Config) { c.Normalize = "" }, "Normalize"},
		{"accum with poisson", func(c *Config) { c.Accum = 2 }, "Accum"},
		{"micro-batch with shuffle", func(c *Config) { c.Sampling = SamplingShuffle }, "MicroBatch"},
		{"unknown sampling", func(c *Config) { c.Sampling = "uniform" }, "Sampling"},
		{"poisson for ps-clip-sgd", func(c *Config) { *c = tinyConfig("ps-clip-sgd"); c.Sampling = SamplingPoisson }, "Sampling"},
		{"δ for ps-clip-sgd", func(c *Config) { *c = tinyConfig("ps-clip-sgd"); c.Delta = 1e-3 }, "Delta"},
		{"shuffle, private", func(c *Config) { c.NoiseSeed, c.MicroBatch, c.Sampling = 0, 0, SamplingShuffle }, "Sampling"},
		{"release for ps-clip-sgd", func(c *Config) { *c = tinyConfig("ps-clip-sgd"); c.ReleaseUnprotected = true }, "ReleaseUnprotected"},
	} {
		c := dpConfig(1)
		tc.edit(&c)
		_, err := New(c, d, RunOptions{})
		var se *setting.Error
		if !errors.As(err, &se) || se.Field != tc.field {
			t.Errorf("%s: %v, want a *setting.Error naming %s", tc.name, err, tc.field)
		}
	}
	c := dpConfig(0)
	c.Epochs = 1
	dir := t.TempDir()
	if _, err := trainRun(t, c, d, RunOptions{Out: dir}); err != nil {
		t.Fatal(err)
	}
	c.Epochs = 2
	s, err := trainRun(t, c, d, RunOptions{Out: dir, Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	// Two epochs of 12 steps at q = 16/180, σ = 1.1.
	want, err := d.NoiseMultiplier(c, eps(s.Epsilon))
	if err != nil || math.Abs(want-c.NoiseMultiplier) > 0.02*c.NoiseMultiplier || len(s.Curve) != 2 || !(eps(s.Curve[0].Epsilon) < eps(s.Curve[1].Epsilon)) {
		t.Errorf("ε %v after 2 epochs (curve %v, %v) gives back σ %v (%v), want %v", eps(s.Epsilon), eps(s.Curve[0].Epsilon), eps(s.Curve[1].Epsilon), want, err, c.NoiseMultiplier)
	}
}

// TestValFraction checks Config.ValFraction on 200 training images: unset
// holds out the default tenth; a share holds out ⌊share·200⌋; 0 holds out
// none, so that N (dp-sgd's δ bound and q) counts all 200, and the run
// logs null validation figures while it still evaluates the test set.
// Shares outside [0, 1), or that hold out no image, are refused naming the
// field.
func TestValFraction(t *testing.T) {
	d := testData(t)
	for _, tc := range []struct {
		name         string
		frac         *float64
		train, valid int
		field        string
	}{
		{"unset", nil, 180, 20, ""},
		{"none", new(0.0), 200, 0, ""},
		{"a quarter", new(0.25), 150, 50, ""},
		{"0.0051: one image", new(0.0051), 199, 1, ""},
		{"0.004: no image", new(0.004), 0, 0, "ValFraction"},
		{"negative", new(-0.1), 0, 0, "ValFraction"},
		{"one", new(1.0), 0, 0, "ValFraction"},
		{"NaN", new(math.NaN()), 0, 0, "ValFraction"},
	} {
		c := tinyConfig("ps-clip-sgd")
		c.ValFraction = tc.frac
		r, err := New(c, d, RunOptions{})
		if tc.field != "" {
			var se *setting.Error
			if !errors.As(err, &se) || se.Field != tc.field {
				t.Errorf("%s: %v, want a *setting.Error naming %s", tc.name, err, tc.field)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		// Two epochs of batches of 16.
		if steps := 2 * ((tc.train + 15) / 16); r.trainSet.Len() != tc.train || r.valSet.Len() != tc.valid || r.TotalSteps() != steps {
			t.Errorf("%s: %d training and %d validation images, %d steps, want %d, %d and %d", tc.name, r.trainSet.Len(), r.valSet.Len(), r.TotalSteps(), tc.train, tc.valid, steps)
		}
		r.Close()
	}

	// dp-sgd: δ = 1/190 is below 1/180 (the default split) but not below
	// 1/200 (no split).
	c := dpConfig(1)
	c.Delta = 1.0 / 190
	if r, err := New(c, d, RunOptions{}); err != nil {
		t.Errorf("δ = 1/190 with N = 180: %v", err)
	} else {
		r.Close()
	}
	c.ValFraction = new(0.0)
	var se *setting.Error
	if _, err := New(c, d, RunOptions{}); !errors.As(err, &se) || se.Field != "Delta" {
		t.Errorf("δ = 1/190 with N = 200: %v, want a *setting.Error naming Delta", err)
	}

	c = tinyConfig("ps-clip-sgd")
	c.Epochs, c.ValFraction = 1, new(0.0)
	s, err := trainRun(t, c, d, RunOptions{Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ep := s.Curve[0]
	if !math.IsNaN(float64(s.ValAcc)) || !math.IsNaN(float64(ep.ValAcc)) || !math.IsNaN(float64(ep.ValLoss)) || !finite(float64(ep.TestAcc)) || !finite(float64(s.TestAcc)) {
		t.Errorf("no validation split: val acc %v (epoch %v, loss %v), test acc %v (epoch %v); want null validation, finite test", s.ValAcc, ep.ValAcc, ep.ValLoss, s.TestAcc, ep.TestAcc)
	}
}
