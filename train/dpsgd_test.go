package train_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/setting"
	"github.com/psclip/psclip/train"
)

// DP-SGD's step equals its definition computed independently: batch-of-one
// gradients clipped to C and summed, plus σC times standard normal draws
// from a noise source of the same seed, divided by the expected batch size,
// to float32 rounding, whatever the micro-batches (three of them, or none:
// a noise-only step). The noise is drawn once per step: two micro-batches
// or one give the same noise.
func TestDPSGDStepMatchesDefinition(t *testing.T) {
	const (
		c, sigma = 0.3, 1.7
		seed     = 11
		expected = 6.5
	)
	rng := rand.New(rand.NewPCG(3, 3))
	b := batch(rng, 7)
	three, err := train.Split(b, 3)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		batches []train.Batch
	}{
		{"one batch", []train.Batch{b}},
		{"three micro-batches", three},
		{"no sample", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := mlp(5)
			var want []float64
			for _, g := range sampleGrads(t, model, b) {
				if tt.batches == nil {
					break
				}
				if want == nil {
					want = make([]float64, len(g))
				}
				for j, v := range clip(g, c) {
					want[j] += v
				}
			}
			p := 0
			for _, q := range model.Params() {
				p += q.Grad.Len()
			}
			if want == nil {
				want = make([]float64, p)
			}
			z := [][]float32{make([]float32, p)}
			estimator.NewGaussian(seed).Add(z, 1)
			for j := range want {
				want[j] = (want[j] + sigma*c*float64(z[0][j])) / expected
			}
			e, err := estimator.NewDPSGD(c, sigma, seed)
			if err != nil {
				t.Fatal(err)
			}
			opt := &captureOpt{params: model.Params()}
			tr, err := train.New(train.Config{Model: model, Loss: nn.CrossEntropy, Estimator: e, Optimizer: opt, ExpectedBatch: expected})
			if err != nil {
				t.Fatal(err)
			}
			st, err := tr.Step(tt.batches...)
			if err != nil {
				t.Fatal(err)
			}
			if opt.steps != 1 || st.Skipped {
				t.Fatalf("%d optimizer steps, skipped %v; want one update", opt.steps, st.Skipped)
			}
			// The noise and the clipped sum are rounded to float32 apart
			// and added: a few float32 units of the result.
			assertClose(t, flatten(opt.got), want, 1e-6)
		})
	}
}

// A noisy estimator needs an expected batch size and the Global scope, and
// no other estimator takes one: *setting.Error values naming the field.
func TestDPSGDConfig(t *testing.T) {
	e, err := estimator.NewDPSGD(1, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	model := mlp(1)
	opt := &captureOpt{params: model.Params()}
	tests := []struct {
		name  string
		cfg   train.Config
		field string // "": accepted
	}{
		{"dp-sgd", train.Config{Estimator: e, ExpectedBatch: 4}, ""},
		{"dp-sgd without ExpectedBatch", train.Config{Estimator: e}, "ExpectedBatch"},
		{"dp-sgd with a negative ExpectedBatch", train.Config{Estimator: e, ExpectedBatch: -4}, "ExpectedBatch"},
		{"dp-sgd with an infinite ExpectedBatch", train.Config{Estimator: e, ExpectedBatch: math.Inf(1)}, "ExpectedBatch"},
		{"dp-sgd in the MicroBatch scope", train.Config{Estimator: e, ExpectedBatch: 4, Scope: train.MicroBatch}, "Scope"},
		{"sgd with ExpectedBatch", train.Config{Estimator: estimator.SGD{}, ExpectedBatch: 4}, "ExpectedBatch"},
	}
	for _, tt := range tests {
		cfg := tt.cfg
		cfg.Model, cfg.Loss, cfg.Optimizer = model, nn.CrossEntropy, opt
		_, err := train.New(cfg)
		var se *setting.Error
		if (tt.field == "" && err != nil) || (tt.field != "" && (!errors.As(err, &se) || se.Field != tt.field)) {
			t.Errorf("%s: %v, want a *setting.Error naming %q", tt.name, err, tt.field)
		}
	}
	// Other estimators still refuse a step without micro-batches.
	tr, _ := newTrainer(t, model, estimator.SGD{}, train.Global)
	if _, err := tr.Step(); err != train.ErrNoBatches {
		t.Errorf("sgd Step(): %v, want ErrNoBatches", err)
	}
}
