package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/psclip/psclip/tensor"
)

// Reference values: tanh of the float32 arguments to 17 digits (mpmath); the gradient against
// finite differences, and per sample inside a model against the brute
// force.
func TestTanh(t *testing.T) {
	xs := []float32{-3, -0.5, 0, 1e-4, 0.625, 2}
	want := []float64{-0.99505475368673045, -0.46211715726000976, 0, 9.999999714045421e-5, 0.55459972234938229, 0.96402758007581688}
	y := (&Tanh{}).Forward(&Context{}, tensor.From(xs, 2, 3))
	for i, w := range want {
		if got := float64(y.Data[i]); math.Abs(got-w) > 6e-8*math.Abs(w) {
			t.Errorf("tanh(%v) = %v, want %v", xs[i], got, w)
		}
	}
	rng := rand.New(rand.NewPCG(1, 3))
	x := randTensor(rng, 3, 4, 5)
	for i := range x.Data {
		x.Data[i] *= 2
	}
	checkGrad(t, &Tanh{}, x, gradOpt{})
	m := Sequential{NewLinear("a", 6, 5, true), &Tanh{}, NewLinear("b", 5, 3, true)}
	randomize(rng, m, 0.8)
	checkPerSample(t, m, randTensor(rng, 4, 6), ids(4), squareLoss(randTensor(rng, 4, 3)), medianClip)
}
