package nn

import (
	"math/rand/v2"
	"testing"

	"github.com/psclip/psclip/tensor"
)

// awayFromZero keeps every entry at least 0.1 from 0, so that finite
// differences never cross ReLU's kink.
func awayFromZero(x *tensor.Tensor) *tensor.Tensor {
	for i, v := range x.Data {
		if v >= 0 {
			x.Data[i] = v + 0.1
		} else {
			x.Data[i] = v - 0.1
		}
	}
	return x
}

func TestReLU(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	checkGrad(t, &ReLU{}, awayFromZero(randTensor(rng, 3, 7)), gradOpt{})
	y := (&ReLU{}).Forward(&Context{}, tensor.From([]float32{-1, 0, 2}, 1, 3))
	if y.Data[0] != 0 || y.Data[1] != 0 || y.Data[2] != 2 {
		t.Errorf("ReLU(-1, 0, 2) = %v", y.Data)
	}
}
