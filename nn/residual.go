package nn

import (
	"fmt"

	"github.com/psclip/psclip/kernels"
	"github.com/psclip/psclip/tensor"
)

// Residual is a residual connection y = x + F(x), as in a transformer block.
// F must keep the shape of its input. Its parameters are F's.
type Residual struct {
	F Layer

	y, dx *tensor.Tensor
}

// Forward returns x + F(x).
func (r *Residual) Forward(ctx *Context, x *tensor.Tensor) *tensor.Tensor {
	f := r.F.Forward(ctx, x)
	if !f.SameShape(x) {
		panic(fmt.Sprintf("nn: Residual: branch maps %v to %v", x, f))
	}
	r.y = reuse(r.y, x.Shape...)
	add(r.y.Data, x.Data, f.Data)
	return r.y
}

// Backward returns dy + F's input gradient for dy.
func (r *Residual) Backward(ctx *Context, dy *tensor.Tensor) *tensor.Tensor {
	df := r.F.Backward(ctx, dy)
	r.dx = reuse(r.dx, dy.Shape...)
	add(r.dx.Data, dy.Data, df.Data)
	return r.dx
}

// BackwardParams produces F's parameter gradients for dy, and no input
// gradient.
func (r *Residual) BackwardParams(ctx *Context, dy *tensor.Tensor) { BackwardParams(ctx, r.F, dy) }

// Params returns F's parameters.
func (r *Residual) Params() []*Param { return r.F.Params() }

// add sets z = x + y elementwise, in parallel.
func add(z, x, y []float32) {
	chunks(len(z), func(lo, hi int) {
		kernels.Add(z[lo:hi], x[lo:hi], y[lo:hi])
	})
}

// reuse returns t if it has the given shape, and a new zero tensor otherwise,
// so that a layer's output buffers are allocated once and reused every step.
func reuse(t *tensor.Tensor, shape ...int) *tensor.Tensor {
	if t != nil && len(t.Shape) == len(shape) {
		same := true
		for i, d := range shape {
			same = same && t.Shape[i] == d
		}
		if same {
			return t
		}
	}
	return tensor.New(shape...)
}

// resize returns s with length n, reusing its storage when it is big enough.
// The contents are unspecified.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
