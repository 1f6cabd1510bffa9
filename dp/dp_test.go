package dp_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/psclip/psclip/checkpoint"
	"github.com/psclip/psclip/data/dataset"
	"github.com/psclip/psclip/dp"
	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/optim"
	"github.com/psclip/psclip/privacy"
	"github.com/psclip/psclip/setting"
	"github.com/psclip/psclip/tensor"
	"github.com/psclip/psclip/train"
)

// blobs draws n points of R⁴ from three classes, class c centred at 3·e_c.
func blobs(rng *rand.Rand, n int) (*tensor.Tensor, []int32) {
	x, y := tensor.New(n, 4), make([]int32, n)
	for i := range y {
		y[i] = int32(rng.IntN(3))
		for j := range 4 {
			x.Data[i*4+j] = float32(rng.NormFloat64())
		}
		x.Data[i*4+int(y[i])] += 3
	}
	return x, y
}

// setup returns a config of a fresh MLP (the same weights every time) with
// SGD on 2000 blob points, expected batch 100 in micro-batches of 32,
// clip 1, δ = 1e-5; the caller sets the noise.
func setup(t *testing.T) dp.Config {
	t.Helper()
	x, y := blobs(rand.New(rand.NewPCG(1, 2)), 2000)
	data, err := dataset.NewTensors(x, y)
	if err != nil {
		t.Fatal(err)
	}
	model := nn.Sequential{nn.NewLinear("0", 4, 16, true), &nn.ReLU{}, nn.NewLinear("2", 16, 3, true)}
	if err := nn.Init(model, 3); err != nil {
		t.Fatal(err)
	}
	opt, err := optim.NewSGD(model.Params(), optim.SGDConfig{LR: 0.5, Momentum: 0.9})
	if err != nil {
		t.Fatal(err)
	}
	return dp.Config{Model: model, Loss: nn.CrossEntropy, Optimizer: opt, Data: data,
		ExpectedBatch: 100, MicroBatch: 32, Clip: 1, Delta: 1e-5}
}

// Trained to a target ε: σ is privacy.NoiseMultiplier's for the run,
// the ε spent after the run's Steps is within Opacus' tolerance (0.01)
// below the target, the model learnt, a step more is refused, and the
// train.Trainer's own Step refuses to step on part of a sample.
func TestTargetEpsilon(t *testing.T) {
	cfg := setup(t)
	cfg.TargetEpsilon, cfg.Steps = 2, 200
	p, err := dp.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sigma, err := privacy.NoiseMultiplier(0.05, 200, 2, 1e-5, privacy.Options{})
	if err != nil || p.NoiseMultiplier() != sigma || p.SampleRate() != 0.05 || !p.Private() {
		t.Fatalf("σ %v, q %v, private %v; want σ %v (%v), q 0.05, private", p.NoiseMultiplier(), p.SampleRate(), p.Private(), sigma, err)
	}
	for range 200 {
		if _, err := p.Step(); err != nil {
			t.Fatal(err)
		}
	}
	eps, err := p.Epsilon()
	if err != nil || !(eps <= 2 && eps >= 1.99) {
		t.Errorf("ε after the run = %v (%v), want in [1.99, 2]", eps, err)
	}
	if _, err := p.Step(); !errors.Is(err, dp.ErrBudget) {
		t.Errorf("step 201 of 200: %v, want ErrBudget", err)
	}
	if _, err := p.Train().Step(); !errors.Is(err, train.ErrPrivateStep) {
		t.Errorf("the train.Trainer's Step: %v, want ErrPrivateStep", err)
	}
	x, y := blobs(rand.New(rand.NewPCG(7, 7)), 1000)
	ev, err := train.Evaluate(cfg.Model, nn.CrossEntropy, train.Batch{X: x, Y: y})
	if err != nil || ev.Accuracy < 0.9 {
		t.Errorf("held-out accuracy %v (%v), want above 0.9", ev.Accuracy, err)
	}
}

