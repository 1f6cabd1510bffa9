package nn

import (
	"math/rand/v2"
	"testing"
)

func TestFlatten(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	f := &Flatten{}
	x := randTensor(rng, 2, 3, 4, 5)
	if y := f.Forward(&Context{}, x); y.Shape[0] != 2 || y.Shape[1] != 60 || len(y.Shape) != 2 {
		t.Fatalf("Flatten of %v gives %v", x, y)
	}
	checkGrad(t, f, x, gradOpt{})
}
