package nn

import (
	"math/rand/v2"
	"testing"
)

func TestResidualGrad(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	fc := NewLinear("fc", 5, 5, true)
	randomize(rng, fc, 0.5)
	r := &Residual{F: Sequential{fc, &GELU{}}}
	if len(r.Params()) != 2 {
		t.Fatalf("params %v", r.Params())
	}
	checkGrad(t, r, randTensor(rng, 2, 3, 5), gradOpt{})
}

func TestResidualPerSample(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	fc1, fc2 := NewLinear("fc1", 5, 5, true), NewLinear("fc2", 5, 2, false)
	randomize(rng, fc1, 0.5)
	randomize(rng, fc2, 0.5)
	m := Sequential{&Residual{F: Sequential{fc1, &GELU{}}}, fc2}
	checkPerSample(t, m, randTensor(rng, 3, 4, 5), ids(3), squareLoss(randTensor(rng, 3, 4, 2)), medianClip)
}
