package train

import "github.com/psclip/psclip/tensor"

// Split cuts a batch into k micro-batches for Step's gradient
// accumulation, sharing the batch's memory: contiguous parts in order whose
// sizes differ by at most one (micro-batch i holds samples i·n/k to
// (i+1)·n/k − 1 of n), or n micro-batches of one sample when the batch has
// fewer than k. Targets are per sample or, for sequences, per position:
// either way y's share of a micro-batch is its share of the samples.
func Split(x *tensor.Tensor, y []int32, k int) []Batch {
	n := x.Dim(0)
	k = min(k, n)
	per, perY := x.Len()/n, len(y)/n
	bs := make([]Batch, k)
	for i := range bs {
		lo, hi := i*n/k, (i+1)*n/k
		shape := append([]int{hi - lo}, x.Shape[1:]...)
		bs[i] = Batch{X: &tensor.Tensor{Shape: shape, Data: x.Data[lo*per : hi*per]}, Y: y[lo*perY : hi*perY]}
	}
	return bs
}
