package estimator

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// pareto returns n draws of a Pareto variable with scale xm and tail index p:
// P(X > s) = (s/xm)^(−p) for s ≥ xm.
func pareto(r *rand.Rand, n int, xm, p float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = xm * math.Exp(r.ExpFloat64()/p)
	}
	return x
}

// TestHillPareto checks Hill's estimator on exact Pareto samples, where it is
// unbiased with sd p/√(k−2): over 200 independent full windows (k = 64) the
// mean of p̂ must be within 4 standard errors (4·p/√62/√200 ≈ 3.6% of p) and
// the sample sd within 20% of p/√62 (its own relative error is about 5%).
func TestHillPareto(t *testing.T) {
	const windows = 200
	for _, p := range []float64{1.2, 1.5, 1.8} {
		r := rand.New(rand.NewPCG(7, math.Float64bits(p)))
		tl, err := NewTail(DefaultWindow)
		if err != nil {
			t.Fatal(err)
		}
		var sum, sq float64
		for range windows {
			tl.Add(pareto(r, DefaultWindow, 3, p)) // replaces the whole window
			ph, ok := tl.Hill()
			if !ok {
				t.Fatal("no estimate from a full window")
			}
			sum += ph
			sq += ph * ph
		}
		k := float64(HillK(DefaultWindow))
		sd := p / math.Sqrt(k-2)
		mean := sum / windows
		sampleSD := math.Sqrt((sq - windows*mean*mean) / (windows - 1))
		if math.Abs(mean-p) > 4*sd/math.Sqrt(windows) {
			t.Errorf("p = %v: mean p̂ = %.4f over %d windows, want within %.4f", p, mean, windows, 4*sd/math.Sqrt(windows))
		}
		if math.Abs(sampleSD/sd-1) > 0.2 {
			t.Errorf("p = %v: sd of p̂ = %.4f, want %.4f ± 20%%", p, sampleSD, sd)
		}
	}
}

// TestHillBruteForce compares Hill with the formula on a fully sorted copy,
// over windows that wrap around the ring buffer and contain ties and zeros.
func TestHillBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 100 {
		window := MinTailSamples + r.IntN(700)
		tl, _ := NewTail(window)
		var all []float64
		for range 1 + r.IntN(5) {
			b := pareto(r, 1+r.IntN(window), 1, 0.5+2*r.Float64())
			for i := range b {
				switch r.IntN(20) {
				case 0:
					b[i] = 2 // ties
				case 1:
					b[i] = 0
				case 2:
					b[i] = math.NaN() // skipped
				}
			}
			tl.Add(b)
			for _, x := range b {
				if !math.IsNaN(x) {
					all = append(all, x)
				}
			}
		}
		if len(all) > window {
			all = all[len(all)-window:]
		}
		if tl.Len() != len(all) {
			t.Fatalf("trial %d: Len %d, want %d", trial, tl.Len(), len(all))
		}
		got, ok := tl.Hill()
		sorted := slices.Clone(all)
		slices.Sort(sorted)
		slices.Reverse(sorted)
		n := len(sorted)
		var want float64
		wantOK := n >= MinTailSamples
		if wantOK {
			k := HillK(n)
			base := sorted[k]
			var s float64
			for _, x := range sorted[:k] {
				s += math.Log(x) - math.Log(base)
			}
			wantOK = base > 0 && s > 0
			want = float64(k-1) / s
		}
		if ok != wantOK || ok && math.Abs(got-want) > 1e-12*want {
			t.Fatalf("trial %d (n = %d): Hill = %v, %v; want %v, %v", trial, n, got, ok, want, wantOK)
		}
		if n > 0 {
			if med := tl.Median(); math.Abs(med-sorted[(n-1)-n/2]) > 1e-12*med {
				t.Fatalf("trial %d: Median = %v, want %v", trial, med, sorted[(n-1)-n/2])
			}
		}
	}
}

// TestMomentClosedForm checks σ̂ against E X^q = a/(a−q) for Pareto(1, a),
// q < a/2 so that X^q has a finite variance: a = 4, q = 1.5 give mean 1.6 and
// sd √1.44 = 1.2 per sample, a standard error of 0.4% over 4·4096 samples.
func TestMomentClosedForm(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	const a, q, n = 4.0, 1.5, 4 * DefaultWindow
	tl, _ := NewTail(n)
	tl.Add(pareto(r, n, 1, a))
	got := math.Pow(tl.Moment(q), q)
	want := a / (a - q)
	if se := 1.2 / math.Sqrt(n); math.Abs(got-want) > 4*se {
		t.Errorf("mean X^%v = %v, want %v ± %v", q, got, want, 4*se)
	}
}

