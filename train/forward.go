package train

import (
	"fmt"
	"slices"

	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/tensor"
)

// forward runs model.Forward on x. With guard (the model's output shape
// for x could not be known without running it: a layer on the way is not
// an nn.Shaper, see check), a panic of the forward pass, the way a layer
// refuses an input it cannot take, is returned as an *nn.InputError
// instead; a model whose every layer is a Shaper was checked beforehand,
// and a panic there is a bug that propagates.
func forward(ctx *nn.Context, model nn.Layer, x *tensor.Tensor, guard bool) (out *tensor.Tensor, err error) {
	if guard {
		defer func() {
			if r := recover(); r != nil {
				out, err = nil, &nn.InputError{Layer: "model", Input: slices.Clone(x.Shape), Want: fmt.Sprintf("an input its Forward accepts (a layer that is not an nn.Shaper panicked: %v)", r)}
			}
		}()
	}
	return model.Forward(ctx, x), nil
}
