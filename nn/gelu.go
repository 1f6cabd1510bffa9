package nn

import (
	"math"

	"github.com/psclip/psclip/kernels"
	"github.com/psclip/psclip/tensor"
)

// GELU is the Gaussian error linear unit gelu(x) = x·Φ(x), Φ the standard
// normal distribution function. By default it is GPT-2's tanh approximation
// (nanoGPT's early new_gelu, torch.nn.GELU(approximate="tanh")):
//
//	gelu(x) ≈ ½·x·(1 + tanh(u)),  u = √(2/π)·(x + 0.044715·x³),
//
// evaluated as x·σ(2u) with the logistic σ(z) = 1/(1+e^(−z)), which equals
// ½(1 + tanh(u)) and keeps full relative precision where 1 + tanh(u)
// cancels (large negative x). With Exact it is x·Φ(x) itself, with
// Φ(x) = ½·erfc(−x/√2) (torch.nn.GELU(), today's nanoGPT model.py), so that
// a model exported under nanoGPT's names computes what nanoGPT computes.
// The two differ by at most 4.8·10⁻⁴ (near x = ±2.7). Both are computed in
// float64, so the result is the float32 rounding of the exact value. torch
// agrees to rounding, except far left (x ≲ −5 for tanh) where its float32
// evaluation returns 0.
type GELU struct {
	Exact bool // x·Φ(x) rather than the tanh approximation

	x     *tensor.Tensor
	y, dx *tensor.Tensor
	deriv []float32 // gelu'(x) of the latest Forward
}

// elementwiseChunk is the number of elements per parallel task of an
// elementwise layer: large enough to amortise the goroutine hand-off.
const elementwiseChunk = 16384

// Forward applies gelu elementwise and keeps its derivative for Backward.
func (g *GELU) Forward(ctx *Context, x *tensor.Tensor) *tensor.Tensor {
	g.x = x
	g.y = reuse(g.y, x.Shape...)
	g.deriv = resize(g.deriv, x.Len())
	f := kernels.GELUTanh
	if g.Exact {
		f = geluErf
	}
	chunks(x.Len(), func(lo, hi int) {
		f(x.Data[lo:hi], g.y.Data[lo:hi], g.deriv[lo:hi])
	})
	return g.y
}

// geluErf sets y to x·Φ(x) and d to its derivative Φ(x) + x·φ(x),
// elementwise. erfc keeps Φ's relative precision in the far left tail, where
// 1 + erf cancels.
func geluErf(x, y, d []float32) {
	y, d = y[:len(x)], d[:len(x)]
	for i, v := range x {
		x := float64(v)
		phi := 0.5 * math.Erfc(-x/math.Sqrt2)
		y[i], d[i] = float32(x*phi), float32(phi+x*exp(-x*x/2)/math.Sqrt(2*math.Pi))
	}
}

// exp returns e^x by kernels.Exp, for callers with one value at a time.
func exp(x float64) float64 {
	v := [1]float64{x}
	kernels.Exp(v[:])
	return v[0]
}

// Backward multiplies dy by gelu'(x).
func (g *GELU) Backward(ctx *Context, dy *tensor.Tensor) *tensor.Tensor {
	if !dy.SameShape(g.x) {
		panic("nn: GELU: gradient " + dy.String() + " for input " + g.x.String())
	}
	g.dx = reuse(g.dx, dy.Shape...)
	chunks(dy.Len(), func(lo, hi int) {
		kernels.Mul(g.dx.Data[lo:hi], dy.Data[lo:hi], g.deriv[lo:hi])
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
