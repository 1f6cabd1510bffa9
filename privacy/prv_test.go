package privacy

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"os"
	"testing"
)

// The real FFTs against the DFT summed directly in extended care (each
// term's angle reduced exactly), and irfft∘rfft against the identity.
func TestFFTAgainstDirectDFT(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{4, 8, 16, 64, 256, 1024} {
		x := make([]float64, n)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		p := newFFTPlan(n)
		got := make([]complex128, n/2+1)
		p.rfft(x, got)
		var scale float64
		for _, v := range x {
			scale += math.Abs(v)
		}
		for k := range got {
			var want complex128
			for j, v := range x {
				s, c := math.Sincos(2 * math.Pi * float64((j*k)%n) / float64(n))
				want += complex(v*c, -v*s)
			}
			if d := cmplx.Abs(got[k] - want); d > 1e-14*scale {
				t.Errorf("n = %d: X_%d = %v, direct %v (|Δ| = %g)", n, k, got[k], want, d)
			}
		}
		if imag(got[0]) != 0 || imag(got[n/2]) != 0 {
			t.Errorf("n = %d: X_0 = %v, X_n/2 = %v, want real", n, got[0], got[n/2])
		}
		back := make([]float64, n)
		p.irfft(append([]complex128(nil), got...), back)
		for i := range x {
			if !near(back[i], x[i], 1e-14*scale) {
				t.Errorf("n = %d: irfft(rfft(x))[%d] = %g, want %g", n, i, back[i], x[i])
			}
		}
	}
}

// selfCompose and convolveSame against direct convolution on a small grid
// whose mass stays inside the window: the n-fold sum of a distribution on
// the points −2..2 (around t = 0 at K = N/2 − 1) lands where the direct sum
// puts it.
func TestComposeAgainstDirect(t *testing.T) {
	d := domain{tMin: -15, tMax: 16, size: 32} // dt = 1, t = 0 at index 15
	base := make([]float64, 32)
	for i, w := range []float64{0.1, 0.2, 0.4, 0.2, 0.1} {
		base[13+i] = w // t = −2 … 2
	}
	// direct: the n-fold convolution of the five weights.
	direct := func(n int) map[int]float64 {
		dist := map[int]float64{0: 1}
		for range n {
			next := map[int]float64{}
			for s, p := range dist {
				for i, w := range []float64{0.1, 0.2, 0.4, 0.2, 0.1} {
					next[s+i-2] += p * w
				}
			}
			dist = next
		}
		return dist
	}
	for _, n := range []int{1, 2, 3, 4, 7} {
		got := discretePRV{pmf: base, d: d}.selfCompose(n)
		want := direct(n)
		for i, v := range got.pmf {
			if !near(v, want[i-15], 1e-15) {
				t.Errorf("%d-fold: p(t = %d) = %g, want %g", n, i-15, v, want[i-15])
			}
		}
		// Two halves convolved equal the whole.
		if n < 2 {
			continue
		}
		a := discretePRV{pmf: base, d: d}.selfCompose(n / 2)
		b := discretePRV{pmf: base, d: d}.selfCompose(n - n/2)
		sum := convolveSame(a, b)
		for i, v := range sum.pmf {
			if !near(v, want[i-15], 1e-15) {
				t.Errorf("%d = %d + %d: p(t = %d) = %g, want %g", n, n/2, n-n/2, i-15, v, want[i-15])
			}
		}
	}
}

// The loss distribution: its mass function integrates to the truncated
// mean (an independent check of truncatedMean by the grid), and its cdf is
// a distribution function.
func TestSubsampledGaussianLoss(t *testing.T) {
	for _, g := range []subsampledGaussian{{0.01, 1.1}, {0.04, 1.5}, {0.2, 0.8}, {0.5, 3}} {
		tMin, tMax := -8.0, 8.0
		// ∫ t dF by the trapezoid rule on a fine grid of F.
		const n = 400000
		h := (tMax - tMin) / n
		var mean float64
		prev := g.cdf(tMin)
		for i := 1; i <= n; i++ {
			tt := tMin + float64(i)*h
			f := g.cdf(tt)
			mean += (tt - h/2) * (f - prev)
			prev = f
		}
		mean /= g.cdf(tMax) - g.cdf(tMin)
		if got := g.truncatedMean(tMin, tMax); !near(got, mean, 1e-9) {
			t.Errorf("q = %g, σ = %g: truncated mean %.12g, grid %.12g", g.q, g.sigma, got, mean)
		}
		if g.cdf(math.Log1p(-g.q)) != 0 || !near(g.cdf(50), 1, 1e-15) {
			t.Errorf("q = %g, σ = %g: cdf(log(1−q)) = %g, cdf(50) = %g", g.q, g.sigma, g.cdf(math.Log1p(-g.q)), g.cdf(50))
		}
	}
}

