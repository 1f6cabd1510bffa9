package nn

import (
	"fmt"

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

// Params returns F's parameters.
func (r *Residual) Params() []*Param { return r.F.Params() }

// add sets z = x + y elementwise, in parallel.
func add(z, x, y []float32) {
	chunks(len(z), func(lo, hi int) {
		y := y[lo:hi]
		for i, v := range x[lo:hi] {
			z[lo+i] = v + y[i]
		}
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

// sqNorm is Σ x_j² accumulated in float64, in four interleaved partial sums
// (independent dependency chains run about 3× faster than one; the order is
// fixed, so the result is reproducible).
func sqNorm(x []float32) float64 {
	var s0, s1, s2, s3 float64
	n := len(x) &^ 3
	for j := 0; j < n; j += 4 {
		a, b, c, d := float64(x[j]), float64(x[j+1]), float64(x[j+2]), float64(x[j+3])
		s0 += a * a
		s1 += b * b
		s2 += c * c
		s3 += d * d
	}
	for _, v := range x[n:] {
		s0 += float64(v) * float64(v)
	}
	return (s0 + s1) + (s2 + s3)
}

// axpy adds a·x into y.
func axpy(a float32, x, y []float32) {
	y = y[:len(x)]
	for j, v := range x {
		y[j] += a * v
	}
}
