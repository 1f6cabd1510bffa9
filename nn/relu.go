package nn

import (
	"math"

	"github.com/psclip/psclip/tensor"
)

// ReLU is max(x, 0) elementwise. The zero value is ready to use.
type ReLU struct {
	y, dx *tensor.Tensor
}

// passSpan is the number of elements a goroutine of an elementwise pass
// (ReLU, dropout, pooling, a bias) takes at least: the passes are
// memory-bound and cheap, so small tensors stay on one.
const passSpan = 1 << 15

// Forward returns max(x, 0); NaN stays NaN, as in PyTorch.
func (r *ReLU) Forward(ctx *Context, x *tensor.Tensor) *tensor.Tensor {
	r.y = reuse(r.y, x.Shape...)
	spans(len(x.Data), passSpan, func(lo, hi int) {
		y := r.y.Data[lo:hi]
		for i, v := range x.Data[lo:hi] {
			y[i] = keepIf(v, !(v < 0))
		}
	})
	return r.y
}

// Backward passes dy where the output was positive.
func (r *ReLU) Backward(ctx *Context, dy *tensor.Tensor) *tensor.Tensor {
	if r.y == nil || !dy.SameShape(r.y) {
		panic("nn: ReLU: gradient " + dy.String() + " does not match the latest Forward")
	}
	r.dx = reuse(r.dx, dy.Shape...)
	spans(len(dy.Data), passSpan, func(lo, hi int) {
		dx, y := r.dx.Data[lo:hi], r.y.Data[lo:hi]
		for i, v := range dy.Data[lo:hi] {
			dx[i] = keepIf(v, y[i] > 0)
		}
	})
	return r.dx
}

// keepIf is v if keep and +0 otherwise, by masking v's bits: the compiler
// turns the integer choice into a conditional move, while a branch on the
// sign of an activation, as unpredictable as a coin, costs a misprediction
// every other element.
func keepIf(v float32, keep bool) float32 {
	var m uint32
	if keep {
		m = ^uint32(0)
	}
	return math.Float32frombits(math.Float32bits(v) & m)
}

// Params returns nil: ReLU has no parameters.
func (r *ReLU) Params() []*Param { return nil }