func TestMomentExact(t *testing.T) {
	tl, _ := NewTail(MinTailSamples)
	if tl.Moment(2) != 0 {
		t.Error("empty window: Moment != 0")
	}
	// The window keeps the last 256 of 1..300: 45..300.
	for i := 1; i <= 300; i++ {
		tl.Add([]float64{float64(i)})
	}
	var s1, s2 float64
	for i := 45; i <= 300; i++ {
		s1 += math.Pow(float64(i), 1.5)
		s2 += float64(i * i)
	}
	if got, want := tl.Moment(1.5), math.Pow(s1/256, 1/1.5); math.Abs(got-want) > 1e-12*want {
		t.Errorf("Moment(1.5) = %v, want %v", got, want)
	}
	if got, want := tl.Moment(2), math.Sqrt(s2/256); math.Abs(got-want) > 1e-12*want {
		t.Errorf("Moment(2) = %v, want %v", got, want)
	}
	// Norms near the float64 limit do not overflow.
	big, _ := NewTail(MinTailSamples)
	big.Add([]float64{1e300, 1e300})
	if got := big.Moment(2); math.Abs(got-1e300) > 1e288 {
		t.Errorf("Moment of 1e300s = %v", got)
	}
	zero, _ := NewTail(MinTailSamples)
	zero.Add([]float64{0, 0})
	if zero.Moment(1.5) != 0 {
		t.Error("Moment of zeros != 0")
	}
}

func TestTailEdgeCases(t *testing.T) {
	if _, err := NewTail(MinTailSamples - 1); err == nil {
		t.Error("NewTail below MinTailSamples: no error")
	}
	tl, _ := NewTail(MinTailSamples)
	tl.Add(make([]float64, MinTailSamples-1))
	if _, ok := tl.Hill(); ok {
		t.Error("Hill with too few norms")
	}
	tl.Add([]float64{0})
	if _, ok := tl.Hill(); ok {
		t.Error("Hill with X_(k+1) = 0")
	}
	tl.Reset()
	ones := make([]float64, MinTailSamples)
	for i := range ones {
		ones[i] = 1
	}
	tl.Add(ones)
	if _, ok := tl.Estimate(); ok {
		t.Error("Estimate of equal norms")
	}
	tl.Add([]float64{math.Inf(1), math.NaN(), -1})
	if tl.Len() != MinTailSamples {
		t.Errorf("non-finite or negative norms were added: Len %d", tl.Len())
	}
}

func TestEstimateClamp(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, c := range []struct{ p, beta float64 }{{0.7, MinBeta}, {6, 2}} {
		tl, _ := NewTail(DefaultWindow)
		tl.Add(pareto(r, DefaultWindow, 1, c.p))
		e, ok := tl.Estimate()
		if !ok || e.Beta != c.beta || e.Sigma != tl.Moment(c.beta) || e.K != 64 || e.N != DefaultWindow {
			t.Errorf("p = %v: %+v, want β = %v", c.p, e, c.beta)
		}
		if math.Abs(e.P-c.p) > 0.5*c.p {
			t.Errorf("p = %v: p̂ = %v", c.p, e.P)
		}
	}
}

func TestSelectNth(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	for trial := range 300 {
		n := 1 + r.IntN(200)
		s := make([]float64, n)
		for i := range s {
			s[i] = float64(r.IntN(1 + trial%30)) // many ties in early trials
		}
		if trial%7 == 0 {
			slices.Sort(s) // sorted and reversed inputs
			if trial%2 == 0 {
				slices.Reverse(s)
			}
		}
		want := slices.Sorted(slices.Values(s))
		k := r.IntN(n)
		selectNth(s, k)
		if s[k] != want[k] || slices.Max(s[:k+1]) != s[k] || slices.Min(s[k:]) != s[k] {
			t.Fatalf("trial %d: selectNth(%d) gave %v, want %v at %d", trial, k, s, want[k], k)
		}
	}
}

func TestTailAddDoesNotAllocate(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	tl, _ := NewTail(DefaultWindow)
	b := pareto(r, 64, 1, 1.5)
	tl.Add(pareto(r, DefaultWindow, 1, 1.5))
	tl.Estimate()
	if a := testing.AllocsPerRun(50, func() { tl.Add(b); tl.Estimate(); tl.Median() }); a != 0 {
		t.Errorf("Add+Estimate allocate %v times", a)
	}
}

func BenchmarkTailEstimate(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	tl, _ := NewTail(DefaultWindow)
	tl.Add(pareto(r, DefaultWindow, 1, 1.5))
	batch := pareto(r, 64, 1, 1.5)
	for b.Loop() {
		tl.Add(batch)
		tl.Estimate()
	}
}
