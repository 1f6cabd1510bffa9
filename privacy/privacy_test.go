package privacy

import (
	"encoding/json"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/psclip/psclip/setting"
)

// Add merges consecutive equal steps and keeps a change of q or σ as a new
// entry; the History survives JSON exactly and accounts the same after.
func TestHistoryAddAndJSON(t *testing.T) {
	var h History
	for range 3 {
		h.Add(0.01, 1.1, 1)
	}
	h.Add(0.01, 1.1, 0)
	h.Add(0.02, 1.1, 5)
	h.Add(0.01, 1.1, 2)
	h.Add(0.01, 0.9, 1)
	want := History{{0.01, 1.1, 3}, {0.02, 1.1, 5}, {0.01, 1.1, 2}, {0.01, 0.9, 1}}
	if !slices.Equal(h, want) || h.Steps() != 11 {
		t.Fatalf("history = %v (%d steps), want %v (11)", h, h.Steps(), want)
	}
	b, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b); got != `[{"sample_rate":0.01,"noise_multiplier":1.1,"count":3},{"sample_rate":0.02,"noise_multiplier":1.1,"count":5},{"sample_rate":0.01,"noise_multiplier":1.1,"count":2},{"sample_rate":0.01,"noise_multiplier":0.9,"count":1}]` {
		t.Errorf("JSON = %s", got)
	}
	var back History
	if err := json.Unmarshal(b, &back); err != nil || !slices.Equal(back, h) {
		t.Fatalf("JSON round trip = %v, %v; want %v", back, err, h)
	}
	for _, a := range Accountants {
		r1, err1 := Epsilon(h, 1e-5, Options{Accountant: a})
		r2, err2 := Epsilon(back, 1e-5, Options{Accountant: a})
		if err1 != nil || err2 != nil || r1 != r2 {
			t.Errorf("%s: ε before and after JSON %v, %v (%v, %v)", a, r1, r2, err1, err2)
		}
	}
}

// Steps whose q and σ change compose: TF Privacy's test_check_composition
// (tensorflow/privacy, tensorflow_privacy/privacy/analysis/rdp_accountant_test.py
// @868cf54) — 40000 steps at q = 1e-4, σ = 0.4, then 100 at q = 0.1, σ = 2,
// over its orders, δ = 1e-5: ε = 8.509656 at order 2.5 with the classical
// conversion (its commented-out assertAlmostEqual, places=5, "these tests use
// the old RDP -> approx DP conversion") and ε ≤ 8.509656 with the improved one
// (its live assertion).
func TestCompositionPublished(t *testing.T) {
	orders := []float64{1.25, 1.5, 1.75, 2, 2.5, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 20, 24, 28, 32, 64, 256}
	h := History{{1e-4, 0.4, 40000}, {0.1, 2, 100}}
	r, err := Epsilon(h, 1e-5, Options{Orders: orders, Classical: true})
	if err != nil || !near(r.Epsilon, 8.509656, places(5)) || r.Order != 2.5 {
		t.Errorf("classical: %+v, %v; want ε 8.509656 at order 2.5", r, err)
	}
	r, err = Epsilon(h, 1e-5, Options{Orders: orders})
	if err != nil || !(r.Epsilon <= 8.509656) {
		t.Errorf("improved: %+v, %v; want ε ≤ 8.509656", r, err)
	}
	// The composition is the sum of the parts' RDP at each order, so the
	// first part alone spends less, and the order of the parts is immaterial.
	first, _ := Epsilon(h[:1], 1e-5, Options{Orders: orders})
	swapped, _ := Epsilon(History{h[1], h[0]}, 1e-5, Options{Orders: orders})
	if !(first.Epsilon < r.Epsilon) || !near(swapped.Epsilon, r.Epsilon, 1e-12) {
		t.Errorf("first part %v, whole %v, swapped %v", first, r, swapped)
	}
}

