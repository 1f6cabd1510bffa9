package train

import "github.com/psclip/psclip/tensor"

// Split cuts a batch of k·b samples into k micro-batches of b, sharing the
// batch's memory, for Step's gradient accumulation. Targets are per sample
// or, for sequences, per position: either way y's share of a micro-batch is
// its share of the samples. The number of samples must be a multiple of k.
func Split(x *tensor.Tensor, y []int32, k int) []Batch {
	n := x.Dim(0) / k
	per, perY := x.Len()/x.Dim(0), len(y)/x.Dim(0)
	shape := append([]int{n}, x.Shape[1:]...)
	bs := make([]Batch, k)
	for i := range bs {
		bs[i] = Batch{X: &tensor.Tensor{Shape: shape, Data: x.Data[i*n*per : (i+1)*n*per]}, Y: y[i*n*perY : (i+1)*n*perY]}
	}
	return bs
}
