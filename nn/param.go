package nn

import "github.com/psclip/psclip/tensor"

// Param is a trainable tensor and the gradient accumulated for it.
type Param struct {
	// Name is the PyTorch-style name under which the tensor is saved and
	// loaded, e.g. "features.0.weight" or "transformer.h.0.attn.c_attn.weight".
	Name  string
	Value *tensor.Tensor
	Grad  *tensor.Tensor
}

// NewParam returns a parameter of the given shape with zero value and gradient.
func NewParam(name string, shape ...int) *Param {
	return &Param{Name: name, Value: tensor.New(shape...), Grad: tensor.New(shape...)}
}
