package nn

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/psclip/psclip/tensor"
)

// MeanPool by hand: the mean of each sample's positions, and dy spread
// evenly over them.
func TestMeanPool(t *testing.T) {
	m := &MeanPool{}
	x := tensor.From([]float32{1, 2, 3, 4, 5, 9, 0, 0, 2, 2, 4, 4}, 2, 3, 2)
	y := m.Forward(&Context{}, x)
	want := []float32{3, 5, 2, 2}
	if len(y.Shape) != 2 || y.Shape[0] != 2 || y.Shape[1] != 2 {
		t.Fatalf("output %v, want [2 2]", y)
	}
	for i, w := range want {
		if y.Data[i] != w {
			t.Fatalf("output %v, want %v", y.Data, want)
		}
	}
	dx := m.Backward(&Context{}, tensor.From([]float32{3, 6, 0, 9}, 2, 2))
	for j, w := range []float32{1, 2, 1, 2, 1, 2, 0, 3, 0, 3, 0, 3} {
		if dx.Data[j] != w {
			t.Fatalf("input gradient %v", dx.Data)
		}
	}
}

// MeanPool's gradient is the finite differences of its forward pass, and
// a sequence model with it is clipped per sample as the brute force.
func TestMeanPoolChecks(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	checkGrad(t, &MeanPool{}, randTensor(rng, 3, 5, 4), gradOpt{})
	model := Sequential{NewLinear("0", 4, 5, true), &MeanPool{}, NewLinear("2", 5, 3, true)}
	randomize(rng, model, 0.5)
	x := randTensor(rng, 4, 6, 4)
	checkPerSample(t, model, x, ids(4), squareLoss(randTensor(rng, 4, 3)), medianClip)
}

// MeanPool takes [B,T,C] only.
func TestMeanPoolShape(t *testing.T) {
	var ie *InputError
	if _, err := (&MeanPool{}).OutShape([]int{2, 3}); !errors.As(err, &ie) {
		t.Errorf("OutShape([2 3]) = %v, want an *InputError", err)
	}
	if s, err := (&MeanPool{}).OutShape([]int{2, 3, 4}); err != nil || len(s) != 2 || s[0] != 2 || s[1] != 4 {
		t.Errorf("OutShape([2 3 4]) = %v, %v", s, err)
	}
}
