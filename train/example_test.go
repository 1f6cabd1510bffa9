package train_test

import (
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/optim"
	"github.com/psclip/psclip/tensor"
	"github.com/psclip/psclip/train"
)

// blobs returns n points in R^4 from 3 Gaussian classes, with a fraction of
// the labels flipped at random: outliers with large gradients.
func blobs(rng *rand.Rand, n int) train.Batch {
	x := tensor.New(n, 4)
	y := make([]int32, n)
	for i := range n {
		c := rng.IntN(3)
		for j := range 4 {
			x.Data[i*4+j] = float32(rng.NormFloat64())
		}
		x.Data[i*4+c] += 3
		if rng.Float64() < 0.1 {
			c = rng.IntN(3)
		}
		y[i] = int32(c)
	}
	return train.Batch{X: x, Y: y}
}

// A small MLP trained with PS-Clip-SGD: every sample's gradient is clipped
// to norm 1 before averaging, in one backward pass.
func Example() {
	rng := rand.New(rand.NewPCG(1, 2))
	model := nn.Sequential{nn.NewLinear("0", 4, 16, true), &nn.ReLU{}, nn.NewLinear("2", 16, 3, true)}
	nn.InitDefault(rng, model[0].(*nn.Linear).Weight, model[0].(*nn.Linear).Bias)
	nn.InitDefault(rng, model[2].(*nn.Linear).Weight, model[2].(*nn.Linear).Bias)

	est, err := estimator.Spec{Estimator: "ps-clip-sgd", Clip: 1}.New()
	if err != nil {
		log.Fatal(err)
	}
	opt, err := optim.NewSGD(model.Params(), optim.SGDConfig{LR: 0.1, Momentum: 0.9})
	if err != nil {
		log.Fatal(err)
	}
	tr, err := train.New(train.Config{Model: model, Loss: nn.CrossEntropy, Estimator: est, Optimizer: opt})
	if err != nil {
		log.Fatal(err)
	}
	var first, last train.Stats
	for step := range 200 {
		st, err := tr.Step(blobs(rng, 32))
		if err != nil {
			log.Fatal(err)
		}
		if step == 0 {
			first = st
		}
		last = st
	}
	fmt.Printf("loss %.1f → %.1f\n", first.Loss, last.Loss)
	fmt.Println("clipped samples in the first batch:", first.Clipped > 0)
	// Output:
	// loss 1.4 → 0.6
	// clipped samples in the first batch: true
}

// Gain is a custom layer, y = x ⊙ w with one weight per feature, that takes
// part in one-pass per-sample clipping. Its per-sample gradient is tiny, so
// it materialises it: g_i = Σ_t x_it ⊙ dy_it.
type Gain struct {
	W  *nn.Param
	x  *tensor.Tensor
	ps []float32 // per-sample gradients [B, d]
}

func NewGain(name string, d int) *Gain {
	g := &Gain{W: nn.NewParam(name, d)}
	for i := range g.W.Value.Data {
		g.W.Value.Data[i] = 1
	}
	return g
}

func (g *Gain) Params() []*nn.Param { return []*nn.Param{g.W} }

func (g *Gain) Forward(ctx *nn.Context, x *tensor.Tensor) *tensor.Tensor {
	g.x = x
	y := tensor.New(x.Shape...)
	w := g.W.Value.Data
	for i, v := range x.Data {
		y.Data[i] = v * w[i%len(w)]
	}
	return y
}

func (g *Gain) Backward(ctx *nn.Context, dy *tensor.Tensor) *tensor.Tensor {
	d := len(g.W.Value.Data)
	dx := tensor.New(dy.Shape...)
	for i, v := range dy.Data {
		dx.Data[i] = v * g.W.Value.Data[i%d]
	}
	if !ctx.PerSample() {
		for i, v := range dy.Data {
			g.W.Grad.Data[i%d] += v * g.x.Data[i]
		}
		return dx
	}
	// Per-sample mode: each sample's gradient, its squared norm, and the
	// clipped sum deferred until the factors are known.
	n := dy.Dim(0)
	per := dy.Len() / n
	g.ps = make([]float32, n*d)
	sq := ctx.SqNorms()
	for i := range n {
		gi := g.ps[i*d : (i+1)*d]
		for j := i * per; j < (i+1)*per; j++ {
			gi[j%d] += dy.Data[j] * g.x.Data[j]
		}
		for _, v := range gi {
			sq[i] += float64(v) * float64(v)
		}
	}
	ctx.Defer(func(c []float32) {
		for i, ci := range c {
			if ci == 0 { // an excluded (non-finite) sample: skip, never multiply
				continue
			}
			for j, v := range g.ps[i*d : (i+1)*d] {
				g.W.Grad.Data[j] += ci * v
			}
		}
	})
	return dx
}

