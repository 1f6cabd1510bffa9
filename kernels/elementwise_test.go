package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestElementwise checks every elementwise pass of the implementation in
// use against the formula evaluated here in Go, to the bit, on every length
// up to 70 (whole vectors and tails) with NaN, infinities and subnormals
// among the values.
func TestElementwise(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	special := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 1e-40, float32(math.Copysign(0, -1)), 3e38}
	vec := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(3 * rng.NormFloat64())
			if rng.IntN(25) == 0 {
				v[i] = special[rng.IntN(len(special))]
			}
		}
		return v
	}
	for n := range 71 {
		x, y, z0, w := vec(n), vec(n), vec(n), vec(n)
		z, want := make([]float32, n), make([]float32, n)

		Add(z, x, y)
		for i := range want {
			want[i] = x[i] + y[i]
		}
		sameBits(t, "Add", z, want)

		Mul(z, x, y)
		for i := range want {
			want[i] = x[i] * y[i]
		}
		sameBits(t, "Mul", z, want)

		copy(z, z0)
		AddMul(z, x, y)
		for i := range want {
			want[i] = z0[i] + float32(x[i]*y[i])
		}
		sameBits(t, "AddMul", z, want)

		ReLUGrad(z, x, y)
		for i := range want {
			want[i] = 0
			if y[i] > 0 {
				want[i] = x[i]
			}
		}
		sameBits(t, "ReLUGrad", z, want)

		b := float32(rng.NormFloat64())
		BiasReLU(z, x, b)
		for i := range want {
			want[i] = 0
			if u := x[i] + b; !(u < 0) {
				want[i] = u
			}
		}
		sameBits(t, "BiasReLU", z, want)
		copy(z, x)
		BiasReLU(z, z, b)
		sameBits(t, "BiasReLU in place", z, want)

		mean, rstd := rng.NormFloat64(), 1+rng.Float64()
		h, wantH := make([]float32, n), make([]float32, n)
		Normalize(z, h, x, w, mean, rstd)
		for i := range want {
			wantH[i] = float32((float64(x[i]) - mean) * rstd)
			want[i] = wantH[i] * w[i]
		}
		sameBits(t, "Normalize h", h, wantH)
		sameBits(t, "Normalize y", z, want)

		r, sg, sgx := float32(1+rng.Float64()), float32(rng.NormFloat64()), float32(rng.NormFloat64())
		NormalizeGrad(z, x, h, w, r, sg, sgx)
		for i := range want {
			want[i] = r * (float32(x[i]*w[i]) - sg - float32(h[i]*sgx))
		}
		sameBits(t, "NormalizeGrad", z, want)
	}
}

// BenchmarkElementwise times the passes on one GPT activation of batch 12,
// T 64, 128 features (the residual stream), a row of 128 at a time for the
// layer-norm passes.
func BenchmarkElementwise(b *testing.B) {
	rng := rand.New(rand.NewPCG(23, 24))
	const n, d = 12 * 64 * 128, 128
	x, y, z, h := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
	for i := range x {
		x[i], y[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
	}
	w := y[:d]
	for _, impl := range []struct {
		name string
		ops  *elemOps
	}{{"impl", elem}, {"go", elemGo}} {
		b.Run("Add/"+impl.name, func(b *testing.B) {
			for b.Loop() {
				impl.ops.add(z, x, y)
			}
		})
		b.Run("ReLUGrad/"+impl.name, func(b *testing.B) {
			for b.Loop() {
				impl.ops.reluGrad(z, x, y)
			}
		})
		b.Run("BiasReLU/"+impl.name, func(b *testing.B) {
			for b.Loop() {
				impl.ops.biasReLU(z, x, 0.1)
			}
		})
		b.Run("Normalize/"+impl.name, func(b *testing.B) {
			for b.Loop() {
				for r := 0; r < n; r += d {
					impl.ops.normalize(z[r:r+d], h[r:r+d], x[r:r+d], w, 0.1, 1.1)
				}
			}
		})
		b.Run("NormalizeGrad/"+impl.name, func(b *testing.B) {
			for b.Loop() {
				for r := 0; r < n; r += d {
					impl.ops.normalizeGrad(z[r:r+d], x[r:r+d], h[r:r+d], w, 1.1, 0.1, 0.2)
				}
			}
		})
	}
}
