package nn

import (
	"slices"

	"github.com/psclip/psclip/tensor"
)

// Param is a trainable tensor and the gradient accumulated for it.
type Param struct {
	// Name is the PyTorch-style name under which the tensor is saved and
	// loaded, e.g. "features.0.weight" or "transformer.h.0.attn.c_attn.weight".
	Name  string
	Value *tensor.Tensor
	Grad  *tensor.Tensor
	// Frozen makes the parameter a constant of the model, as PyTorch's
	// requires_grad=False: no layer forms its gradient (Grad is left as it
	// is), in the plain mode or the per-sample mode, and it has no part in
	// any gradient norm (per-sample, micro-batch or global). A layer whose
	// parameters are all frozen does no weight-gradient work; the layers
	// before the first one with a parameter to train are left out of the
	// backward pass altogether (BackwardParams). An optimizer refuses a
	// frozen parameter, and train.New trains exactly the model's
	// parameters that are not frozen (Trainable).
	Frozen bool
}

// NewParam returns a parameter of the given shape with zero value and gradient.
func NewParam(name string, shape ...int) *Param {
	return &Param{Name: name, Value: tensor.New(shape...), Grad: tensor.New(shape...)}
}

// Freeze sets Frozen on every parameter of l: freezing a model's backbone
// is nn.Freeze(backbone).
func Freeze(l Layer) {
	for _, p := range l.Params() {
		p.Frozen = true
	}
}

// Trainable returns the parameters of ps that are not frozen, in their
// order, each once: the list to give an optimizer.
func Trainable(ps []*Param) []*Param {
	var out []*Param
	for i, p := range ps {
		if p != nil && !p.Frozen && !slices.Contains(ps[:i], p) {
			out = append(out, p)
		}
	}
	return out
}

// trains reports whether l has a parameter that is not frozen.
func trains(l Layer) bool {
	for _, p := range l.Params() {
		if p != nil && !p.Frozen {
			return true
		}
	}
	return false
}