// A custom layer takes part in per-sample clipping by implementing nn.Layer
// and, in the per-sample mode, reporting its squared norms and deferring its
// clipped gradient (see Gain).
func Example_customLayer() {
	rng := rand.New(rand.NewPCG(3, 4))
	lin := nn.NewLinear("fc", 4, 3, true)
	nn.InitDefault(rng, lin.Weight, lin.Bias)
	model := nn.Sequential{NewGain("gain", 4), lin}

	est, _ := estimator.Spec{Estimator: "ps-clip-sgd", Clip: 0.5}.New()
	opt, _ := optim.NewSGD(model.Params(), optim.SGDConfig{LR: 0.05})
	tr, _ := train.New(train.Config{Model: model, Loss: nn.CrossEntropy, Estimator: est, Optimizer: opt})
	st, err := tr.Step(blobs(rng, 16))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d of %d samples clipped\n", st.Clipped, st.Samples)
	// Output:
	// 16 of 16 samples clipped
}

// The custom layer's per-sample norms and clipped gradient agree with the
// brute force: every sample's gradient from a batch of one, clipped, averaged.
func TestCustomLayerMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	lin := nn.NewLinear("fc", 4, 3, true)
	nn.InitDefault(rng, lin.Weight, lin.Bias)
	gain := NewGain("gain", 4)
	for i := range gain.W.Value.Data {
		gain.W.Value.Data[i] = float32(1 + 0.3*rng.NormFloat64())
	}
	model := nn.Sequential{gain, lin}
	b := blobs(rng, 9)
	gs := sampleGrads(t, model, b)
	norms := make([]float64, len(gs))
	for i, g := range gs {
		norms[i] = norm(g)
	}
	slices.Sort(norms)
	gamma := (norms[len(norms)/2-1] + norms[len(norms)/2]) / 2 // about half clip, far from any tie
	want := make([]float64, len(gs[0]))
	clipped := 0
	for _, g := range gs {
		if norm(g) > gamma {
			clipped++
		}
		for j, v := range clip(g, gamma) {
			want[j] += v / float64(len(gs))
		}
	}
	if clipped == 0 || clipped == len(gs) {
		t.Fatalf("%d of %d samples clipped: the test needs both kinds", clipped, len(gs))
	}
	est, _ := estimator.Spec{Estimator: "ps-clip-sgd", Clip: gamma}.New()
	tr, opt := newTrainer(t, model, est, train.Global)
	st, err := tr.Step(b)
	if err != nil {
		t.Fatal(err)
	}
	if st.Clipped != clipped {
		t.Errorf("clipped %d samples, brute force %d", st.Clipped, clipped)
	}
	assertClose(t, flatten(opt.got), want, 1e-5)
}

// MB-Clip with AdamW: a step accumulates 4 micro-batches, clipping each
// micro-batch's gradient to norm 1 before it is added.
func Example_microBatchClipping() {
	rng := rand.New(rand.NewPCG(7, 8))
	model := nn.Sequential{nn.NewLinear("0", 4, 16, false), &nn.ReLU{}, nn.NewLinear("2", 16, 3, false)}
	nn.InitDefault(rng, model[0].(*nn.Linear).Weight, nil)
	nn.InitDefault(rng, model[2].(*nn.Linear).Weight, nil)

	clip, _ := estimator.Spec{Estimator: "clip-sgd", Clip: 1}.New()
	opt, _ := optim.NewAdamW(optim.DecayGroups(model.Params(), 0.1),
		optim.AdamWConfig{LR: 3e-3, Beta1: 0.9, Beta2: 0.95, Eps: 1e-8})
	sched := optim.NewWarmupCosine(3e-3, 10, 100)
	tr, _ := train.New(train.Config{Model: model, Loss: nn.CrossEntropy, Estimator: clip,
		Optimizer: opt, Scope: train.MicroBatch})
	var loss float64
	for step := range 100 {
		opt.SetLR(sched.LR(step))
		st, err := tr.Step(blobs(rng, 8), blobs(rng, 8), blobs(rng, 8), blobs(rng, 8))
		if err != nil {
			log.Fatal(err)
		}
		loss = st.Loss
	}
	fmt.Printf("final loss below 0.6: %v\n", loss < 0.6 && !math.IsNaN(loss))
	// Output:
	// final loss below 0.6: true
}
