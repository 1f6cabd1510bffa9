package nn_test

import (
	"fmt"
	"log"
	"math/rand/v2"
	"testing"

	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/nn/nntest"
	"github.com/psclip/psclip/optim"
	"github.com/psclip/psclip/tensor"
	"github.com/psclip/psclip/train"
)

// Gain is a custom layer, y = x ⊙ w with one weight per feature, that takes
// part in one-pass per-sample clipping. Its per-sample gradient is tiny, so
// it materialises it: g_i = Σ_t x_it ⊙ dy_it.
type Gain struct {
	W  *nn.Param
	x  *tensor.Tensor
	ps []float32 // per-sample gradients [B, d]
}

// NewGain returns a Gain of d features with weight 1.
func NewGain(name string, d int) *Gain {
	g := &Gain{W: nn.NewParam(name, d)}
	g.Init(nil)
	return g
}

// Init sets the weight to 1 (nn.Initializer, so nn.Init covers models with
// a Gain); it draws nothing.
func (g *Gain) Init(*rand.Rand) {
	for i := range g.W.Value.Data {
		g.W.Value.Data[i] = 1
	}
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
	if g.W.Frozen { // a constant: no gradient, no norm term
		return dx
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

// A custom layer takes part in one-pass per-sample clipping by implementing
// nn.Layer and, in the per-sample mode, adding its samples' squared norms
// and deferring its clipped gradient (see Gain); nntest checks it (see
// TestGain).
func Example_customLayer() {
	model := nn.Sequential{NewGain("gain", 4), nn.NewLinear("fc", 4, 3, true)}
	if err := nn.Init(model, 3); err != nil {
		log.Fatal(err)
	}
	ps, err := estimator.Constant(0.5)
	if err != nil {
		log.Fatal(err)
	}
	opt, err := optim.NewSGD(model.Params(), optim.SGDConfig{LR: 0.05})
	if err != nil {
		log.Fatal(err)
	}
	tr, err := train.New(train.Config{Model: model, Loss: nn.CrossEntropy, Estimator: estimator.NewPSClip(ps), Optimizer: opt})
	if err != nil {
		log.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	x := nntest.RandTensor(rng, 16, 4)
	y := make([]int32, 16)
	for i := range y {
		y[i] = int32(i % 3)
		x.Data[i*4+i%3] += 3
	}
	st, err := tr.Step(train.Batch{X: x, Y: y})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d of %d samples clipped\n", st.Clipped, st.Samples)
	// Output:
	// 16 of 16 samples clipped
}

// Gain passes the checks psclip's own layers pass: finite differences, the
// per-sample brute force and the clipped aggregate.
func TestGain(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	g := NewGain("gain", 4)
	for i := range g.W.Value.Data {
		g.W.Value.Data[i] = float32(1 + 0.3*rng.NormFloat64())
	}
	nntest.CheckLayer(t, g, nntest.RandTensor(rng, 6, 4))
	nntest.CheckLayer(t, g, nntest.RandTensor(rng, 3, 5, 4)) // sequences
	// Frozen, before a layer that trains.
	g.W.Frozen = true
	x := nntest.RandTensor(rng, 6, 4)
	m := nn.Sequential{g, nn.NewLinear("fc", 4, 3, true)}
	nntest.CheckGradients(t, m, x, nntest.Options{})
	nntest.CheckPerSample(t, m, x, []int32{0, 1, 2, 0, 1, 2}, nn.CrossEntropy, nntest.MedianClip)
}
