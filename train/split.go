package train

import (
	"github.com/psclip/psclip/setting"
	"github.com/psclip/psclip/tensor"
)

// Split cuts a batch into k micro-batches for Step's gradient
// accumulation, sharing the batch's memory: contiguous parts in order whose
// sizes differ by at most one (micro-batch i holds samples i·n/k to
// (i+1)·n/k − 1 of n), or n micro-batches of one sample when the batch has
// fewer than k. Targets are per sample or, for sequences, per position:
// either way y's share of a micro-batch is its share of the samples.
//
// It refuses, with a *setting.Error naming the argument ("k", "x" or "y"),
// a k below 1, a batch with no sample (or nil, or one whose data does not
// fit its shape) and targets that do not divide evenly among the samples.
func Split(x *tensor.Tensor, y []int32, k int) ([]Batch, error) {
	if err := setting.Positive("k", k); err != nil {
		return nil, err
	}
	if x == nil || len(x.Shape) == 0 || x.Shape[0] < 1 || tensor.Numel(x.Shape) != len(x.Data) {
		var shape []int
		if x != nil {
			shape = x.Shape
		}
		return nil, setting.Errorf("x", shape, "a batch of at least one sample whose data fits its shape")
	}
	n := x.Dim(0)
	if len(y)%n != 0 {
		return nil, setting.Errorf("y", len(y), "a number of targets that is a multiple of the %d samples", n)
	}
	k = min(k, n)
	per, perY := x.Len()/n, len(y)/n
	bs := make([]Batch, k)
	for i := range bs {
		lo, hi := i*n/k, (i+1)*n/k
		shape := append([]int{hi - lo}, x.Shape[1:]...)
		bs[i] = Batch{X: &tensor.Tensor{Shape: shape, Data: x.Data[lo*per : hi*per]}, Y: y[lo*perY : hi*perY]}
	}
	return bs, nil
}
