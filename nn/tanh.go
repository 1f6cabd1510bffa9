package nn

import (
	"github.com/psclip/psclip/kernels"
	"github.com/psclip/psclip/tensor"
)

// Tanh is the hyperbolic tangent elementwise (kernels.Tanh: float64,
// rounded to float32 once, the same bits on every build). It has no
// parameters, so the per-sample mode passes through it unchanged. The zero
// value is ready to use.
type Tanh struct {
	y, dx *tensor.Tensor // y: the latest output, [any shape]
}

// Forward returns tanh(x), of x's shape.
func (l *Tanh) Forward(ctx *Context, x *tensor.Tensor) *tensor.Tensor {
	l.y = reuse(l.y, x.Shape...)
	chunks(x.Len(), func(lo, hi int) { kernels.Tanh(x.Data[lo:hi], l.y.Data[lo:hi]) })
	return l.y
}

// Backward returns dy·(1 − y²), y the latest output: tanh' = 1 − tanh².
func (l *Tanh) Backward(ctx *Context, dy *tensor.Tensor) *tensor.Tensor {
	if l.y == nil || !dy.SameShape(l.y) {
		panic("nn: Tanh: gradient " + dy.String() + " does not match the latest Forward")
	}
	l.dx = reuse(l.dx, dy.Shape...)
	chunks(dy.Len(), func(lo, hi int) { kernels.TanhGrad(l.dx.Data[lo:hi], dy.Data[lo:hi], l.y.Data[lo:hi]) })
	return l.dx
}

// Params returns nil: Tanh has no parameters.
func (l *Tanh) Params() []*Param { return nil }