// The PRV accountant against Opacus' published values (pytorch/opacus
// @4d0ebc8): opacus/tests/accountants_test.py, test_prv_accountant —
// q = 0.04, σ = 1.5, int(90 // 0.04) = 2249 steps, δ = 1e-5:
// assertAlmostEqual(epsilon, 6.777395712150674), 7 places — and
// opacus/tests/prv_accountant.py, test_values: msr_values, the ε of
// Microsoft's prv_accountant at δ = 1e-6, assertAlmostEqual places=4 (the
// entries Opacus comments out are left out here too). The four rows at
// q = 0.05 over 20000 and 50000 steps need grids of millions of points
// (about 20 s of CPU and 0.8 GB together); they run when PSCLIP_PRV_LONG=1.
func TestPRVPublished(t *testing.T) {
	r, err := Epsilon(History{{0.04, 1.5, 2249}}, 1e-5, Options{Accountant: PRV})
	if err != nil || !near(r.Epsilon, 6.777395712150674, places(7)) {
		t.Errorf("Opacus test_prv_accountant: ε = %.15g, %v; want 6.777395712150674", r.Epsilon, err)
	}
	msr := []struct {
		sigma, q float64
		steps    int
		eps      float64
	}{
		{0.8, 0.001, 100, 0.270403364058018680360362395731},
		{1.5, 0.001, 100, 0.0393694193095203287535710501288},
		{2.0, 0.001, 100, 0.0291045369484074882560076247273},
		{3.0, 0.001, 100, 0.0215200934390882663016508757892},
		{0.8, 0.05, 100, 6.74105193941409996938318727189},
		{1.5, 0.05, 100, 1.95385313568420015961635272106},
		{2.0, 0.05, 100, 1.28363737962406521120328761754},
		{3.0, 0.05, 100, 0.767933789666825572517439013609},
		{0.8, 0.2, 100, 24.3336641779225644199868838768},
		{1.5, 0.2, 100, 8.49897785912163072907787864096},
		{2.0, 0.2, 100, 5.67205560882372950004537415225},
		{3.0, 0.2, 100, 3.38122051022184422208738396876},
		{0.8, 0.001, 1000, 0.477771266184522591657923840103},
		{1.5, 0.001, 1000, 0.0998206602308474855167474970585},
		{2.0, 0.001, 1000, 0.0712187825381152272985474382949},
		{3.0, 0.001, 1000, 0.0476159308713589302097801692071},
		{0.8, 0.05, 1000, 19.5258428053837356230815203162},
		{1.5, 0.05, 1000, 6.20996924657726712126759593957},
		{2.0, 0.05, 1000, 4.17279986668931890392286732094},
		{3.0, 0.05, 1000, 2.52757432605973830774814814504},
		{0.8, 0.001, 20000, 1.29600925757016161021795142005},
		{1.5, 0.001, 20000, 0.437005108654860807693154356457},
		{2.0, 0.001, 20000, 0.305837939762453436820521801565},
		{3.0, 0.001, 20000, 0.194031030686054706269061398416},
		{1.5, 0.05, 20000, 38.3066179140872336006395926233},
		{2.0, 0.05, 20000, 24.4217185703225858617315680021},
		{3.0, 0.05, 20000, 13.9611146992367061159256991232},
		{0.8, 0.001, 50000, 2.03451480771586634688219419331},
		{1.5, 0.001, 50000, 0.704218384555810095193351116905},
		{2.0, 0.001, 50000, 0.491354910211401318953505779064},
		{3.0, 0.001, 50000, 0.309694161156544023327796821832},
		{1.5, 0.05, 50000, 73.1901767238329625797632616013},
		{2.0, 0.05, 50000, 45.2369958613306906158868514467},
		{3.0, 0.05, 50000, 24.9420056431444763234139827546},
	}
	for _, c := range msr {
		if c.q == 0.05 && c.steps >= 20000 && os.Getenv("PSCLIP_PRV_LONG") != "1" {
			continue
		}
		r, err := Epsilon(History{{c.q, c.sigma, c.steps}}, 1e-6, Options{Accountant: PRV})
		if err != nil || !near(r.Epsilon, c.eps, places(4)) {
			t.Errorf("Opacus msr_values (σ = %g, q = %g, %d steps): ε = %.10g, %v; want %.10g", c.sigma, c.q, c.steps, r.Epsilon, err, c.eps)
		}
	}
}

// Entries compose by convolution: a history of the same steps split into
// unmerged entries (which takes the FFT power of each and the convolution
// tree) accounts as the merged one, and a history whose q and σ change
// lies between its parts and below the RDP bound of the same history.
func TestPRVHeterogeneous(t *testing.T) {
	o := Options{Accountant: PRV}
	whole, err := Epsilon(History{{0.01, 1.0, 600}}, 1e-5, o)
	if err != nil {
		t.Fatal(err)
	}
	split, err := Epsilon(History{{0.01, 1.0, 200}, {0.01, 1.0, 100}, {0.01, 1.0, 300}}, 1e-5, o)
	if err != nil || !near(split.Epsilon, whole.Epsilon, 1e-9) {
		t.Errorf("split ε = %.12g, %v; merged %.12g", split.Epsilon, err, whole.Epsilon)
	}
	mixed := History{{0.01, 1.0, 300}, {0.02, 1.5, 300}}
	m, err := Epsilon(mixed, 1e-5, o)
	a, _ := Epsilon(History{{0.01, 1.0, 600}}, 1e-5, o)
	b, _ := Epsilon(History{{0.02, 1.5, 600}}, 1e-5, o)
	r, _ := Epsilon(mixed, 1e-5, Options{})
	lo, hi := min(a.Epsilon, b.Epsilon), max(a.Epsilon, b.Epsilon)
	if err != nil || !(m.Epsilon > lo && m.Epsilon < hi && m.Epsilon < r.Epsilon) {
		t.Errorf("mixed ε = %.6g, %v; want between %.6g and %.6g and below RDP's %.6g", m.Epsilon, err, lo, hi, r.Epsilon)
	}
}
