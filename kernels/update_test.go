package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestUpdates checks SGDMomentum and AdamW, on the implementation in use,
// against their formulas evaluated here in Go (every product rounded before
// it is added: no fused multiply-add on any architecture), to the bit, on every length
// up to 70, with both of lerp's branches and zeros, subnormals and large
// values among the arguments.
func TestUpdates(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	special := []float32{0, float32(math.Copysign(0, -1)), 1e-40, -3e-39, 1e30, -1e-30}
	vec := func(n int, positive bool) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
			if rng.IntN(20) == 0 {
				v[i] = special[rng.IntN(len(special))]
			}
			if positive {
				v[i] = float32(math.Abs(float64(v[i])))
			}
		}
		return v
	}
	for n := range 71 {
		w, g, b := vec(n, false), vec(n, false), vec(n, false)
		ww, wb := append([]float32(nil), w...), append([]float32(nil), b...)
		lr, wd, mu := float32(0.01), float32(1e-4), float32(0.9)
		SGDMomentum(w, g, b, lr, wd, mu)
		for j, x := range ww {
			wb[j] = float32(mu*wb[j]) + (g[j] + float32(wd*x))
			ww[j] = x - float32(lr*wb[j])
		}
		sameBits(t, "SGDMomentum b", b, wb)
		sameBits(t, "SGDMomentum w", w, ww)

		for _, weight := range []float32{0.1, 0.5, 0.8} {
			c := AdamWConsts{Decay: 0.9999, Lerp: weight, Beta2: 0.99, OneMinusBeta2: 0.01, BC2Sqrt: 0.3, Eps: 1e-8, StepSize: 1e-3}
			w, g, m, v := vec(n, false), vec(n, false), vec(n, false), vec(n, true)
			ww, wm, wv := append([]float32(nil), w...), append([]float32(nil), m...), append([]float32(nil), v...)
			AdamW(w, g, m, v, c)
			for j, x := range ww {
				x = float32(x * c.Decay)
				if weight < 0.5 {
					wm[j] += float32(weight * (g[j] - wm[j]))
				} else {
					wm[j] = g[j] - float32((g[j]-wm[j])*(1-weight))
				}
				wv[j] = float32(c.Beta2*wv[j]) + float32(c.OneMinusBeta2*g[j]*g[j])
				denom := float32(math.Sqrt(float64(wv[j])))/c.BC2Sqrt + c.Eps
				ww[j] = x - float32(c.StepSize*(wm[j]/denom))
			}
			sameBits(t, "AdamW m", m, wm)
			sameBits(t, "AdamW v", v, wv)
			sameBits(t, "AdamW w", w, ww)
		}
	}
}

// TestSqrt32 checks the claim AdamW's assembly rests on: the float32
// square root (what VSQRTPS computes) equals the float64 one rounded to
// float32, here over every 997th float32 bit pattern.
func TestSqrt32(t *testing.T) {
	x := make([]float32, 0, 16)
	for b := uint32(0); b < 0x7f800000; b += 997 {
		x = append(x, math.Float32frombits(b))
		if len(x) < 16 && b+997 < 0x7f800000 {
			continue
		}
		w, g, m, v := make([]float32, len(x)), make([]float32, len(x)), make([]float32, len(x)), append([]float32(nil), x...)
		// StepSize −1, m = 1, Eps 0, BC2Sqrt 1, Beta2 1, no g: w = 1/√v.
		for i := range m {
			m[i] = 1
		}
		AdamW(w, g, m, v, AdamWConsts{Decay: 1, Lerp: 0, Beta2: 1, OneMinusBeta2: 0, BC2Sqrt: 1, Eps: 0, StepSize: -1})
		for i, xi := range x {
			if want := 1 / float32(math.Sqrt(float64(xi))); math.Float32bits(w[i]) != math.Float32bits(want) {
				t.Fatalf("1/√%v: %v, want %v", xi, w[i], want)
			}
		}
		x = x[:0]
	}
}

// BenchmarkUpdates times one step over 2²⁰ parameters.
func BenchmarkUpdates(b *testing.B) {
	const n = 1 << 20
	rng := rand.New(rand.NewPCG(33, 34))
	w, g, m, v := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
	for i := range w {
		w[i], g[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
	}
	c := AdamWConsts{Decay: 0.9999, Lerp: 0.1, Beta2: 0.99, OneMinusBeta2: 0.01, BC2Sqrt: 0.3, Eps: 1e-8, StepSize: 1e-3}
	for _, impl := range []struct {
		name string
		ops  *updateOps
	}{{"impl", update}, {"go", updateGo}} {
		b.Run("SGDMomentum/"+impl.name, func(b *testing.B) {
			for b.Loop() {
				impl.ops.sgdMomentum(w, g, m, 1e-3, 1e-4, 0.9)
			}
		})
		b.Run("AdamW/"+impl.name, func(b *testing.B) {
			for b.Loop() {
				impl.ops.adamW(w, g, m, v, c)
			}
		})
	}
}
