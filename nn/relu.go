package nn

import "github.com/psclip/psclip/tensor"

// ReLU is max(x, 0) elementwise. The zero value is ready to use.
type ReLU struct {
	y, dx *tensor.Tensor
}

// Forward returns max(x, 0); NaN stays NaN, as in PyTorch.
func (r *ReLU) Forward(ctx *Context, x *tensor.Tensor) *tensor.Tensor {
	r.y = reuse(r.y, x.Shape...)
	for i, v := range x.Data {
		if v < 0 {
			v = 0
		}
		r.y.Data[i] = v
	}
	return r.y
}

// Backward passes dy where the output was positive.
func (r *ReLU) Backward(ctx *Context, dy *tensor.Tensor) *tensor.Tensor {
	if r.y == nil || !dy.SameShape(r.y) {
		panic("nn: ReLU: gradient " + dy.String() + " does not match the latest Forward")
	}
	r.dx = reuse(r.dx, dy.Shape...)
	for i, v := range dy.Data {
		if !(r.y.Data[i] > 0) {
			v = 0
		}
		r.dx.Data[i] = v
	}
	return r.dx
}

// Params returns nil: ReLU has no parameters.
func (r *ReLU) Params() []*Param { return nil }
