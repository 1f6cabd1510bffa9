package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/psclip/psclip/tensor"
)

// The reference values are torch.nn.functional.gelu(x, approximate="tanh")
// evaluated in float64. Far left, where 1 + tanh(u) cancels (torch's float32
// tanh rounds it to exactly 0), the value is still right relatively.
func TestGELUValues(t *testing.T) {
	for _, tc := range []struct{ x, want float64 }{
		{-10, -1.2040923482098023e-37},
		{-6, -8.43964670076231e-11},
		{-3, -0.0036373920817729943},
		{-1, -0.15880800939172324},
		{-0.5, -0.15428599017485606},
		{0.5, 0.34571400982514394},
		{1, 0.8411919906082768},
		{2, 1.954597694087775},
		{3, 2.996362607918227},
	} {
		y := (&GELU{}).Forward(&Context{}, tensor.From([]float32{float32(tc.x)}, 1, 1))
		if got := float64(y.Data[0]); math.Abs(got-tc.want) > 2e-7*math.Abs(tc.want) {
			t.Errorf("gelu(%v) = %v, want %v", tc.x, got, tc.want)
		}
	}
}

func TestGELUGrad(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := randTensor(rng, 3, 4, 5)
	for i := range x.Data {
		x.Data[i] *= 2
	}
	checkGrad(t, &GELU{}, x, gradOpt{})
}
