package nn

import "github.com/psclip/psclip/tensor"

// Flatten reshapes [B, d1, d2, …] to [B, d1·d2·…] without copying, as
// torch.flatten(x, 1). The zero value is ready to use.
type Flatten struct {
	shape []int // input shape of the latest Forward
}

// Forward returns x viewed as [B, rest].
func (f *Flatten) Forward(ctx *Context, x *tensor.Tensor) *tensor.Tensor {
	if len(x.Shape) < 1 {
		panic("nn: Flatten of a scalar")
	}
	f.shape = append(f.shape[:0], x.Shape...)
	return x.Reshape(x.Shape[0], tensor.Numel(x.Shape[1:]))
}

// Backward returns dy viewed with the input's shape.
func (f *Flatten) Backward(ctx *Context, dy *tensor.Tensor) *tensor.Tensor {
	return dy.Reshape(f.shape...)
}

// Params returns nil: Flatten has no parameters.
func (f *Flatten) Params() []*Param { return nil }
