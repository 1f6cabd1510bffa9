package nn

import (
	"fmt"
	"math"

	"github.com/psclip/psclip/tensor"
)

// The losses of float targets (train.FloatLoss): a sample's loss is the
// mean over its P output values of an elementwise loss ℓ(out, t),
//
//	loss_i = (1/P) Σ_j ℓ(out_ij, t_ij),
//
// PyTorch's mean reduction within one sample ([B,P] outputs, or [B,T,P']
// with P = T·P'). targets holds one value per output value, in the
// output's order; a wrong number of targets, a NaN or infinite one, or an
// output with no sample dimension is an error. Each returns every sample's
// loss and the gradient of Σ_i loss_i with respect to the output, ℓ'/P, so
// that sample i's slice of dout is the gradient of its own loss: the
// per-sample rule the per-sample mode needs, as CrossEntropy's. The sums
// are formed in float64.

// MSE is the mean squared error, for regression: ℓ = (out − t)², PyTorch's
// MSELoss.
func MSE(out *tensor.Tensor, targets []float32) (losses []float32, dout *tensor.Tensor, err error) {
	return elementwiseLoss("mean squared error", out, targets, func(o, t float64) (float64, float64) {
		e := o - t
		return e * e, 2 * e
	})
}

// Huber returns the Huber loss with threshold delta, for regression robust
// to outlying targets (PyTorch's HuberLoss(delta)): ℓ = e²/2 where |e| =
// |out − t| ≤ delta, else delta·(|e| − delta/2); its gradient, e or
// ±delta, is bounded by delta. A delta that is not positive and finite is
// an error of every call.
func Huber(delta float64) func(out *tensor.Tensor, targets []float32) ([]float32, *tensor.Tensor, error) {
	return func(out *tensor.Tensor, targets []float32) ([]float32, *tensor.Tensor, error) {
		if !(delta > 0) || math.IsInf(delta, 0) {
			return nil, nil, fmt.Errorf("nn: Huber loss: delta %v, want a positive finite threshold", delta)
		}
		return elementwiseLoss("Huber loss", out, targets, func(o, t float64) (float64, float64) {
			e := o - t
			if math.Abs(e) <= delta {
				return e * e / 2, e
			}
			return delta * (math.Abs(e) - delta/2), math.Copysign(delta, e)
		})
	}
}

// BCEWithLogits is binary cross-entropy on logits, for binary
// classification (PyTorch's BCEWithLogitsLoss): with σ the logistic
// function, ℓ = −t·log σ(out) − (1 − t)·log(1 − σ(out)), formed stably as
// max(out, 0) − out·t + log(1 + e^−|out|); its gradient is σ(out) − t.
// Targets must lie in [0, 1] (probabilities; 0 and 1 for hard labels).
func BCEWithLogits(out *tensor.Tensor, targets []float32) (losses []float32, dout *tensor.Tensor, err error) {
	for k, v := range targets {
		if !(v >= 0 && v <= 1) {
			return nil, nil, fmt.Errorf("nn: binary cross-entropy: target %v at position %d is outside [0, 1]", v, k)
		}
	}
	return elementwiseLoss("binary cross-entropy", out, targets, func(o, t float64) (float64, float64) {
		return max(o, 0) - o*t + math.Log1p(math.Exp(-math.Abs(o))), 1/(1+math.Exp(-o)) - t
	})
}

// elementwiseLoss checks out and targets and forms every sample's mean of
// loss(out_ij, t_ij) and the gradient of their sum, which loss returns as
// its second value before the division by P.
func elementwiseLoss(name string, out *tensor.Tensor, targets []float32, loss func(o, t float64) (float64, float64)) (losses []float32, dout *tensor.Tensor, err error) {
	if out == nil || len(out.Shape) < 2 {
		return nil, nil, fmt.Errorf("nn: %s of output %v: want [B,…] with at least one value per sample", name, out)
	}
	if len(targets) != out.Len() {
		return nil, nil, fmt.Errorf("nn: %s: %d targets for output %v, want %d", name, len(targets), out, out.Len())
	}
	for k, v := range targets {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, nil, fmt.Errorf("nn: %s: target %v at position %d is not finite", name, v, k)
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
				l, g := loss(float64(out.Data[j]), float64(targets[j]))
				sum += l
				dout.Data[j] = float32(g * inv)
			}
			losses[i] = float32(sum * inv)
		}
	})
	return losses, dout, nil
}
