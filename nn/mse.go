package nn

import (
	"fmt"
	"math"

	"github.com/psclip/psclip/tensor"
)

// MSE is the mean squared error of outputs against float targets, for
// regression: a sample's loss is the mean over its output values,
//
//	loss_i = (1/P) Σ_j (out_ij − t_ij)²,
//
// PyTorch's MSELoss with mean reduction within one sample (P values per
// sample: [B,P] outputs, or [B,T,P'] with P = T·P'). targets holds one
// value per output value, in the output's order; a wrong number of
// targets, or a NaN or infinite one, is an error, as is an output with no
// sample dimension.
//
// It returns every sample's loss and the gradient of Σ_i loss_i with
// respect to the output, 2(out_ij − t_ij)/P, so that sample i's slice of
// dout is the gradient of its own loss: the per-sample rule the
// per-sample mode needs, as CrossEntropy's. The sums are formed in
// float64.
func MSE(out *tensor.Tensor, targets []float32) (losses []float32, dout *tensor.Tensor, err error) {
	if out == nil || len(out.Shape) < 2 {
		return nil, nil, fmt.Errorf("nn: mean squared error of output %v: want [B,…] with at least one value per sample", out)
	}
	if len(targets) != out.Len() {
		return nil, nil, fmt.Errorf("nn: mean squared error: %d targets for output %v, want %d", len(targets), out, out.Len())
	}
	for k, v := range targets {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, nil, fmt.Errorf("nn: mean squared error: target %v at position %d is not finite", v, k)
		}
	}
	b := out.Dim(0)
	losses = make([]float32, b)
	dout = tensor.New(out.Shape...)
	if b == 0 {
		return losses, dout, nil
	}
	p := out.Len() / b
	inv := 1 / float64(p)
	parallel(b, workers(b), func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			var sum float64
			for j := i * p; j < (i+1)*p; j++ {
				e := float64(out.Data[j]) - float64(targets[j])
				sum += e * e
				dout.Data[j] = float32(2 * e * inv)
			}
			losses[i] = float32(sum * inv)
		}
	})
	return losses, dout, nil
}
