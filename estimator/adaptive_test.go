package estimator

import (
	"bytes"
	"encoding"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// bruteTail computes Hill's p̂ and the moment bound at order q (q = 0: at
// p̂ clamped to [MinBeta, 2]) from a plain list of norms, by sorting.
func bruteTail(norms []float64, q float64) (p, beta, sigma float64) {
	s := slices.Clone(norms)
	slices.Sort(s)
	slices.Reverse(s)
	k := HillK(len(s))
	var h float64
	for _, x := range s[:k] {
		h += math.Log(x / s[k])
	}
	p = float64(k-1) / h
	beta = q
	if beta == 0 {
		beta = math.Min(math.Max(p, MinBeta), 2)
	}
	var m float64
	for _, x := range s {
		m += math.Pow(x, beta)
	}
	return p, beta, math.Pow(m/float64(len(s)), 1/beta)
}

func heavyBatch(r *rand.Rand, n int, p float64) []float64 {
	return pareto(r, n, 0.5+r.Float64(), p)
}

// TestPSAutoBruteForce replays a stream of batches and checks every batch's
// weights against PS-Clip-SGD with the threshold computed independently
// from the previous batches' norms: the warm-up median, then σ̂·k^(1/p̂).
func TestPSAutoBruteForce(t *testing.T) {
	for _, c := range []struct {
		name        string
		alpha, beta float64
	}{{"auto", 0, 0}, {"fixed α", 0.8, 0}, {"fixed β", 0, 1.5}} {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(21, 22))
			e, err := NewPSAuto(c.alpha, c.beta, 300)
			if err != nil {
				t.Fatal(err)
			}
			var seen []float64
			for step := range 40 {
				b := heavyBatch(r, 1+r.IntN(40), 1.1+r.Float64())
				w := make([]float64, len(b))
				Weights(e, b, w)
				var th Threshold
				if len(seen) < MinTailSamples {
					g := c.alpha
					if g == 0 {
						all := slices.Sorted(slices.Values(append(slices.Clone(seen), b...)))
						g = all[len(all)/2]
					}
					th, _ = Constant(g)
				} else {
					_, beta, sigma := bruteTail(seen, c.beta)
					alpha := c.alpha
					if alpha == 0 {
						alpha = sigma
					}
					th, _ = Increasing(alpha, beta)
				}
				want := make([]float64, len(b))
				Weights(NewPSClip(th), b, want)
				for i := range w {
					if math.Abs(w[i]-want[i]) > 1e-12*want[i] {
						t.Fatalf("step %d (%d norms seen, threshold %v): w = %v, want %v", step, len(seen), th, w, want)
					}
				}
				seen = append(seen, b...)
				if len(seen) > 300 {
					seen = seen[len(seen)-300:]
				}
			}
			if _, ok := e.Estimate(); !ok {
				t.Error("no estimate after 40 batches")
			}
		})
	}
}

func TestPSAutoNonFinite(t *testing.T) {
	e, _ := NewPSAuto(0, 0, MinTailSamples)
	norms := []float64{4, math.NaN(), 1, math.Inf(1), 2}
	w := make([]float64, len(norms))
	st := Weights(e, norms, w)
	// Warm-up median of 1, 2, 4 is 2: sample 1 is clipped to 2/4 of 1/3.
	want := []float64{1.0 / 6, 0, 1.0 / 3, 0, 1.0 / 3}
	if !nearVec(w, want) || st.Clipped != 1 || st.Dropped != 2 || e.tail.Len() != 3 {
		t.Errorf("w = %v, stats %+v, window %d; want %v, 1 clipped, 2 dropped, 3 kept", w, st, e.tail.Len(), want)
	}
	if th, ok := e.Threshold(); ok {
		t.Errorf("warm-up threshold known in advance: %v", th)
	}
	fixed, _ := NewPSAuto(3, 0, MinTailSamples)
	if th, ok := fixed.Threshold(); !ok || !th.IsConstant() || th.Alpha() != 3 {
		t.Errorf("fixed α warm-up threshold = %v, %v", th, ok)
	}
}

type stateful interface {
	Estimator
	encoding.BinaryMarshaler
	encoding.BinaryUnmarshaler
}

