package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/psclip/psclip/tensor"
)

// The reference values are x·Φ(x) to 17 digits (mpmath) for Exact, and
// torch.nn.functional.gelu(x, approximate="tanh") evaluated in float64 for
// the default. Far left, where 1 + tanh(u) and 1 + erf cancel (torch's
// float32 tanh rounds it to exactly 0), the value is still right relatively.
func TestGELUValues(t *testing.T) {
	for _, tc := range []struct {
		exact   bool
		x, want float64
	}{
		{false, -10, -1.2040923482098023e-37},
		{false, -6, -8.43964670076231e-11},
		{false, -3, -0.0036373920817729943},
		{false, -1, -0.15880800939172324},
		{false, -0.5, -0.15428599017485606},
		{false, 0.5, 0.34571400982514394},
		{false, 1, 0.8411919906082768},
		{false, 2, 1.954597694087775},
		{false, 3, 2.996362607918227},
		{true, -10, -7.6198530241605261e-23},
		{true, -6, -5.9195258702261888e-9},
		{true, -3, -0.0040496940948902836},
		{true, -1, -0.15865525393145705},
		{true, -0.5, -0.15426876936299345},
		{true, 0.5, 0.34573123063700655},
		{true, 1, 0.84134474606854295},
		{true, 2, 1.9544997361036416},
		{true, 3, 2.9959503059051097},
	} {
		y := (&GELU{Exact: tc.exact}).Forward(&Context{}, tensor.From([]float32{float32(tc.x)}, 1, 1))
		if got := float64(y.Data[0]); math.Abs(got-tc.want) > 2e-7*math.Abs(tc.want) {
			t.Errorf("gelu(%v) (exact %v) = %v, want %v", tc.x, tc.exact, got, tc.want)
		}
	}
}

func TestGELUGrad(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	x := randTensor(rng, 3, 4, 5)
	for i := range x.Data {
		x.Data[i] *= 2
	}
	for _, exact := range []bool{false, true} {
		checkGrad(t, &GELU{Exact: exact}, x, gradOpt{})
	}
}
