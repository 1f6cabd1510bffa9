package nn

import (
	"fmt"

	"github.com/psclip/psclip/kernels"
	"github.com/psclip/psclip/tensor"
)

// AdaptiveAvgPool2d averages every channel of [B,C,h,w] images down to a
// fixed OH×OW grid with PyTorch's adaptive windows (which replicate when the
// input is smaller than the grid, as AlexNet's 6×6 pool on CIFAR's 2×2 maps).
type AdaptiveAvgPool2d struct {
	OH, OW int

	shape []int
	y, dx *tensor.Tensor
}

// NewAdaptiveAvgPool2d returns an adaptive average pool to oh×ow.
func NewAdaptiveAvgPool2d(oh, ow int) *AdaptiveAvgPool2d {
	if oh <= 0 || ow <= 0 {
		panic(fmt.Sprintf("nn: NewAdaptiveAvgPool2d(%d, %d): sizes must be positive", oh, ow))
	}
	return &AdaptiveAvgPool2d{OH: oh, OW: ow}
}

// Forward pools x.
func (a *AdaptiveAvgPool2d) Forward(ctx *Context, x *tensor.Tensor) *tensor.Tensor {
	if len(x.Shape) != 4 {
		panic(fmt.Sprintf("nn: AdaptiveAvgPool2d: input %v, want [B,C,h,w]", x))
	}
	b, c, h, w := x.Shape[0], x.Shape[1], x.Shape[2], x.Shape[3]
	a.shape = append(a.shape[:0], x.Shape...)
	a.y = reuse(a.y, b, c, a.OH, a.OW)
	in, out := h*w, a.OH*a.OW
	spans(b*c, max(1, passSpan/max(in, out)), func(lo, hi int) {
		kernels.AdaptiveAvgPool2d(x.Data[lo*in:hi*in], hi-lo, h, w, a.OH, a.OW, a.y.Data[lo*out:hi*out])
	})
	return a.y
}

// Backward spreads dy evenly over the windows.
func (a *AdaptiveAvgPool2d) Backward(ctx *Context, dy *tensor.Tensor) *tensor.Tensor {
	if a.y == nil || !dy.SameShape(a.y) {
		panic("nn: AdaptiveAvgPool2d: gradient " + dy.String() + " does not match the latest Forward")
	}
	b, c, h, w := a.shape[0], a.shape[1], a.shape[2], a.shape[3]
	a.dx = reuse(a.dx, a.shape...)
	in, out := h*w, a.OH*a.OW
	spans(b*c, max(1, passSpan/max(in, out)), func(lo, hi int) {
		clear(a.dx.Data[lo*in : hi*in])
		kernels.AdaptiveAvgPool2dBackward(dy.Data[lo*out:hi*out], hi-lo, h, w, a.OH, a.OW, a.dx.Data[lo*in:hi*in])
	})
	return a.dx
}

// Params returns nil: AdaptiveAvgPool2d has no parameters.
func (a *AdaptiveAvgPool2d) Params() []*Param { return nil }
