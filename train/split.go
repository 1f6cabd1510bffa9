package train

import (
	"github.com/psclip/psclip/setting"
	"github.com/psclip/psclip/tensor"
)

// Split cuts a batch into k micro-batches for Step's gradient
// accumulation, sharing the batch's memory: contiguous parts in order whose
// sizes differ by at most one (micro-batch i holds samples i·n/k to
// (i+1)·n/k − 1 of n), or n micro-batches of one sample when the batch has
// fewer than k. Targets, class (Y) or float (T), are per sample or per
// position or output value: either way a micro-batch's share of them is
// its share of the samples.
//
// It refuses, with a *setting.Error naming the argument or field ("k",
// "X", "Y" or "T"), a k below 1, a batch with no sample (or nil, or one
// whose data does not fit its shape) and targets that do not divide evenly
// among the samples.
func Split(b Batch, k int) ([]Batch, error) {
	x := b.X
	if err := setting.Positive("k", k); err != nil {
		return nil, err
	}
	if x == nil || len(x.Shape) == 0 || x.Shape[0] < 1 || tensor.Numel(x.Shape) != len(x.Data) {
		var shape []int
		if x != nil {
			shape = x.Shape
		}
		return nil, setting.Errorf("X", shape, "a batch of at least one sample whose data fits its shape")
	}
	n := x.Dim(0)
	switch {
	case len(b.Y)%n != 0:
		return nil, setting.Errorf("Y", len(b.Y), "a number of targets that is a multiple of the %d samples", n)
	case len(b.T)%n != 0:
		return nil, setting.Errorf("T", len(b.T), "a number of targets that is a multiple of the %d samples", n)
	}
	k = min(k, n)
	per, perY, perT := x.Len()/n, len(b.Y)/n, len(b.T)/n
	bs := make([]Batch, k)
	for i := range bs {
		lo, hi := i*n/k, (i+1)*n/k
		shape := append([]int{hi - lo}, x.Shape[1:]...)
		bs[i].X = &tensor.Tensor{Shape: shape, Data: x.Data[lo*per : hi*per]}
		if b.Y != nil {
			bs[i].Y = b.Y[lo*perY : hi*perY]
		}
		if b.T != nil {
			bs[i].T = b.T[lo*perT : hi*perT]
		}
	}
	return bs, nil
}
