package train_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/tensor"
	"github.com/psclip/psclip/train"
)

// captureOpt records the gradient it is asked to apply instead of applying it.
type captureOpt struct {
	params []*nn.Param
	got    [][]float32
	steps  int
}

func (o *captureOpt) Params() []*nn.Param { return o.params }

func (o *captureOpt) Step() {
	o.steps++
	o.got = o.got[:0]
	for _, p := range o.params {
		o.got = append(o.got, append([]float32(nil), p.Grad.Data...))
	}
}

// mlp is a two-layer perceptron with small random weights.
func mlp(seed uint64) nn.Sequential {
	m := nn.Sequential{nn.NewLinear("0", 5, 7, true), &nn.ReLU{}, nn.NewLinear("2", 7, 3, true)}
	rng := rand.New(rand.NewPCG(seed, 1))
	for _, p := range m.Params() {
		for i := range p.Value.Data {
			p.Value.Data[i] = float32(0.5 * rng.NormFloat64())
		}
	}
	return m
}

func batch(rng *rand.Rand, m int) train.Batch {
	x := tensor.New(m, 5)
	for i := range x.Data {
		x.Data[i] = float32(3 * rng.NormFloat64())
	}
	y := make([]int32, m)
	for i := range y {
		y[i] = int32(rng.IntN(3))
	}
	return train.Batch{X: x, Y: y}
}

// sampleGrads computes every sample's gradient with a batch of one in the
// plain mode: the brute force the one-pass machinery is checked against.
func sampleGrads(t *testing.T, model nn.Layer, b train.Batch) [][]float64 {
	t.Helper()
	var ctx nn.Context
	m := b.X.Dim(0)
	d := b.X.Len() / m
	var out [][]float64
	for i := range m {
		for _, p := range model.Params() {
			p.Grad.Zero()
		}
		x := tensor.From(append([]float32(nil), b.X.Data[i*d:(i+1)*d]...), append([]int{1}, b.X.Shape[1:]...)...)
		o := model.Forward(&ctx, x)
		_, dout, err := nn.CrossEntropy(o, b.Y[i:i+1])
		if err != nil {
			t.Fatal(err)
		}
		model.Backward(&ctx, dout)
		var g []float64
		for _, p := range model.Params() {
			for _, v := range p.Grad.Data {
				g = append(g, float64(v))
			}
		}
		out = append(out, g)
	}
	return out
}

func mean(gs [][]float64) []float64 {
	s := make([]float64, len(gs[0]))
	for _, g := range gs {
		for j, v := range g {
			s[j] += v / float64(len(gs))
		}
	}
	return s
}

func norm(g []float64) float64 {
	var s float64
	for _, v := range g {
		s += v * v
	}
	return math.Sqrt(s)
}

func clip(g []float64, gamma float64) []float64 {
	c := math.Min(1, gamma/norm(g))
	out := make([]float64, len(g))
	for i, v := range g {
		out[i] = c * v
	}
	return out
}

func scaled(g []float64, s float64) []float64 {
	out := make([]float64, len(g))
	for i, v := range g {
		out[i] = s * v
	}
	return out
}

func flatten(gs [][]float32) []float64 {
	var out []float64
	for _, g := range gs {
		for _, v := range g {
			out = append(out, float64(v))
		}
	}
	return out
}

func assertClose(t *testing.T, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("length %d, want %d", len(got), len(want))
	}
	var diff float64
	for i := range got {
		diff = math.Max(diff, math.Abs(got[i]-want[i]))
	}
	if scale := norm(want); diff > tol*math.Max(scale, 1e-12) {
		t.Fatalf("max abs difference %.3g exceeds %.1g·|want| = %.3g", diff, tol, tol*scale)
	}
}

func newTrainer(t *testing.T, model nn.Layer, e estimator.Estimator, scope train.Scope) (*train.Trainer, *captureOpt) {
	t.Helper()
	opt := &captureOpt{params: model.Params()}
	tr, err := train.New(train.Config{Model: model, Loss: nn.CrossEntropy, Estimator: e, Optimizer: opt, Scope: scope})
	if err != nil {
		t.Fatal(err)
	}
	return tr, opt
}