// NoiseMultiplier against Opacus' tests of get_noise_multiplier
// (pytorch/opacus, opacus/tests/accountants_test.py @4d0ebc8), each to its
// assertAlmostEqual places: q = 0.04, target ε = 8, δ = 1e-5.
func TestNoiseMultiplierPublished(t *testing.T) {
	tests := []struct {
		source string
		a      Accountant
		steps  int
		want   float64
		tol    float64
	}{
		// test_get_noise_multiplier_rdp_epochs: 90 epochs, steps int(90 / 0.04).
		{"test_get_noise_multiplier_rdp_epochs", RDP, int(90 / 0.04), 1.416, places(4)},
		// test_get_noise_multiplier_rdp_steps.
		{"test_get_noise_multiplier_rdp_steps", RDP, 2000, 1.3562, places(4)},
		// test_get_noise_multiplier_prv_epochs and _prv_steps: 4 places.
		{"test_get_noise_multiplier_prv_epochs", PRV, int(90 / 0.04), 1.34765625, places(4)},
		{"test_get_noise_multiplier_prv_steps", PRV, 2000, 1.2915, places(4)},
		// test_get_noise_multiplier_gdp: assertAlmostEqual, 7 places.
		{"test_get_noise_multiplier_gdp", GDP, int(90 / 0.04), 1.3232421875, places(7)},
	}
	for _, tt := range tests {
		got, err := NoiseMultiplier(0.04, tt.steps, 8, 1e-5, Options{Accountant: tt.a})
		if err != nil || !near(got, tt.want, tt.tol) {
			t.Errorf("Opacus %s: σ = %.12g, %v; want %g", tt.source, got, err, tt.want)
			continue
		}
		// The σ found spends at most the target, within the tolerance.
		r, _ := Epsilon(History{{0.04, got, tt.steps}}, 1e-5, Options{Accountant: tt.a})
		if !(r.Epsilon <= 8 && r.Epsilon >= 8-epsilonTolerance) {
			t.Errorf("%s: ε(σ = %g) = %g, want in [7.99, 8]", tt.source, got, r.Epsilon)
		}
	}
}

// GDP against Opacus' test_gdp_accountant (opacus/tests/accountants_test.py
// @4d0ebc8): q = 0.04, σ = 1.5, int(90 // 0.04) = 2249 steps, δ = 1e-5:
// 6.59 < ε < 6.6.
func TestGDPPublished(t *testing.T) {
	r, err := Epsilon(History{{0.04, 1.5, 2249}}, 1e-5, Options{Accountant: GDP})
	if err != nil || !(6.59 < r.Epsilon && r.Epsilon < 6.6) || r.Order != 0 {
		t.Errorf("GDP ε = %+v, %v; want 6.59 < ε < 6.6", r, err)
	}
}

// gdpDelta inverts gdpEpsilon, and μ composes as μ² add: a history split
// into parts at different (q, σ) has the μ of the root of the sum of
// squares, and one part alone has q·√T·√(e^{1/σ²} − 1).
func TestGDPMu(t *testing.T) {
	h := History{{0.01, 1.0, 1000}, {0.02, 2.0, 500}}
	want := math.Sqrt(1000*0.01*0.01*(math.E-1) + 500*0.02*0.02*(math.Exp(0.25)-1))
	if mu := gdpMu(h); !near(mu, want, 1e-15*want) {
		t.Errorf("μ = %.17g, want %.17g", mu, want)
	}
	if mu, want := gdpMu(h[:1]), 0.01*math.Sqrt(1000)*math.Sqrt(math.E-1); !near(mu, want, 1e-15*want) {
		t.Errorf("μ of one part = %.17g, want %.17g", mu, want)
	}
	for _, delta := range []float64{1e-3, 1e-5, 1e-9} {
		eps := gdpEpsilon(h, delta)
		if d := gdpDelta(eps, gdpMu(h)); !near(d, delta, 1e-12*delta) {
			t.Errorf("δ(ε(δ = %g)) = %g", delta, d)
		}
	}
}

// Degenerate histories: nothing spent is ε = 0; a step at q = 1 is the
// plain Gaussian.
func TestEpsilonEdges(t *testing.T) {
	for _, a := range Accountants {
		for _, h := range []History{nil, {{0.5, 1, 0}}} {
			if r, err := Epsilon(h, 1e-5, Options{Accountant: a}); err != nil || r != (Result{}) {
				t.Errorf("%s: ε of %v = %+v, %v; want 0", a, h, r, err)
			}
		}
	}
	// A Gaussian step (q = 1) of noise σ is exactly 1/σ-GDP; the CLT's
	// μ = √(e^{1/σ²} − 1) is above 1/σ, so its ε is too.
	const sigma = 4.530877117
	r, err := Epsilon(History{{1, sigma, 1}}, 1e-6, Options{Accountant: GDP})
	if exact := gdpEpsilonMu(1/sigma, 1e-6); err != nil || !(r.Epsilon > exact) {
		t.Errorf("GDP of one Gaussian step: %+v, %v; want ε above the exact %g", r, err, exact)
	}
}

