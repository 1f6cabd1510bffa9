package estimator

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/psclip/psclip/setting"
)

// The private quantile tracks the target quantile of a known norm
// distribution: norms Exp(1), whose q-quantile is −log(1 − q), in batches
// of 1000 (E[B] = 1000, σ_b = E[B]/20 as Andrew et al.), from a start 10×
// too small or too large. After 300 steps γ's mean over the next 300 is
// within 3 % of the quantile.
func TestDPQuantileTracksQuantile(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	norms := make([]float64, 1000)
	for _, q := range []float64{0.5, 0.9} {
		want := -math.Log(1 - q)
		for _, start := range []float64{want / 10, want * 10} {
			e, err := NewDPQuantile(start, q, 0.2, 1, 50, 1000, 3)
			if err != nil {
				t.Fatal(err)
			}
			var sum float64
			for step := range 600 {
				for i := range norms {
					norms[i] = rng.ExpFloat64()
				}
				e.Update(norms)
				if step >= 300 {
					sum += e.Gamma()
				}
			}
			if got := sum / 300; math.Abs(got-want) > 0.03*want {
				t.Errorf("q = %g from γ₀ = %.3g: mean γ %.4f, want the quantile %.4f", q, start, got, want)
			}
		}
	}
}

// The noise is what makes ε compose at σ: the gradient's has standard
// deviation σ_eff·γ (per unit scale) and the count's σ_b, measured over
// many draws, and 1/σ_eff² + 1/(2σ_b)² = 1/σ.
func TestDPQuantileNoise(t *testing.T) {
	const sigma, sigmaB, expected, gamma = 1.3, 4.0, 100.0, 0.7
	e, err := NewDPQuantile(gamma, 0.5, 0.2, sigma, sigmaB, expected, 11)
	if err != nil {
		t.Fatal(err)
	}
	if got := 1/(e.EffectiveNoise()*e.EffectiveNoise()) + 1/(4*sigmaB*sigmaB); math.Abs(got-1/(sigma*sigma)) > 1e-12 {
		t.Errorf("1/σ_eff² + 1/(2σ_b)² = %.15g, want 1/σ² = %.15g", got, 1/(sigma*sigma))
	}
	g := [][]float32{make([]float32, 200000)}
	e.AddNoise(g, 0.5)
	if sd, want := stddev(g[0]), 0.5*e.EffectiveNoise()*gamma; math.Abs(sd-want) > 0.01*want {
		t.Errorf("gradient noise sd %.5f, want 0.5·σ_eff·γ = %.5f", sd, want)
	}
	// The count's noise, read back from γ's moves: every norm 0 is
	// unclipped, so b̃ − 1 = σ_b z/E[B] and log(γ'/γ) = −η(b̃ − q).
	zs := make([]float32, 20000)
	norms := make([]float64, 100)
	for i := range zs {
		before := e.Gamma()
		e.Update(norms)
		b := 0.5 - math.Log(e.Gamma()/before)/0.2
		zs[i] = float32((b - (0.5 + 50/expected)) * expected)
		e.clip.gamma = gamma
	}
	if sd := stddev(zs); math.Abs(sd-sigmaB) > 0.02*sigmaB {
		t.Errorf("count noise sd %.4f, want σ_b = %g", sd, sigmaB)
	}
}

// stddev is the standard deviation of x about 0.
func stddev(x []float32) float64 {
	var s float64
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	return math.Sqrt(s / float64(len(x)))
}

// A fixed seed's state resumes the noise and γ exactly; a secure one
// resumes γ with fresh noise. Bad settings are *setting.Error values.
func TestDPQuantileState(t *testing.T) {
	a, _ := NewDPQuantile(1, 0.5, 0.2, 1, 5, 10, 4)
	norms := []float64{0.5, 2, 3, math.NaN()}
	a.Update(norms)
	st, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewDPQuantile(1, 0.5, 0.2, 1, 5, 10, 4)
	if err := SetState(b, st); err != nil {
		t.Fatal(err)
	}
	ga, gb := [][]float32{make([]float32, 5)}, [][]float32{make([]float32, 5)}
	a.Update(norms)
	b.Update(norms)
	a.AddNoise(ga, 1)
	b.AddNoise(gb, 1)
	if a.Gamma() != b.Gamma() || ga[0][0] != gb[0][0] || ga[0][4] != gb[0][4] {
		t.Errorf("restored: γ %v vs %v, noise %v vs %v", b.Gamma(), a.Gamma(), gb, ga)
	}
	s, _ := NewDPQuantile(1, 0.5, 0.2, 1, 5, 10, 0)
	if err := s.UnmarshalBinary(st); err == nil {
		t.Error("a fixed seed's state restored into a secure DPQuantile")
	}
	for _, tt := range []struct {
		gamma, q, sigma, sigmaB, expected float64
		field                             string
	}{
		{0, 0.5, 1, 5, 10, "Gamma"},
		{1, 1.5, 1, 5, 10, "Q"},
		{1, 0.5, 0, 5, 10, "NoiseMultiplier"},
		{1, 0.5, 1, 0.5, 10, "CountNoise"},
		{1, 0.5, 1, 5, 0, "ExpectedBatch"},
	} {
		_, err := NewDPQuantile(tt.gamma, tt.q, 0, tt.sigma, tt.sigmaB, tt.expected, 1)
		var se *setting.Error
		if !errors.As(err, &se) || se.Field != tt.field {
			t.Errorf("NewDPQuantile(%+v) = %v, want a *setting.Error naming %s", tt, err, tt.field)
		}
	}
	if err := Validate(&DPQuantile{}); err == nil {
		t.Error("a zero DPQuantile validates")
	}
}