// A run saved by checkpoint.SaveTrainer after 5 steps and restored into a
// fresh Trainer by RestoreTrainer ends its 12 steps with the weights and
// the accountant's history of an uninterrupted run, bit for bit (a fixed
// seed, so that samples and noise repeat), with the constant and the
// adaptive clipping norm.
func TestResumeExact(t *testing.T) {
	for _, quantile := range []float64{0, 0.5} {
		fresh := func() *dp.Trainer {
			cfg := setup(t)
			cfg.NoiseMultiplier, cfg.Seed, cfg.TargetQuantile = 1.1, 5, quantile
			p, err := dp.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		run := func(p *dp.Trainer, n int) {
			for range n {
				if _, err := p.Step(); err != nil {
					t.Fatal(err)
				}
			}
		}
		weights := func(p *dp.Trainer) []float32 {
			var w []float32
			for _, q := range p.Train().Params() {
				w = append(w, q.Value.Data...)
			}
			return w
		}
		whole := fresh()
		run(whole, 12)
		path := filepath.Join(t.TempDir(), "ckpt.safetensors")
		first := fresh()
		run(first, 5)
		if err := checkpoint.SaveTrainer(path, checkpoint.Meta{}, first.Train()); err != nil {
			t.Fatal(err)
		}
		l, err := checkpoint.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		resumed := fresh()
		if err := l.RestoreTrainer(resumed.Train()); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(resumed.History(), first.History()) {
			t.Fatalf("quantile %v: restored history %v, saved %v", quantile, resumed.History(), first.History())
		}
		run(resumed, 7)
		if !slices.Equal(weights(resumed), weights(whole)) || !slices.Equal(resumed.History(), whole.History()) {
			t.Errorf("quantile %v: resumed run differs from the uninterrupted one (history %v vs %v)", quantile, resumed.History(), whole.History())
		}
		if whole.Private() {
			t.Error("a fixed seed's run says it is private")
		}
	}
}

// Adaptive clipping composes ε exactly: a run of T full-batch steps
// (q = 1) has the RDP of T Gaussian mechanisms on the pair (clipped sum,
// centred count), α/(2σ_eff²) + α(1/2)²/(2σ_b²) per step, which is the
// α/(2σ²) of the σ the accountant records; converted by hand (classical
// conversion, orders 2…64) it is the Trainer's ε. With q < 1 the history
// is T steps at (q, σ), what plain DP-SGD's is.
func TestAdaptiveEpsilon(t *testing.T) {
	const sigma, sigmaB, steps, delta = 1.5, 40.0, 30, 1e-5
	cfg := setup(t)
	cfg.ExpectedBatch, cfg.MicroBatch = 2000, 500 // q = 1
	cfg.NoiseMultiplier, cfg.TargetQuantile, cfg.CountNoise, cfg.Delta = sigma, 0.5, sigmaB, delta
	orders := make([]float64, 0, 63)
	for a := 2; a <= 64; a++ {
		orders = append(orders, float64(a))
	}
	cfg.Accountant = privacy.Options{Classical: true, Orders: orders}
	p, err := dp.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for range steps {
		if _, err := p.Step(); err != nil {
			t.Fatal(err)
		}
	}
	got, err := p.Epsilon()
	if err != nil {
		t.Fatal(err)
	}
	sigmaEff := estimator.EffectiveNoise(sigma, sigmaB)
	want := math.Inf(1)
	for _, a := range orders {
		rdp := steps * (a/(2*sigmaEff*sigmaEff) + a*0.25/(2*sigmaB*sigmaB))
		want = min(want, rdp-math.Log(delta)/(a-1))
	}
	if math.Abs(got-want) > 1e-9*want {
		t.Errorf("ε = %.12g, by hand %.12g", got, want)
	}

	cfg = setup(t)
	cfg.NoiseMultiplier, cfg.TargetQuantile = sigma, 0.9
	p, err = dp.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for range steps {
		if _, err := p.Step(); err != nil {
			t.Fatal(err)
		}
	}
	if h := p.History(); !slices.Equal(h, privacy.History{{SampleRate: 0.05, NoiseMultiplier: sigma, Count: steps}}) {
		t.Errorf("history %v, want %d steps at q = 0.05, σ = %g", h, steps, sigma)
	}
}

// Bad settings are *setting.Error values naming the field.
func TestConfigErrors(t *testing.T) {
	for _, tt := range []struct {
		edit  func(c *dp.Config)
		field string
	}{
		{func(c *dp.Config) {}, "NoiseMultiplier"},
		{func(c *dp.Config) { c.NoiseMultiplier, c.TargetEpsilon = 1, 1 }, "NoiseMultiplier"},
		{func(c *dp.Config) { c.TargetEpsilon = 1 }, "Steps"},
		{func(c *dp.Config) { c.NoiseMultiplier, c.ExpectedBatch = 1, 0 }, "ExpectedBatch"},
		{func(c *dp.Config) { c.NoiseMultiplier, c.ExpectedBatch = 1, 2001 }, "ExpectedBatch"},
		{func(c *dp.Config) { c.NoiseMultiplier, c.MicroBatch = 1, -1 }, "MicroBatch"},
		{func(c *dp.Config) { c.NoiseMultiplier, c.Clip = 1, 0 }, "Clip"},
		{func(c *dp.Config) { c.NoiseMultiplier, c.Delta = 1, 1.0/2000 }, "Delta"},
		{func(c *dp.Config) { c.NoiseMultiplier = 1e200 }, "NoiseMultiplier"},
		{func(c *dp.Config) { c.NoiseMultiplier, c.CountNoise = 1, 5 }, "CountNoise"},
		{func(c *dp.Config) { c.NoiseMultiplier, c.TargetQuantile = 1, 1 }, "TargetQuantile"},
		{func(c *dp.Config) { c.NoiseMultiplier, c.TargetQuantile, c.QuantileRate = 1, 0.5, -1 }, "QuantileRate"},
		{func(c *dp.Config) { c.NoiseMultiplier, c.TargetQuantile, c.CountNoise = 1, 0.5, 0.4 }, "CountNoise"},
		{func(c *dp.Config) { c.TargetEpsilon, c.Steps = -1, 100 }, "Epsilon"},
	} {
		cfg := setup(t)
		tt.edit(&cfg)
		_, err := dp.New(cfg)
		var se *setting.Error
		if !errors.As(err, &se) || se.Field != tt.field {
			t.Errorf("want a *setting.Error naming %s, got %v", tt.field, err)
		}
	}
}