// gdpDelta against the tight δ(ε) of the Gaussian mechanism with σ = 1
// (μ = 1) as TF Privacy's test_get_privacy_spent_gaussian writes it
// (rdp_accountant_test.py @868cf54, from Balle & Wang 2018, Theorem 8):
// δ = erfc((ε − ½)/√2)/2 − e^ε·erfc((ε + ½)/√2)/2, here through math.Erfc
// rather than the log space of gdpDelta.
func TestGDPDeltaGaussian(t *testing.T) {
	for _, eps := range []float64{0, 0.1, 0.5, 1, 2, 4, 8} {
		want := math.Erfc((eps-0.5)/math.Sqrt2)/2 - math.Exp(eps)*math.Erfc((eps+0.5)/math.Sqrt2)/2
		if got := gdpDelta(eps, 1); !near(got, want, 1e-13*want) {
			t.Errorf("δ(ε = %g, μ = 1) = %.15g, want %.15g", eps, got, want)
		}
	}
}

// gdpEpsilonMu is gdpEpsilon for a given μ.
func gdpEpsilonMu(mu, delta float64) float64 {
	// A one-step history at q = 1 whose μ is the given one:
	// e^{1/σ²} − 1 = μ², σ = 1/√log(1 + μ²).
	return gdpEpsilon(History{{1, 1 / math.Sqrt(math.Log1p(mu*mu)), 1}}, delta)
}

// Bad input is a *setting.Error naming the field.
func TestBadInput(t *testing.T) {
	good := History{{0.01, 1, 10}}
	tests := []struct {
		h     History
		delta float64
		o     Options
		field string
	}{
		{History{{0, 1, 1}}, 1e-5, Options{}, "SampleRate"},
		{History{{1.5, 1, 1}}, 1e-5, Options{}, "SampleRate"},
		{History{{math.NaN(), 1, 1}}, 1e-5, Options{}, "SampleRate"},
		{History{{0.1, 0, 1}}, 1e-5, Options{}, "NoiseMultiplier"},
		{History{{0.1, math.Inf(1), 1}}, 1e-5, Options{}, "NoiseMultiplier"},
		{History{{0.1, math.NaN(), 1}}, 1e-5, Options{}, "NoiseMultiplier"},
		{History{{0.1, 1, -1}}, 1e-5, Options{}, "Count"},
		// Beyond what float64 accounting represents: a per-step RDP
		// below 2⁻¹⁰²², more steps than float64 counts.
		{History{{0.1, 1e200, 1}}, 1e-5, Options{}, "NoiseMultiplier"},
		{History{{1e-10, 1e150, 1}}, 1e-5, Options{Accountant: GDP}, "NoiseMultiplier"},
		{History{{0.1, 1, MaxSteps + 1}}, 1e-5, Options{}, "Count"},
		{History{{0.1, 1, MaxSteps}, {0.2, 1, 1}}, 1e-5, Options{}, "Count"},
		{good, 0, Options{}, "Delta"},
		{good, 1, Options{}, "Delta"},
		{good, math.NaN(), Options{}, "Delta"},
		{good, 1e-5, Options{Accountant: "moments"}, "Accountant"},
		{good, 1e-5, Options{Orders: []float64{}}, "Orders"},
		{good, 1e-5, Options{Orders: []float64{2, 1}}, "Orders"},
		{good, 1e-5, Options{Orders: []float64{2, 2}}, "Orders"},
		{good, 1e-5, Options{Orders: []float64{math.NaN()}}, "Orders"},
		{good, 1e-5, Options{Orders: []float64{math.Inf(1)}}, "Orders"},
		{good, 1e-5, Options{Orders: []float64{MaxOrder + 1}}, "Orders"},
		{good, 1e-5, Options{Accountant: GDP, Orders: []float64{2}}, "Orders"},
		{good, 1e-5, Options{Accountant: GDP, Classical: true}, "Classical"},
		{good, 1e-5, Options{Accountant: PRV, Orders: DefaultOrders}, "Orders"},
		{good, 1e-5, Options{EpsilonError: 0.1}, "EpsilonError"},
		{good, 1e-5, Options{Accountant: GDP, DeltaError: 1e-8}, "DeltaError"},
		{good, 1e-5, Options{Accountant: PRV, EpsilonError: -0.1}, "EpsilonError"},
		{good, 1e-5, Options{Accountant: PRV, EpsilonError: math.NaN()}, "EpsilonError"},
		{good, 1e-5, Options{Accountant: PRV, DeltaError: -1e-9}, "DeltaError"},
		{good, 1e-5, Options{Accountant: PRV, DeltaError: 1e-5}, "DeltaError"},
		// δ below what float64 resolves on the PRV grid.
		{good, 1e-15, Options{Accountant: PRV}, "Delta"},
	}
	for _, tt := range tests {
		_, err := Epsilon(tt.h, tt.delta, tt.o)
		var se *setting.Error
		if !errors.As(err, &se) || se.Field != tt.field {
			t.Errorf("Epsilon(%v, %g, %+v) = %v, want an error for %s", tt.h, tt.delta, tt.o, err, tt.field)
		}
	}
	nm := []struct {
		q             float64
		steps         int
		target, delta float64
		field         string
	}{
		{0, 10, 1, 1e-5, "SampleRate"},
		{0.1, 0, 1, 1e-5, "Count"},
		{0.1, MaxSteps + 1, 1, 1e-5, "Count"},
		{0.1, 10, 0, 1e-5, "Epsilon"},
		{0.1, 10, math.Inf(1), 1e-5, "Epsilon"},
		{0.1, 10, 1, 2, "Delta"},
		// No σ ≤ 1e6 reaches ε = 1e-9 over 10⁶ full-batch steps.
		{1, 1000000, 1e-9, 1e-5, "Epsilon"},
	}
	for _, tt := range nm {
		_, err := NoiseMultiplier(tt.q, tt.steps, tt.target, tt.delta, Options{})
		var se *setting.Error
		if !errors.As(err, &se) || se.Field != tt.field {
			t.Errorf("NoiseMultiplier(%g, %d, %g, %g) = %v, want an error for %s", tt.q, tt.steps, tt.target, tt.delta, err, tt.field)
		}
	}
}

