package nn

import (
	"math/rand/v2"
	"testing"

	"github.com/psclip/psclip/tensor"
)

// distinct fills x with a random permutation of 0, 0.1, 0.2, …: window
// maxima are unique and 0.1 apart, so finite differences never switch the
// winner.
func distinct(rng *rand.Rand, shape ...int) *tensor.Tensor {
	x := tensor.New(shape...)
	for i, j := range rng.Perm(x.Len()) {
		x.Data[i] = 0.1 * float32(j)
	}
	return x
}

func TestMaxPool2d(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, tc := range []struct{ k, stride, h, w int }{{2, 2, 4, 6}, {3, 2, 7, 5}, {2, 1, 3, 3}, {2, 1, 5, 4}} {
		checkGrad(t, NewMaxPool2d(tc.k, tc.stride), distinct(rng, 2, 3, tc.h, tc.w), gradOpt{})
	}
	y := NewMaxPool2d(2, 2).Forward(&Context{}, tensor.From([]float32{1, 5, 3, 2, 0, 0, 9, 4}, 1, 2, 2, 2))
	if y.Data[0] != 5 || y.Data[1] != 9 {
		t.Errorf("max-pool = %v, want [5 9]", y.Data)
	}
}
