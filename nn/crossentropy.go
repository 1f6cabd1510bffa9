package nn

import (
	"fmt"
	"math"

	"github.com/psclip/psclip/tensor"
)

// CrossEntropy is the softmax cross-entropy of logits against class targets.
// Logits are [B,C] with one target per sample, or [B,T,V] with targets
// [B,T] (flattened, B·T of them), in which case a sample's loss is the mean
// over its T positions, as PyTorch's mean reduction within one sequence.
//
// It returns every sample's loss and the gradient of Σ_i loss_i with respect
// to the logits, so that sample i's slice of dlogits is the gradient of its
// own loss (what the per-sample mode needs); a trainer scales it for a mean.
// Nil logits, a target outside [0, classes) or a wrong number of targets is
// an error.
// It has the signature of train.Loss.
func CrossEntropy(logits *tensor.Tensor, targets []int32) (losses []float32, dlogits *tensor.Tensor, err error) {
	if logits == nil || len(logits.Shape) != 2 && len(logits.Shape) != 3 {
		return nil, nil, fmt.Errorf("nn: cross-entropy of logits %v: want [B,C] or [B,T,V]", logits)
	}
	b, c := logits.Dim(0), logits.Dim(-1)
	rows := logits.Rows()
	if len(targets) != rows {
		return nil, nil, fmt.Errorf("nn: cross-entropy: %d targets for logits %v, want %d", len(targets), logits, rows)
	}
	for k, y := range targets {
		if y < 0 || int(y) >= c {
			return nil, nil, fmt.Errorf("nn: cross-entropy: target %d at position %d is outside [0,%d)", y, k, c)
		}
	}
	if b == 0 {
		return []float32{}, tensor.New(logits.Shape...), nil
	}
	t := rows / b
	losses = make([]float32, b)
	dlogits = tensor.New(logits.Shape...)
	inv := 1 / float64(t)
	parallel(b, workers(b), func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			var sum float64
			for r := i * t; r < (i+1)*t; r++ {
				sum += softmaxRow(logits.Data[r*c:(r+1)*c], int(targets[r]), inv, dlogits.Data[r*c:(r+1)*c])
			}
			losses[i] = float32(sum * inv)
		}
	})
	return losses, dlogits, nil
}

// softmaxRow returns -log softmax(x)[y] and writes s·(softmax(x) - onehot(y))
// into d. The maximum is subtracted before exponentiating and the partition
// sum is accumulated in float64, so large logits neither overflow nor lose
// the small probabilities.
func softmaxRow(x []float32, y int, s float64, d []float32) float64 {
	m := x[0]
	for _, v := range x {
		if v > m || v != v {
			m = v
		}
	}
	var z float64
	for j, v := range x {
		e := math.Exp(float64(v - m))
		d[j] = float32(e)
		z += e
	}
	f := s / z
	for j := range d {
		d[j] = float32(float64(d[j]) * f)
	}
	d[y] -= float32(s)
	return math.Log(z) - float64(x[y]-m)
}
