package nn

import (
	"math"

	"github.com/psclip/psclip/tensor"
)

// GELU is the Gaussian error linear unit in GPT-2's tanh approximation
// (nanoGPT's new_gelu, torch.nn.GELU(approximate="tanh")):
//
//	gelu(x) = ½·x·(1 + tanh(u)),  u = √(2/π)·(x + 0.044715·x³).
//
// It is evaluated as x·σ(2u) with the logistic σ(z) = 1/(1+e^(−z)), which
// equals ½(1 + tanh(u)) and keeps full relative precision where 1 + tanh(u)
// cancels (large negative x); σ is computed in float64, so the result is the
// float32 rounding of the exact value. torch agrees to rounding, except below
// x ≈ −5 where its float32 tanh saturates and it returns 0 for values under
// 1e-9.
type GELU struct {
	x     *tensor.Tensor
	y, dx *tensor.Tensor
	deriv []float32 // gelu'(x) of the latest Forward
}

const geluC = 0.7978845608028654 // √(2/π)

// elementwiseChunk is the number of elements per parallel task of an
// elementwise layer: large enough to amortise the goroutine hand-off.
const elementwiseChunk = 16384

// Forward applies gelu elementwise and keeps its derivative for Backward.
func (g *GELU) Forward(ctx *Context, x *tensor.Tensor) *tensor.Tensor {
	g.x = x
	g.y = reuse(g.y, x.Shape...)
	g.deriv = resize(g.deriv, x.Len())
	chunks(x.Len(), func(lo, hi int) {
		for i, v := range x.Data[lo:hi] {
			xv := float64(v)
			du := geluC * (1 + 3*0.044715*xv*xv) // u'(x)
			s := 1 / (1 + math.Exp(-2*geluC*(xv+0.044715*xv*xv*xv)))
			g.y.Data[lo+i] = float32(xv * s)
			// gelu' = ½(1+tanh u) + ½x(1−tanh²u)·u' = σ + 2x·σ(1−σ)·u'.
			g.deriv[lo+i] = float32(s + 2*xv*s*(1-s)*du)
		}
	})
	return g.y
}

// Backward multiplies dy by gelu'(x).
func (g *GELU) Backward(ctx *Context, dy *tensor.Tensor) *tensor.Tensor {
	if !dy.SameShape(g.x) {
		panic("nn: GELU: gradient " + dy.String() + " for input " + g.x.String())
	}
	g.dx = reuse(g.dx, dy.Shape...)
	chunks(dy.Len(), func(lo, hi int) {
		for i, v := range dy.Data[lo:hi] {
			g.dx.Data[lo+i] = v * g.deriv[lo+i]
		}
	})
	return g.dx
}

// Params returns nil: GELU has no parameters.
func (g *GELU) Params() []*Param { return nil }

// chunks runs f over [0, n) in blocks of elementwiseChunk elements, in
// parallel. f must treat every element independently.
func chunks(n int, f func(lo, hi int)) {
	k := (n + elementwiseChunk - 1) / elementwiseChunk
	parallel(k, workers(k), func(_, lo, hi int) {
		f(lo*elementwiseChunk, min(hi*elementwiseChunk, n))
	})
}