// The accumulated gradient equals the one the definitions give, computed
// from batch-of-one gradients: per-sample clipping, one clip of the summed
// gradient (train.Global) and the sum of individually clipped micro-batch
// gradients (train.MicroBatch, MB-Clip).
func TestStepMatchesDefinitions(t *testing.T) {
	const gamma = 0.4
	rng := rand.New(rand.NewPCG(7, 7))
	batches := []train.Batch{batch(rng, 4), batch(rng, 3), batch(rng, 5)}
	model := mlp(1)
	var micro [][]float64 // each micro-batch's mean gradient
	var all [][]float64   // every sample's gradient
	for _, b := range batches {
		gs := sampleGrads(t, model, b)
		micro = append(micro, mean(gs))
		all = append(all, gs...)
	}
	n := float64(len(all))

	clipSGD, _ := estimator.NewClipSGD(gamma)
	constant, _ := estimator.Constant(gamma)
	increasing, _ := estimator.Increasing(gamma/4, 1.5)
	tests := []struct {
		name  string
		e     estimator.Estimator
		scope train.Scope
		want  func() []float64
	}{
		{"global clip of the step's mean gradient", clipSGD, train.Global, func() []float64 {
			return clip(mean(all), gamma)
		}},
		{"micro-batch clip of each share (m_j/N)·g_j, then sum", clipSGD, train.MicroBatch, func() []float64 {
			s := make([]float64, len(all[0]))
			for j, g := range micro {
				share := scaled(g, float64(batches[j].X.Dim(0))/n)
				for i, v := range clip(share, gamma) {
					s[i] += v
				}
			}
			return s
		}},
		{"micro-batch clip of each mean gradient g_j, then weight by m_j/N", clipSGD, train.MicroBatchMean, func() []float64 {
			s := make([]float64, len(all[0]))
			for j, g := range micro {
				for i, v := range clip(g, gamma) {
					s[i] += v * float64(batches[j].X.Dim(0)) / n
				}
			}
			return s
		}},
		{"no clipping", estimator.SGD{}, train.Global, func() []float64 { return mean(all) }},
		{"per-sample clip", estimator.NewPSClip(constant), train.Global, func() []float64 {
			var cs [][]float64
			for _, g := range all {
				cs = append(cs, clip(g, gamma))
			}
			return mean(cs)
		}},
		{"increasing threshold, k over the whole step", estimator.NewPSClip(increasing), train.Global, func() []float64 {
			var cs [][]float64
			for k, g := range all {
				cs = append(cs, clip(g, increasing.Tau(k+1)))
			}
			return mean(cs)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr, opt := newTrainer(t, model, tt.e, tt.scope)
			st, err := tr.Step(batches...)
			if err != nil {
				t.Fatal(err)
			}
			if opt.steps != 1 || st.Skipped || st.Samples != 12 {
				t.Fatalf("steps %d, stats %+v", opt.steps, st)
			}
			assertClose(t, flatten(opt.got), tt.want(), 1e-4)
		})
	}
}

// With K identical micro-batches Global and MicroBatchMean give the update
// of one batch clipped to γ, and MicroBatch (which clips each share g/K)
// that of one batch clipped to K·γ.
func TestIdenticalMicroBatchesMatchOneBatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	b := batch(rng, 6)
	for _, tc := range []struct {
		scope    train.Scope
		gammaAcc float64 // the threshold that K = 4 micro-batches take
	}{{train.Global, 0.3}, {train.MicroBatchMean, 0.3}, {train.MicroBatch, 0.3 / 4}} {
		model := mlp(2)
		clipOne, _ := estimator.NewClipSGD(0.3)
		one, optOne := newTrainer(t, model, clipOne, tc.scope)
		st, err := one.Step(b)
		if err != nil {
			t.Fatal(err)
		}
		if st.ClippedBatches != 1 {
			t.Fatalf("%v: the test needs a clipped batch, stats %+v", tc.scope, st)
		}
		want := flatten(optOne.got)
		clipAcc, _ := estimator.NewClipSGD(tc.gammaAcc)
		acc, optAcc := newTrainer(t, model, clipAcc, tc.scope)
		if _, err := acc.Step(b, b, b, b); err != nil {
			t.Fatal(err)
		}
		assertClose(t, flatten(optAcc.got), want, 1e-5)
	}
}