// TestStateRoundTrip saves an adaptive estimator mid-stream, restores it into
// a fresh one and checks that both give bit-identical weights afterwards.
func TestStateRoundTrip(t *testing.T) {
	mk := map[string]func() stateful{
		"ps-clip-auto":     func() stateful { e, _ := NewPSAuto(0, 0, 400); return e },
		"ps-clip-auto β":   func() stateful { e, _ := NewPSAuto(0, 1.3, 400); return e },
		"ps-clip-quantile": func() stateful { e, _ := NewQuantile(0.7, 0.1, 0); return e },
	}
	for name, newE := range mk {
		t.Run(name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(31, 32))
			a := newE()
			for range 25 { // past the warm-up and round the ring
				b := heavyBatch(r, 32, 1.4)
				Weights(a, b, make([]float64, len(b)))
			}
			state, err := a.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			b := newE()
			if err := b.UnmarshalBinary(state); err != nil {
				t.Fatal(err)
			}
			again, _ := b.MarshalBinary()
			if !bytes.Equal(state, again) {
				t.Error("restored state marshals differently")
			}
			for step := range 20 {
				batch := heavyBatch(r, 1+r.IntN(50), 1.4)
				wa, wb := make([]float64, len(batch)), make([]float64, len(batch))
				Weights(a, batch, wa)
				Weights(b, batch, wb)
				if !slices.Equal(wa, wb) {
					t.Fatalf("step %d after restore: %v vs %v", step, wa, wb)
				}
			}
			for cut := range len(state) {
				if newE().UnmarshalBinary(state[:cut]) == nil {
					t.Fatalf("truncated state (%d of %d bytes) accepted", cut, len(state))
				}
			}
			if newE().UnmarshalBinary(append(slices.Clone(state), 0)) == nil {
				t.Error("state with a trailing byte accepted")
			}
		})
	}
	auto, _ := NewPSAuto(0, 0, 400)
	state, _ := auto.MarshalBinary()
	other, _ := NewPSAuto(0, 0, 500)
	if other.UnmarshalBinary(state) == nil {
		t.Error("state of a window of 400 restored into a window of 500")
	}
	q, _ := NewQuantile(0.5, 0.2, 0)
	if q.UnmarshalBinary(state) == nil {
		t.Error("ps-clip-auto state restored into ps-clip-quantile")
	}
}

func TestQuantileHandComputed(t *testing.T) {
	norms := []float64{1, 2, 3, 4}
	tests := []struct {
		gamma, q  float64
		want      []float64
		clipped   int
		nextGamma float64
	}{
		// 2 of 4 unclipped = q: γ stays.
		{2.5, 0.5, []float64{0.25, 0.25, 0.25 * 2.5 / 3, 0.25 * 2.5 / 4}, 2, 2.5},
		// all unclipped: γ ← 5·e^(−0.2·(1 − 0.5)).
		{5, 0.5, []float64{0.25, 0.25, 0.25, 0.25}, 0, 5 * math.Exp(-0.1)},
		// 1 of 4 unclipped, q = 0.9: γ ← 1.5·e^(0.2·0.65).
		{1.5, 0.9, []float64{0.25, 0.25 * 1.5 / 2, 0.25 * 1.5 / 3, 0.25 * 1.5 / 4}, 3, 1.5 * math.Exp(0.13)},
	}
	for _, tt := range tests {
		e, err := NewQuantile(tt.q, 0.2, tt.gamma)
		if err != nil {
			t.Fatal(err)
		}
		w := make([]float64, 4)
		st := Weights(e, norms, w)
		if !nearVec(w, tt.want) || st.Clipped != tt.clipped || !near(e.Gamma(), tt.nextGamma) {
			t.Errorf("γ=%v q=%v: w = %v (%d clipped), next γ %v; want %v (%d), %v", tt.gamma, tt.q, w, st.Clipped, e.Gamma(), tt.want, tt.clipped, tt.nextGamma)
		}
	}
	// Without an initial γ the first batch's median (the upper middle) is used.
	e, _ := NewQuantile(0, 0, 0)
	w := make([]float64, 5)
	Weights(e, []float64{4, math.NaN(), 1, 3, 2}, w)
	if want := []float64{0.25 * 3 / 4, 0, 0.25, 0.25, 0.25}; !nearVec(w, want) {
		t.Errorf("median start: w = %v, want %v", w, want)
	}
	zero, _ := NewQuantile(0, 0, 0)
	Weights(zero, []float64{0, 0}, w[:2])
	if zero.Gamma() != 0 || w[0] != 0.5 {
		t.Errorf("zero norms: γ = %v, w = %v", zero.Gamma(), w[:2])
	}
}

// TestQuantileTracksQuantile checks that γ settles at the target quantile
// of log-normal norms: the q-quantile of e^Z is e^(z_q).
func TestQuantileTracksQuantile(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for _, c := range []struct{ q, zq float64 }{{0.5, 0}, {0.9, 1.2815516}} {
		e, _ := NewQuantile(c.q, 0.2, 100)
		norms, w := make([]float64, 64), make([]float64, 64)
		var logSum float64
		const burn, steps = 300, 1000
		for step := range burn + steps {
			for i := range norms {
				norms[i] = math.Exp(r.NormFloat64())
			}
			Weights(e, norms, w)
			if step >= burn {
				logSum += math.Log(e.Gamma())
			}
		}
		if got := logSum / steps; math.Abs(got-c.zq) > 0.05 {
			t.Errorf("q = %v: mean log γ = %.3f, want %.3f ± 0.05", c.q, got, c.zq)
		}
	}
}

