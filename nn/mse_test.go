package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/psclip/psclip/tensor"
)

// MSE by hand: out [[1,2],[3,5]] against [[0,2],[3,3]] gives the losses
// ((1)² + 0)/2 = 0.5 and (0 + (2)²)/2 = 2, and dout = 2(out − t)/2.
func TestMSE(t *testing.T) {
	out := tensor.From([]float32{1, 2, 3, 5}, 2, 2)
	losses, d, err := MSE(out, []float32{0, 2, 3, 3})
	if err != nil {
		t.Fatal(err)
	}
	if losses[0] != 0.5 || losses[1] != 2 {
		t.Errorf("losses %v, want [0.5 2]", losses)
	}
	for j, want := range []float32{1, 0, 0, 2} {
		if d.Data[j] != want {
			t.Errorf("dout %v, want [1 0 0 2]", d.Data)
			break
		}
	}
}

// MSE's gradient is the finite differences of its losses, sample by
// sample, for [B,P] and [B,T,P] outputs.
func TestMSEGrad(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for _, shape := range [][]int{{5, 3}, {3, 4, 2}} {
		out := randTensor(rng, shape...)
		checkLossGrad(t, MSE, out, randTensor(rng, shape...).Data)
	}
}

// The per-sample mode with MSE as the loss matches the brute force (every
// sample's gradient from a batch of one): a regressor on vectors, and on
// sequences through MeanPool.
func TestMSEPerSample(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	reg := Sequential{NewLinear("0", 4, 6, true), &GELU{}, NewLinear("2", 6, 2, true)}
	randomize(rng, reg, 0.5)
	checkPerSample(t, reg, randTensor(rng, 6, 4), ids(6), mseLoss(randTensor(rng, 6, 2)), medianClip)
	seq := Sequential{NewLinear("0", 4, 6, true), &GELU{}, &MeanPool{}, NewLinear("3", 6, 2, true)}
	randomize(rng, seq, 0.5)
	checkPerSample(t, seq, randTensor(rng, 5, 3, 4), ids(5), mseLoss(randTensor(rng, 5, 2)), medianClip)
}

// MSE refuses, with an error rather than a panic, what it cannot score.
func TestMSEBadInput(t *testing.T) {
	out := tensor.New(2, 3)
	for _, tc := range []struct {
		name    string
		out     *tensor.Tensor
		targets []float32
	}{
		{"nil output", nil, nil},
		{"no sample dimension", tensor.New(3), make([]float32, 3)},
		{"too few targets", out, make([]float32, 5)},
		{"NaN target", out, []float32{0, 0, float32(math.NaN()), 0, 0, 0}},
		{"infinite target", out, []float32{0, 0, 0, 0, 0, float32(math.Inf(-1))}},
	} {
		if _, _, err := MSE(tc.out, tc.targets); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}
