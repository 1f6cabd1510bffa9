package estimator

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// stepEstimators builds one of every estimator, fresh, by name.
var stepEstimators = map[string]func() Estimator{
	"sgd":      func() Estimator { return SGD{} },
	"clip-sgd": func() Estimator { return ClipSGD{Gamma: 1} },
	"nsgd":     func() Estimator { return NSGD{} },
	"ps-clip-sgd constant": func() Estimator {
		t, _ := Constant(1)
		return NewPSClip(t)
	},
	"ps-clip-sgd increasing": func() Estimator {
		t, _ := Increasing(0.3, 1.5)
		return NewPSClip(t)
	},
	"ps-clip-auto fixed α":    func() Estimator { e, _ := NewPSAuto(0.5, 0, 400); return e },
	"ps-clip-auto":            func() Estimator { e, _ := NewPSAuto(0, 0, 400); return e },
	"ps-clip-quantile γ₀ = 1": func() Estimator { e, _ := NewQuantile(0.5, 0.2, 1); return e },
	"auto-clip":               func() Estimator { e, _ := NewAutoClip(0.01); return e },
}

// A step's samples given to Factors in parts get the factors of one call
// over all of them, and k runs over the whole step: the increasing
// threshold's τ_k does not restart in every part. Adaptive estimators are
// compared after a warm-up of whole steps, so that their thresholds are
// estimated ones.
func TestFactorsInPartsEqualOneBatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	norms := func(n int) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = math.Exp(rng.NormFloat64())
		}
		x[3] = math.NaN()
		return x
	}
	for name, mk := range stepEstimators {
		whole, parts := mk(), mk()
		for range 20 { // warm-up: both see the same whole steps
			x := norms(32)
			c := make([]float64, 32)
			Weights(whole, x, c)
			Weights(parts, x, c)
		}
		x := norms(32)
		want := make([]float64, 32)
		st := whole.Factors(0, x, want)
		got := make([]float64, 32)
		var clipped, dropped int
		for k0 := 0; k0 < 32; k0 += 8 {
			s := parts.Factors(k0, x[k0:k0+8], got[k0:k0+8])
			clipped += s.Clipped
			dropped += s.Dropped
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s: sample %d: factor %v in parts, %v in one batch", name, i, got[i], want[i])
				break
			}
		}
		if clipped != st.Clipped || dropped != st.Dropped || dropped != 1 {
			t.Errorf("%s: clipped %d, dropped %d in parts; %d, %d in one batch", name, clipped, dropped, st.Clipped, st.Dropped)
		}
		for i, c := range want {
			if !(c >= 0 && c <= 1) && !(name == "auto-clip" && c > 0) {
				t.Errorf("%s: factor %v of sample %d is not a clip factor", name, c, i)
			}
		}
	}
}

// The increasing threshold's sample k of the step is clipped to α·k^(1/β)
// whichever part it comes in.
func TestIncreasingThresholdCountsTheStep(t *testing.T) {
	th, _ := Increasing(1, 1) // τ_k = k
	e := NewPSClip(th)
	c := make([]float64, 2)
	e.Factors(4, []float64{10, 10}, c) // samples 5 and 6 of the step
	if c[0] != 0.5 || c[1] != 0.6 {
		t.Errorf("factors %v, want [0.5 0.6] (τ_5 = 5, τ_6 = 6)", c)
	}
}

// Direction on float32 gradients agrees with float64 and returns the norms
// and plain clip factors it computed.
func TestDirectionFloat32(t *testing.T) {
	th, _ := Constant(2)
	g64 := []float64{3, 4, 0, 1, 0, 0.5}
	g32 := []float32{3, 4, 0, 1, 0, 0.5}
	d64, d32 := make([]float64, 2), make([]float32, 2)
	r64, err64 := Direction(NewPSClip(th), g64, d64)
	r32, err32 := Direction(NewPSClip(th), g32, d32)
	if err := errors.Join(err64, err32); err != nil {
		t.Fatal(err)
	}
	for j := range d64 {
		if math.Abs(float64(d32[j])-d64[j]) > 1e-6 {
			t.Errorf("float32 direction %v, float64 %v", d32, d64)
		}
	}
	if want := []float64{5, 1, 0.5}; !nearVec(r32.Norms, want) || !nearVec(r64.Norms, want) {
		t.Errorf("norms %v and %v, want %v", r32.Norms, r64.Norms, want)
	}
	if want := []float64{0.4, 1, 1}; !nearVec(r32.Factors, want) {
		t.Errorf("factors %v, want %v (no 1/m)", r32.Factors, want)
	}
	if r32.Clipped != 1 || r32.N != 3 {
		t.Errorf("stats %+v", r32.Stats)
	}
}

// PS-Clip-SGD's factors and weights equal their definition to the bit,
// computed here one sample at a time, for batches around the multiples of
// the chunk that PSClip clips at once, with and without non-finite norms,
// and with finite norms whose sum overflows.
func TestPSClipFactorsExact(t *testing.T) {
	con, _ := Constant(1.5)
	inc, _ := Increasing(0.7, 1.3)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, th := range []Threshold{con, inc} {
		for _, n := range []int{0, 1, 7, 63, 64, 65, 128, 200} {
			for _, kind := range []string{"finite", "non-finite", "overflow"} {
				x := make([]float64, n)
				for i := range x {
					x[i] = math.Exp(2 * rng.NormFloat64())
				}
				switch {
				case n == 0:
				case kind == "non-finite":
					x[rng.IntN(n)] = math.NaN()
					x[rng.IntN(n)] = math.Inf(1)
					x[n-1] = math.Inf(-1)
				case kind == "overflow":
					x[0], x[n-1] = math.MaxFloat64, math.MaxFloat64
				}
				// The definition: plain factors, then 1/m.
				want := make([]float64, n)
				var st Stats
				var sum float64
				st.N = n
				for i, v := range x {
					switch tau := th.Tau(i + 1); {
					case math.IsNaN(v) || math.IsInf(v, 0):
						st.Dropped++
					case v > tau:
						want[i] = tau / v
						st.Clipped++
						sum += v
					default:
						want[i] = 1
						sum += v
					}
				}
				if m := n - st.Dropped; m > 0 {
					st.MeanNorm = sum / float64(m)
				}
				e := NewPSClip(th)
				c := make([]float64, n)
				if got := e.Factors(0, x, c); !sameBits(c, want) || !sameStats(got, st) {
					t.Errorf("%v, n = %d, %s: Factors %v, stats %+v; want %v, %+v", th, n, kind, c, got, want, st)
				}
				if m := n - st.Dropped; m > 0 {
					for i := range want {
						want[i] *= 1 / float64(m)
					}
				}
				if got := Weights(e, x, c); !sameBits(c, want) || !sameStats(got, st) {
					t.Errorf("%v, n = %d, %s: Weights %v, stats %+v; want %v, %+v", th, n, kind, c, got, want, st)
				}
			}
		}
	}
}

func sameBits(a, b []float64) bool {
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return len(a) == len(b)
}

func sameStats(a, b Stats) bool {
	return a.N == b.N && a.Clipped == b.Clipped && a.Dropped == b.Dropped && math.Float64bits(a.MeanNorm) == math.Float64bits(b.MeanNorm)
}
