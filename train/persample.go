package train

import (
	"math"

	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/tensor"
)

// PerSampleNorms runs one forward pass of model on x with dropout off (a
// fresh nn.Context) and one per-sample backward pass of loss, and returns
// every sample's loss and the norm of its gradient ‖∇θ loss_i‖, without
// forming any gradient or touching the parameters. It is the sequence Step
// runs for a per-sample estimator, stopped before the estimator weighs the
// norms; "psclip persample" writes its results for comparison with another
// framework.
func PerSampleNorms(model nn.Layer, loss Loss, x *tensor.Tensor, y []int32) ([]float32, []float64, error) {
	ctx := &nn.Context{}
	n := x.Dim(0)
	ctx.BeginPerSample(n) // before Forward, as Step does
	losses, dout, err := loss(model.Forward(ctx, x), y)
	if err != nil {
		return nil, nil, err
	}
	model.Backward(ctx, dout)
	norms := make([]float64, n)
	for i, sq := range ctx.SqNorms() {
		norms[i] = math.Sqrt(sq)
	}
	return losses, norms, nil
}
