package nn

import (
	"math"

	"github.com/psclip/psclip/tensor"
)

// GELU is the Gaussian error linear unit in GPT-2's tanh approximation
// (nanoGPT's new_gelu, torch.nn.GELU(approximate="tanh")):
//
//	gelu(x) = ½·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
//
// tanh is evaluated in float64 so that the result is the float32 rounding of
// the exact value, as torch computes it.
type GELU struct {
	x     *tensor.Tensor
	y, dx *tensor.Tensor
	deriv []float32 // gelu'(x) of the latest Forward
}

const geluC = 0.7978845608028654 // √(2/π)

// Forward applies gelu elementwise and keeps its derivative for Backward.
func (g *GELU) Forward(ctx *Context, x *tensor.Tensor) *tensor.Tensor {
	g.x = x
	g.y = reuse(g.y, x.Shape...)
	g.deriv = resize(g.deriv, x.Len())
	for i, v := range x.Data {
		xv := float64(v)
		u := geluC * (xv + 0.044715*xv*xv*xv)
		th := math.Tanh(u)
		g.y.Data[i] = float32(0.5 * xv * (1 + th))
		g.deriv[i] = float32(0.5*(1+th) + 0.5*xv*(1-th*th)*geluC*(1+3*0.044715*xv*xv))
	}
	return g.y
}

// Backward multiplies dy by gelu'(x).
func (g *GELU) Backward(ctx *Context, dy *tensor.Tensor) *tensor.Tensor {
	if !dy.SameShape(g.x) {
		panic("nn: GELU: gradient " + dy.String() + " for input " + g.x.String())
	}
	g.dx = reuse(g.dx, dy.Shape...)
	for i, v := range dy.Data {
		g.dx.Data[i] = v * g.deriv[i]
	}
	return g.dx
}

// Params returns nil: GELU has no parameters.
func (g *GELU) Params() []*Param { return nil }