// A sample whose input is NaN never reaches the update: per-sample clipping
// drops it, the plain modes leave its micro-batch out, and a step with
// nothing left makes no update.
func TestNonFiniteSamples(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	good := batch(rng, 4)
	poisoned := batch(rng, 4)
	poisoned.X.Data[2*5+1] = float32(math.NaN()) // sample 2
	constant, _ := estimator.Constant(1)
	clipSGD, _ := estimator.NewClipSGD(1)

	t.Run("per-sample drops the sample", func(t *testing.T) {
		model := mlp(3)
		gs := sampleGrads(t, model, poisoned)
		var finite [][]float64
		for i, g := range gs {
			if i != 2 {
				finite = append(finite, clip(g, 1))
			}
		}
		tr, opt := newTrainer(t, model, estimator.NewPSClip(constant), train.Global)
		st, err := tr.Step(poisoned)
		if err != nil {
			t.Fatal(err)
		}
		if st.Dropped != 1 || st.Skipped || math.IsNaN(st.Loss) {
			t.Fatalf("stats %+v: want one dropped sample and a finite loss", st)
		}
		assertClose(t, flatten(opt.got), mean(finite), 1e-4)
	})
	for _, scope := range []train.Scope{train.Global, train.MicroBatch, train.MicroBatchMean} {
		t.Run("plain "+scope.String()+" skips the micro-batch", func(t *testing.T) {
			model := mlp(4)
			g := mean(sampleGrads(t, model, good))
			want := clip(g, 1)
			if scope == train.MicroBatch {
				// The good micro-batch's share g/2 is clipped to 1, then
				// the step is averaged over the samples that are left.
				want = scaled(clip(scaled(g, 0.5), 1), 2)
			}
			tr, opt := newTrainer(t, model, clipSGD, scope)
			st, err := tr.Step(poisoned, good)
			if err != nil {
				t.Fatal(err)
			}
			if st.SkippedBatches != 1 || st.Skipped || opt.steps != 1 {
				t.Fatalf("stats %+v", st)
			}
			assertClose(t, flatten(opt.got), want, 1e-4)
		})
	}
	t.Run("nothing left: no update", func(t *testing.T) {
		model := mlp(5)
		tr, opt := newTrainer(t, model, clipSGD, train.Global)
		st, err := tr.Step(poisoned)
		if err != nil {
			t.Fatal(err)
		}
		if !st.Skipped || opt.steps != 0 {
			t.Fatalf("stats %+v, optimizer steps %d: want a skipped step", st, opt.steps)
		}
		for _, p := range model.Params() {
			for _, v := range p.Grad.Data {
				if v != 0 {
					t.Fatal("gradients must be cleared after a skipped step")
				}
			}
		}
	})
}

func TestBadInput(t *testing.T) {
	model := mlp(6)
	opt := &captureOpt{params: model.Params()}
	if _, err := train.New(train.Config{Model: model, Loss: nn.CrossEntropy, Optimizer: opt}); err == nil {
		t.Error("New without an estimator must fail")
	}
	tr, _ := newTrainer(t, model, estimator.SGD{}, train.Global)
	if _, err := tr.Step(); err == nil {
		t.Error("Step with no batch must fail")
	}
	b := batch(rand.New(rand.NewPCG(1, 1)), 2)
	b.Y[1] = 9 // only 3 classes
	if _, err := tr.Step(b); err == nil {
		t.Error("Step with an out-of-range target must fail")
	}
}