func TestAutoClip(t *testing.T) {
	e, err := NewAutoClip(0)
	if err != nil || e.R != DefaultAutoClipR {
		t.Fatalf("NewAutoClip(0) = %v, %v", e, err)
	}
	// Rows (3, 4), (0, 0.5), (0, 0): factors 1/5.01, 1/0.51, 1/0.01.
	g := []float64{3, 4, 0, 0.5, 0, 0}
	dir := make([]float64, 2)
	st, err := Direction(e, g, dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{3 / 5.01 / 3, (4/5.01 + 0.5/0.51) / 3}
	if !nearVec(dir, want) || st.Clipped != 1 {
		t.Errorf("direction %v (%d clipped), want %v (1)", dir, st.Clipped, want)
	}
	w := make([]float64, 2)
	if st := Weights(e, []float64{math.NaN(), 1}, w); w[0] != 0 || !near(w[1], 1/1.01) || st.Dropped != 1 {
		t.Errorf("NaN sample: w = %v, %+v", w, st)
	}
}

func TestNewAdaptive(t *testing.T) {
	e, err := Spec{Estimator: "ps-clip-sgd", AutoAlpha: true, Beta: 1.5, Window: 1000}.New()
	if a, ok := e.(*PSAuto); err != nil || !ok || a.alpha != 0 || a.beta != 1.5 || a.tail.Window() != 1000 {
		t.Errorf("ps-clip-sgd α auto, β 1.5: %#v, %v", e, err)
	}
	e, err = Spec{Estimator: "ps-clip-sgd", Alpha: 2, AutoBeta: true}.New()
	if a, ok := e.(*PSAuto); err != nil || !ok || a.alpha != 2 || a.beta != 0 || a.tail.Window() != DefaultWindow {
		t.Errorf("ps-clip-sgd α 2, β auto: %#v, %v", e, err)
	}
	e, err = Spec{Estimator: "ps-clip-quantile", Clip: 3}.New()
	if q, ok := e.(*Quantile); err != nil || !ok || q.Gamma() != 3 || q.target != DefaultTargetQuantile || q.rate != DefaultQuantileRate {
		t.Errorf("ps-clip-quantile: %#v, %v", e, err)
	}
	bad := []Spec{
		{Estimator: "ps-clip-auto", Window: MinTailSamples - 1},
		{Estimator: "ps-clip-sgd", AutoBeta: true},                 // α unset
		{Estimator: "ps-clip-sgd", AutoAlpha: true, Beta: -1},      // bad β
		{Estimator: "ps-clip-sgd", AutoAlpha: true},                // β unset: no constant auto threshold
		{Estimator: "ps-clip-quantile", TargetQuantile: 1},         // q must be < 1
		{Estimator: "ps-clip-quantile", QuantileRate: math.Inf(1)}, // rate
		{Estimator: "ps-clip-quantile", Clip: -1},
		{Estimator: "auto-clip", AutoClipR: math.NaN()},
	}
	for _, s := range bad {
		if e, err := s.New(); err == nil || e != nil {
			t.Errorf("%+v.New() = %v, %v; want a nil estimator and an error", s, e, err)
		}
	}
}

func TestPSAutoDoesNotAllocate(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	e, _ := NewPSAuto(0, 0, DefaultWindow)
	b := heavyBatch(r, 64, 1.5)
	w := make([]float64, 64)
	for range 80 {
		Weights(e, b, w)
	}
	if a := testing.AllocsPerRun(20, func() { Weights(e, b, w) }); a != 0 {
		t.Errorf("PSAuto.Weights allocates %v times per batch", a)
	}
}

// BenchmarkAdaptiveWeights times one batch of 64 norms through each
// estimator, the window full for ps-clip-auto. The batches differ, as in
// training, so that which samples are clipped cannot be learned by the
// branch predictor.
func BenchmarkAdaptiveWeights(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	batches := make([][]float64, 64)
	for i := range batches {
		batches[i] = heavyBatch(r, 64, 1.5)
	}
	w := make([]float64, 64)
	th, _ := Increasing(1, 1.5)
	auto, _ := NewPSAuto(0, 0, DefaultWindow)
	q, _ := NewQuantile(0, 0, 0)
	ac, _ := NewAutoClip(0)
	for _, e := range []Estimator{NewPSClip(th), auto, q, ac} {
		for i := range DefaultWindow / 64 {
			Weights(e, batches[i%len(batches)], w)
		}
		b.Run(e.Name(), func(b *testing.B) {
			i := 0
			for b.Loop() {
				Weights(e, batches[i%len(batches)], w)
				i++
			}
		})
	}
}
