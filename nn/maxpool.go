package nn

import (
	"fmt"

	"github.com/psclip/psclip/kernels"
	"github.com/psclip/psclip/tensor"
)

// MaxPool2d takes the maximum over k×k windows, stride apart, of every
// channel of [B,C,h,w] images (no padding, floor mode, as PyTorch's default).
type MaxPool2d struct {
	K, Stride int

	shape []int   // input shape of the latest Forward
	idx   []int32 // winner of every output element
	y, dx *tensor.Tensor
}

// NewMaxPool2d returns a k×k max-pool with the given stride.
func NewMaxPool2d(k, stride int) *MaxPool2d {
	if k <= 0 || stride <= 0 {
		panic(fmt.Sprintf("nn: NewMaxPool2d(%d, %d): sizes must be positive", k, stride))
	}
	return &MaxPool2d{K: k, Stride: stride}
}

// Forward pools x.
func (m *MaxPool2d) Forward(ctx *Context, x *tensor.Tensor) *tensor.Tensor {
	if len(x.Shape) != 4 || x.Shape[2] < m.K || x.Shape[3] < m.K {
		panic(fmt.Sprintf("nn: MaxPool2d(%d): input %v, want [B,C,h,w] with h,w ≥ %d", m.K, x, m.K))
	}
	b, c, h, w := x.Shape[0], x.Shape[1], x.Shape[2], x.Shape[3]
	oh, ow := kernels.ConvOut(h, m.K, m.Stride, 0), kernels.ConvOut(w, m.K, m.Stride, 0)
	m.shape = append(m.shape[:0], x.Shape...)
	m.y = reuse(m.y, b, c, oh, ow)
	m.idx = resize(m.idx, b*c*oh*ow)
	in, out := c*h*w, c*oh*ow
	parallel(b, workers(b), func(_, lo, hi int) {
		kernels.MaxPool2d(x.Data[lo*in:hi*in], (hi-lo)*c, h, w, m.K, m.Stride, m.y.Data[lo*out:hi*out], m.idx[lo*out:hi*out])
	})
	return m.y
}

// Backward routes dy to the window maxima.
func (m *MaxPool2d) Backward(ctx *Context, dy *tensor.Tensor) *tensor.Tensor {
	if m.y == nil || !dy.SameShape(m.y) {
		panic("nn: MaxPool2d: gradient " + dy.String() + " does not match the latest Forward")
	}
	b, c, h, w := m.shape[0], m.shape[1], m.shape[2], m.shape[3]
	oh, ow := dy.Shape[2], dy.Shape[3]
	m.dx = reuse(m.dx, m.shape...)
	in, out := c*h*w, c*oh*ow
	parallel(b, workers(b), func(_, lo, hi int) {
		// Image by image, so that the cleared gradient is still in cache
		// when the winners' gradients are added.
		for i := lo; i < hi; i++ {
			dx := m.dx.Data[i*in : (i+1)*in]
			clear(dx)
			kernels.MaxPool2dBackward(dy.Data[i*out:(i+1)*out], m.idx[i*out:(i+1)*out], c, h, w, oh, ow, dx)
		}
	})
	return m.dx
}

// Params returns nil: MaxPool2d has no parameters.
func (m *MaxPool2d) Params() []*Param { return nil }
