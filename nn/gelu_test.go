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

// TestGELUErfFastExp sweeps x over float32 arguments, evenly in [−12, 12]
// and across all magnitudes, comparing the exact GELU and its derivative
// with the same formulas on math.Exp: exp's and math.Exp's float64 results
// differ by an ulp or two, which moves the float32 rounding only when the
// exact value lies within that of a rounding boundary. (The tanh GELU is
// kernels.GELUTanh, tested there.)
func TestGELUErfFastExp(t *testing.T) {
	ref := func(x float64) (y, d float64) {
		phi := 0.5 * math.Erfc(-x/math.Sqrt2)
		return x * phi, phi + x*math.Exp(-x*x/2)/math.Sqrt(2*math.Pi)
	}
	var xs []float32
	const n = 1 << 19
	for i := range n + 1 {
		xs = append(xs, float32(-12+24*float64(i)/n))
	}
	for b := uint32(0); b < 0x7f800000; b += 4099 {
		v := math.Float32frombits(b)
		xs = append(xs, v, -v)
	}
	y, d := make([]float32, len(xs)), make([]float32, len(xs))
	geluErf(xs, y, d)
	differ := 0
	for i, x := range xs {
		wy, wd := ref(float64(x))
		for _, p := range [][2]float32{{y[i], float32(wy)}, {d[i], float32(wd)}} {
			if math.Float32bits(p[0]) == math.Float32bits(p[1]) {
				continue
			}
			differ++
			if math.Nextafter32(p[1], p[0]) != p[0] {
				t.Fatalf("gelu(%v): %v against %v on math.Exp, more than 1 ulp", x, p[0], p[1])
			}
		}
	}
	t.Logf("%d of %d float32 values differ by 1 ulp", differ, 2*len(xs))
	if frac := float64(differ) / float64(2*len(xs)); frac > 1e-4 {
		t.Errorf("%.2g of the float32 values differ from the math.Exp formula, want ≤ 1e-4", frac)
	}
}

// BenchmarkGELU times the forward and backward of one GPT MLP activation
// (batch 12, T 64, 4·128 features).
func BenchmarkGELU(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	x := randTensor(rng, 12, 64, 512)
	dy := randTensor(rng, 12, 64, 512)
	for _, exact := range []bool{false, true} {
		name := "tanh"
		if exact {
			name = "exact"
		}
		b.Run(name, func(b *testing.B) {
			g := &GELU{Exact: exact}
			var ctx Context
			for b.Loop() {
				g.Forward(&ctx, x)
				g.Backward(&ctx, dy)
			}
		})
	}
}
