package quadratic

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The step's reductions give, to the bit, what their definitions give
// summed in order, for batch sizes and dimensions around the vector
// kernels' multiples of 8 and 16.
func TestStepReductionsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 7, 8, 9, 16, 37, 64} {
		for _, d := range []int{1, 2, 8, 10, 15, 16, 17, 19, 33} {
			noise := make([]float64, n*d)
			x := make([]float64, d)
			w := make([]float64, n)
			for i := range noise {
				noise[i] = rng.NormFloat64() * math.Exp(4*rng.Float64())
			}
			for i := range x {
				x[i] = rng.NormFloat64()
			}
			for i := range w {
				w[i] = rng.Float64() / float64(n)
			}
			norms := make([]float64, n)
			sampleNorms(x, noise, norms)
			for k, got := range norms {
				var sq float64
				for j := range d {
					y := x[j] + noise[k*d+j]
					sq += y * y
				}
				if want := math.Sqrt(sq); got != want {
					t.Fatalf("n=%d d=%d: norm %d = %v, want %v", n, d, k, got, want)
				}
			}
			sum := make([]float64, d+1)
			sum[d] = 42 // past the end: must stay
			sw := weightedSum(w, noise, sum[:d])
			for j := range d {
				var want float64
				for k := range n {
					want += w[k] * noise[k*d+j]
				}
				if sum[j] != want {
					t.Fatalf("n=%d d=%d: sum %d = %v, want %v", n, d, j, sum[j], want)
				}
			}
			var want float64
			for _, v := range w {
				want += v
			}
			if sw != want || sum[d] != 42 {
				t.Fatalf("n=%d d=%d: Σw = %v, want %v; sum[d] = %v, want 42", n, d, sw, want, sum[d])
			}
		}
	}
}
