package nn

import (
	"github.com/psclip/psclip/kernels"
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
	spans(len(x.Data), passSpan, func(lo, hi int) { reluRow(r.y.Data[lo:hi], x.Data[lo:hi]) })
	return r.y
}

// Backward passes dy where the output was positive.
func (r *ReLU) Backward(ctx *Context, dy *tensor.Tensor) *tensor.Tensor {
	if r.y == nil || !dy.SameShape(r.y) {
		panic("nn: ReLU: gradient " + dy.String() + " does not match the latest Forward")
	}
	r.dx = reuse(r.dx, dy.Shape...)
	spans(len(dy.Data), passSpan, func(lo, hi int) { kernels.ReLUGrad(r.dx.Data[lo:hi], dy.Data[lo:hi], r.y.Data[lo:hi]) })
	return r.dx
}

// reluRow stores max(x, 0) into y (len(x) elements); NaN stays NaN.
func reluRow(y, x []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] = kernels.KeepIf(v, !(v < 0))
	}
}

// Params returns nil: ReLU has no parameters.
func (r *ReLU) Params() []*Param { return nil }
