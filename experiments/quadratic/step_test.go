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
			for i := range noise {
				noise[i] = rng.NormFloat64() * math.Exp(4*rng.Float64())
			}
			for i := range x {
				x[i] = rng.NormFloat64()
			}
			norms := make([]float64, n)
			sampleNorms(x, noise, norms)
			for k, got := range norms {
				var sq float64
				for j := range d {
					y := x[j] + noise[k*d+j]
					sq += float64(y * y)
				}
				if want := math.Sqrt(sq); got != want {
					t.Fatalf("n=%d d=%d: norm %d = %v, want %v", n, d, k, got, want)
				}
			}
			for nw := 1; nw <= 3; nw++ {
				ws, sums := make([][]float64, nw), make([][]float64, nw)
				for i := range ws {
					ws[i] = make([]float64, n)
					for k := range ws[i] {
						ws[i][k] = rng.Float64() / float64(n)
					}
					sums[i] = make([]float64, d+1)
					sums[i][d] = 42 // past the end: must stay
					sums[i] = sums[i][:d]
				}
				sw := make([]float64, nw)
				weightedSums(noise, ws, sums, sw)
				for i, w := range ws {
					var wantSW float64
					for k := range n {
						wantSW += w[k]
					}
					if sw[i] != wantSW || sums[i][:d+1][d] != 42 {
						t.Fatalf("n=%d d=%d sum %d of %d: Σw = %v, want %v; past the end %v, want 42", n, d, i, nw, sw[i], wantSW, sums[i][:d+1][d])
					}
					for j := range d {
						var want float64
						for k := range n {
							want += float64(w[k] * noise[k*d+j])
						}
						if sums[i][j] != want {
							t.Fatalf("n=%d d=%d sum %d of %d: [%d] = %v, want %v", n, d, i, nw, j, sums[i][j], want)
						}
					}
				}
			}
		}
	}
}