// GDP against Bu, Dong, Long, Su 2020 ("Deep learning with Gaussian
// differential privacy", Harvard Data Science Review, Figure 4's caption):
// MNIST with q = 256/60000 and δ = 1e-5 — σ̃ = 1.06 for 20 epochs is
// μ_CLT = 0.35 and (1.34, 1e-5)-DP; σ̃ = 0.638 for 70 epochs is
// μ_CLT = 1.78 and (8.68, 1e-5)-DP. An epoch is 60000/256 = 234.375 steps;
// the histories round to whole steps. σ̃ is printed to 3 digits and ε to
// 2, so the published ε must lie within 0.005 of the range that
// σ̃ ± 0.0005 spans (8.68 is not 8.697, the ε of 0.638 itself: ε moves by
// 0.07 per 0.001 of σ̃ there).
func TestGDPBuDongLongSu(t *testing.T) {
	tests := []struct {
		sigma    float64
		steps    int
		mu, eps  float64
		epsRound float64 // the ε of σ̃ itself, to 2 decimals; 0: only the range
	}{
		{1.06, 4688, 0.35, 1.34, 1.34},
		{0.638, 16406, 1.78, 8.68, 0},
	}
	for _, tt := range tests {
		q := 256.0 / 60000
		h := History{{q, tt.sigma, tt.steps}}
		if mu := gdpMu(h); !near(mu, tt.mu, places(2)) {
			t.Errorf("σ̃ = %g: μ = %.4g, want %g", tt.sigma, mu, tt.mu)
		}
		r, _ := Epsilon(h, 1e-5, Options{Accountant: GDP})
		if tt.epsRound != 0 && !near(r.Epsilon, tt.epsRound, places(2)) {
			t.Errorf("σ̃ = %g: ε = %.4g, want %g", tt.sigma, r.Epsilon, tt.epsRound)
		}
		hi, _ := Epsilon(History{{q, tt.sigma - 0.0005, tt.steps}}, 1e-5, Options{Accountant: GDP})
		lo, _ := Epsilon(History{{q, tt.sigma + 0.0005, tt.steps}}, 1e-5, Options{Accountant: GDP})
		if !(lo.Epsilon-places(2) <= tt.eps && tt.eps <= hi.Epsilon+places(2)) {
			t.Errorf("σ̃ = %g ± 0.0005: ε in [%.4g, %.4g], want %g within 0.005", tt.sigma, lo.Epsilon, hi.Epsilon, tt.eps)
		}
	}
}
