package nn

import (
	"math/rand/v2"
	"testing"

	"github.com/psclip/psclip/tensor"
)

func TestAdaptiveAvgPool2d(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, tc := range []struct{ h, w, oh, ow int }{{4, 6, 2, 3}, {5, 7, 3, 2}, {2, 2, 6, 6}} {
		checkGrad(t, NewAdaptiveAvgPool2d(tc.oh, tc.ow), randTensor(rng, 2, 3, tc.h, tc.w), gradOpt{})
	}
	// A 1×1 map replicated to 2×2, and a 2×2 map averaged to 1×1.
	y := NewAdaptiveAvgPool2d(2, 2).Forward(&Context{}, tensor.From([]float32{3}, 1, 1, 1, 1))
	if y.Data[0] != 3 || y.Data[3] != 3 {
		t.Errorf("replicating pool = %v", y.Data)
	}
	y = NewAdaptiveAvgPool2d(1, 1).Forward(&Context{}, tensor.From([]float32{1, 2, 3, 6}, 1, 1, 2, 2))
	if y.Data[0] != 3 {
		t.Errorf("average of 1,2,3,6 = %v", y.Data)
	}
}
