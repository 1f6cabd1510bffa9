package scatter

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"
)

// The mixed-radix transform against the definition, a direct O(n²) sum
// in float64, for lengths with every small factor and a prime, and its
// inverse back to the input.
func TestFFTMatchesDFT(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, n := range []int{1, 2, 3, 4, 5, 7, 9, 12, 18, 36, 40, 49, 97} {
		x := make([]complex128, n)
		for i := range x {
			x[i] = complex(rng.NormFloat64(), rng.NormFloat64())
		}
		got, back, tmp := make([]complex128, n), make([]complex128, n), make([]complex128, n)
		p := newFFTPlan(n)
		p.transform(got, x, tmp, false)
		for k := range n {
			var want complex128
			for j := range n {
				want += x[j] * cmplx.Exp(complex(0, -2*math.Pi*float64(j*k%n)/float64(n)))
			}
			if cmplx.Abs(got[k]-want) > 1e-12*float64(n) {
				t.Fatalf("n %d, X_%d = %v, want %v", n, k, got[k], want)
			}
		}
		p.transform(back, got, tmp, true)
		for j := range n {
			if cmplx.Abs(back[j]-x[j]) > 1e-13*float64(n) {
				t.Fatalf("n %d: inverse gives x_%d = %v, want %v", n, j, back[j], x[j])
			}
		}
	}
}
