package train_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
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
	tests := []struct {
		name   string
		sample train.Batch
		micro  int
	}{
		{"one batch", b, 0},
		{"three micro-batches", b, 3},
		{"no sample", train.Batch{}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := mlp(5)
			var want []float64
			for _, g := range sampleGrads(t, model, b) {
				if tt.sample.X == nil {
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
			st, err := tr.PrivateStep(tt.sample, tt.micro)
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
		{"dp-sgd keeping norms", train.Config{Estimator: e, ExpectedBatch: 4, KeepNorms: true}, "KeepNorms"},
		{"dp-sgd keeping norms with SampleStats", train.Config{Estimator: e, ExpectedBatch: 4, KeepNorms: true, SampleStats: true}, ""},
		{"sgd with SampleStats", train.Config{Estimator: estimator.SGD{}, SampleStats: true}, "SampleStats"},
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

// A DP step cannot be taken over part of a Poisson sample by accident:
// Step refuses a noisy estimator (its noise would be added once per
// call), changing nothing, and PrivateStep, which takes the whole sample
// and cuts it into micro-batches itself, refuses an estimator without
// noise.
func TestPrivateStepMisuse(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	b := batch(rng, 6)
	e, err := estimator.NewDPSGD(1, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	model := mlp(5)
	opt := &captureOpt{params: model.Params()}
	tr, err := train.New(train.Config{Model: model, Loss: nn.CrossEntropy, Estimator: e, Optimizer: opt, ExpectedBatch: 6})
	if err != nil {
		t.Fatal(err)
	}
	parts, _ := train.Split(b, 3)
	before := flatten(paramValues(model.Params()))
	for _, call := range [][]train.Batch{parts, parts[:1], nil} {
		if _, err := tr.Step(call...); !errors.Is(err, train.ErrPrivateStep) {
			t.Errorf("Step(%d micro-batches) with dp-sgd: %v, want ErrPrivateStep", len(call), err)
		}
	}
	if opt.steps != 0 || !slices.Equal(flatten(paramValues(model.Params())), before) {
		t.Errorf("refused Steps changed the model (%d optimizer steps)", opt.steps)
	}
	if _, err := tr.PrivateStep(b, -1); err == nil {
		t.Error("PrivateStep with a negative micro-batch size: no error")
	}
	if _, err := tr.PrivateStep(train.Batch{Y: []int32{1}}, 0); err == nil {
		t.Error("PrivateStep with targets and no samples: no error")
	}
	sgd, _ := newTrainer(t, mlp(5), estimator.SGD{}, train.Global)
	if _, err := sgd.PrivateStep(b, 2); !errors.Is(err, train.ErrNotPrivate) {
		t.Errorf("PrivateStep with sgd: %v, want ErrNotPrivate", err)
	}
}

// Under DP, Stats hold only what the noised gradient determines unless
// Config.SampleStats asks for the rest: no loss, sample count, clipped
// count or per-sample norm of the private samples by default. AllDropped
// is reported either way.
func TestPrivateStats(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	b := batch(rng, 8)
	for _, release := range []bool{false, true} {
		e, err := estimator.NewDPSGD(0.01, 1, 3) // C small: samples clipped
		if err != nil {
			t.Fatal(err)
		}
		model := mlp(5)
		opt := &captureOpt{params: model.Params()}
		tr, err := train.New(train.Config{Model: model, Loss: nn.CrossEntropy, Estimator: e, Optimizer: opt, ExpectedBatch: 8,
			SampleStats: release, KeepNorms: release})
		if err != nil {
			t.Fatal(err)
		}
		st, err := tr.PrivateStep(b, 3)
		if err != nil {
			t.Fatal(err)
		}
		carries := st.Loss != 0 || st.Samples != 0 || st.Clipped != 0 || st.MeanSampleNorm != 0 || st.SampleNorms != (train.NormSummary{}) || st.Norms != nil || st.PerSampleBytes != 0
		if carries != release || !(st.GradNorm > 0) || st.AllDropped {
			t.Errorf("SampleStats %v: %+v; want sample statistics only when asked, a noised gradient norm", release, st)
		}
		if release && (st.Samples != 8 || st.Clipped == 0 || len(st.Norms) != 8) {
			t.Errorf("SampleStats: %d samples, %d clipped, %d norms; want 8, some, 8", st.Samples, st.Clipped, len(st.Norms))
		}
	}
}

// paramValues returns the parameters' values as slices.
func paramValues(ps []*nn.Param) [][]float32 {
	var v [][]float32
	for _, p := range ps {
		v = append(v, p.Value.Data)
	}
	return v
}
