package privacy

import (
	"math"
	"slices"
	"testing"
)

// near reports whether got is within tol of want, absolutely.
func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

// places is the tolerance of Python's assertAlmostEqual(x, y, places=p):
// round(x − y, p) == 0, i.e. |x − y| < 0.5·10^−p.
func places(p int) float64 { return 0.5 * math.Pow(10, -float64(p)) }

// The default orders are Opacus' RDPAccountant.DEFAULT_ALPHAS, value for
// value: the list below is Python's repr of
// [1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64))
// (pytorch/opacus, opacus/accountants/rdp.py). Note that 11 is not in it.
func TestDefaultOrdersAreOpacus(t *testing.T) {
	want := []float64{1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 1.9, 2.0, 2.1, 2.2, 2.3, 2.4, 2.5, 2.6, 2.7, 2.8, 2.9,
		3.0, 3.1, 3.2, 3.3, 3.4, 3.5, 3.6, 3.7, 3.8, 3.9, 4.0, 4.1, 4.2, 4.3, 4.4, 4.5, 4.6, 4.7, 4.8, 4.9,
		5.0, 5.1, 5.2, 5.3, 5.4, 5.5, 5.6, 5.7, 5.8, 5.9, 6.0, 6.1, 6.2, 6.3, 6.4, 6.5, 6.6, 6.7, 6.8, 6.9,
		7.0, 7.1, 7.2, 7.3, 7.4, 7.5, 7.6, 7.7, 7.8, 7.9, 8.0, 8.1, 8.2, 8.3, 8.4, 8.5, 8.6, 8.7, 8.8, 8.9,
		9.0, 9.1, 9.2, 9.3, 9.4, 9.5, 9.6, 9.7, 9.8, 9.9, 10.0, 10.1, 10.2, 10.3, 10.4, 10.5, 10.6, 10.7, 10.8, 10.9,
		12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37,
		38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63}
	if len(want) != 151 || !slices.Equal(DefaultOrders, want) {
		t.Fatalf("DefaultOrders = %v (%d), want Opacus' 151 DEFAULT_ALPHAS %v", DefaultOrders, len(DefaultOrders), want)
	}
}

// rdpOf is the RDP of count steps at (q, σ) at each order.
func rdpOf(q, sigma float64, count int, orders []float64) []float64 {
	return rdpHistory(History{{SampleRate: q, NoiseMultiplier: sigma, Count: count}}, orders)
}

// One step's RDP against the published values of TF Privacy's and
// dp_accounting's tests, each to the test's own tolerance.
func TestRDPPublished(t *testing.T) {
	tests := []struct {
		source       string // repository, path @ commit, test name
		q, sigma     float64
		count        int
		orders, want []float64
		rtol, atol   float64
	}{
		// tensorflow/privacy, tensorflow_privacy/privacy/analysis/rdp_accountant_test.py
		// @868cf54, test_compute_rdp_no_sampling: q = 1 is the Gaussian, α/(2σ²).
		{"TF Privacy test_compute_rdp_no_sampling", 1, 10, 1, []float64{20}, []float64{0.1}, 0, 0},
		// same file, test_compute_rdp_scalar: assertAlmostEqual(…, 0.07737, places=5).
		{"TF Privacy test_compute_rdp_scalar", 0.1, 2, 10, []float64{5}, []float64{0.07737}, 0, places(5)},
		// same file, test_compute_rdp_sequence: assertAllClose(…, rtol=1e-4)
		// (its last order, np.inf, is not an order Options accept).
		{"TF Privacy test_compute_rdp_sequence", 0.01, 2.5, 50, []float64{1.5, 2.5, 5, 50, 100},
			[]float64{6.5007e-04, 1.0854e-03, 2.1808e-03, 2.3846e-02, 1.6742e+02}, 1e-4, 0},
		// google/differential-privacy,
		// python/dp_accounting/dp_accounting/rdp/rdp_privacy_accountant_test.py
		// @b5b0286, test_compute_rdp_poisson_sampled_gaussian: np.allclose
		// (rtol=1e-4, numpy's default atol=1e-8). Its order 1.5 is left out:
		// dp_accounting now sums the absolute values of the fractional
		// series' terms, an upper bound 3 % above the signed sum that Opacus
		// and TF Privacy (above, 6.5007e-04) compute and this package
		// follows.
		{"dp_accounting test_compute_rdp_poisson_sampled_gaussian", 0.01, 2.5, 50, []float64{2.5, 5, 50, 100},
			[]float64{1.08548710e-03, 2.18075656e-03, 2.38460375e-02, 1.67416308e02}, 1e-4, 1e-8},
		// dp_accounting rdp_privacy_accountant_test.py @b5b0286,
		// test_compute_rdp_gaussian: PoissonSampled with q = 1 is the
		// Gaussian, α/(2σ²), assertAlmostEqual (7 places).
		{"dp_accounting test_compute_rdp_gaussian", 1, 2.71828, 1, []float64{3.14159},
			[]float64{3.14159 / (2 * 2.71828 * 2.71828)}, 0, places(7)},
	}
	for _, tt := range tests {
		got := rdpOf(tt.q, tt.sigma, tt.count, tt.orders)
		for i, w := range tt.want {
			if !near(got[i], w, tt.atol+tt.rtol*math.Abs(w)) {
				t.Errorf("%s: RDP(q=%g, σ=%g, %d steps, α=%g) = %.10g, want %.10g", tt.source, tt.q, tt.sigma, tt.count, tt.orders[i], got[i], w)
			}
		}
	}
}

// logAQuad is log(A_α) by quadrature, independent of the series of logAInt
// and logAFrac: A_α = ∫ φ_σ(z)·((1−q) + q·e^{(2z−1)/(2σ²)})^α dz
// (Mironov, Talwar, Zhang 2019, Sec. 3.3; dp_accounting's test computes the
// same integral with mpmath.quad). The trapezoid rule on a grid of step
// σ/200 over the whole mass is exact to rounding for this smooth,
// Gaussian-tailed integrand; the sum is taken in log space.
func logAQuad(q, sigma, alpha float64) float64 {
	logQ, log1Q := math.Log(q), math.Log1p(-q)
	logF := func(z float64) float64 {
		u := (2*z - 1) / (2 * sigma * sigma)
		return -z*z/(2*sigma*sigma) - math.Log(sigma*math.Sqrt(2*math.Pi)) + alpha*logAdd(log1Q, logQ+u)
	}
	// The integrand is a mixture of Gaussians in z of width σ centred
	// between 0 and α; 60σ on either side holds all of its mass.
	h := sigma / 200
	lo, hi := -60*sigma, alpha+60*sigma
	peak := math.Inf(-1)
	for z := lo; z <= hi; z += h {
		peak = max(peak, logF(z))
	}
	var sum float64
	for z := lo; z <= hi; z += h {
		sum += math.Exp(logF(z) - peak)
	}
	return peak + math.Log(sum*h)
}

// log(A_α) from the series against quadrature, at the (q, σ, α) of
// dp_accounting's test_compute_log_a_equals_mp (rdp_privacy_accountant_test.py
// @b5b0286, and TF Privacy's rdp_accountant_test.py before it), to its
// tolerance rtol=1e-4, atol=1e-8.
func TestLogAAgainstQuadrature(t *testing.T) {
	params := []struct{ q, sigma, order float64 }{
		{1e-7, 0.1, 1.01}, {1e-6, 0.1, 256}, {1e-5, 0.1, 256.1}, {1e-6, 1, 27}, {1e-4, 1.0, 1.5},
		{1e-3, 1.0, 2}, {0.01, 10, 20}, {0.1, 100, 20.5}, {0.99, 0.1, 256}, {0.999, 100, 256.1},
	}
	for _, p := range params {
		var got float64
		if p.order == math.Trunc(p.order) {
			got = logAInt(p.q, p.sigma, int(p.order))
		} else {
			got = logAFrac(p.q, p.sigma, p.order)
		}
		want := logAQuad(p.q, p.sigma, p.order)
		if !near(got, want, 1e-8+1e-4*math.Abs(want)) {
			t.Errorf("log A(q=%g, σ=%g, α=%g) = %.10g, quadrature %.10g", p.q, p.sigma, p.order, got, want)
		}
	}
}

// The conversion to (ε, δ) against TF Privacy's and dp_accounting's tests.
func TestRDPConversionPublished(t *testing.T) {
	// tensorflow/privacy rdp_accountant_test.py @868cf54,
	// test_get_privacy_spent_check_target_delta, and google/differential-privacy
	// rdp_privacy_accountant_test.py @b5b0286, test_compute_epsilon_delta_pure_dp:
	// a constant RDP of 1.1 at orders 2..32 gives ε = 1.32783806176 at
	// δ = 1e-5 (assertAlmostEqual, 7 places) at the largest order, 32.
	var orders, rdp []float64
	for a := 2; a < 33; a++ {
		orders, rdp = append(orders, float64(a)), append(rdp, 1.1)
	}
	if eps, order := rdpEpsilon(orders, rdp, 1e-5, false); !near(eps, 1.32783806176, places(7)) || order != 32 {
		t.Errorf("pure DP: ε, order = %.12g, %g, want 1.32783806176, 32", eps, order)
	}
	// Same tests, second part / test_compute_epsilon_delta_gaussian: the
	// Gaussian (q = 1) with σ = 4.530877117 is exactly (1, 1e-6)-DP; over
	// the orders 0.001·i, i = 1000..99999, the conversion gives ε = 1
	// (7 places). Order 1.0 has no finite ε and is skipped.
	orders = orders[:0]
	for i := 1000; i < 100000; i++ {
		orders = append(orders, 0.001*float64(i))
	}
	rdp = rdpOf(1, 4.530877117, 1, orders)
	if eps, _ := rdpEpsilon(orders, rdp, 1e-6, false); !near(eps, 1, places(7)) {
		t.Errorf("Gaussian σ = 4.530877117: ε = %.10g, want 1", eps)
	}
}

// Whole accountings: Epsilon against Opacus' and TF Privacy's published ε.
func TestEpsilonRDPPublished(t *testing.T) {
	tfOrders := append([]float64{1.25, 1.5, 1.75, 2, 2.25, 2.5, 3, 3.5, 4, 4.5}, seq(5, 64)...)
	tfOrders = append(tfOrders, 128, 256, 512)
	// compute_dp_sgd_privacy's steps: ceil(epochs·n/batch).
	tfSteps := func(n, batch, epochs float64) int { return int(math.Ceil(epochs * n / batch)) }
	tests := []struct {
		source   string
		q, sigma float64
		steps    int
		delta    float64
		o        Options
		eps, tol float64
		order    float64 // 0: not checked
	}{
		// pytorch/opacus, opacus/tests/accountants_test.py @4d0ebc8,
		// test_rdp_accountant (and test_accountant_load_state_dict):
		// assertAlmostEqual(epsilon, 7.32911117143), 7 places.
		{"Opacus test_rdp_accountant", 0.04, 1.5, int(90 / 0.04), 1e-5, Options{}, 7.32911117143, places(7), 0},
		// tensorflow/privacy, tensorflow_privacy/privacy/analysis/compute_dp_sgd_privacy_test.py
		// @be8175b ("Improved conversion from Renyi DP to approx DP", the
		// conversion Opacus uses), test_compute_dp_sgd_privacy Test0..Test2:
		// assertAlmostEqual (7 places) and the order exactly.
		{"TF Privacy test_compute_dp_sgd_privacy Test0", 150.0 / 60000, 1.3, tfSteps(60000, 150, 15), 1e-5,
			Options{Orders: tfOrders}, 0.7242234026109595, places(7), 19},
		{"TF Privacy test_compute_dp_sgd_privacy Test1", 100.0 / 100000, 1.0, tfSteps(100000, 100, 30), 1e-7,
			Options{Orders: tfOrders}, 1.4154988495444845, places(7), 13},
		{"TF Privacy test_compute_dp_sgd_privacy Test2", 1024.0 / 100000000, 0.1, tfSteps(100000000, 1024, 10), 1e-7,
			Options{Orders: tfOrders}, 5907982.31138195, places(7), 1.25},
		// Same test @10335f6, before that commit: the classical conversion.
		{"TF Privacy test_compute_dp_sgd_privacy Test0 (classical)", 150.0 / 60000, 1.3, tfSteps(60000, 150, 15), 1e-5,
			Options{Orders: tfOrders, Classical: true}, 0.941870567, places(7), 19},
		{"TF Privacy test_compute_dp_sgd_privacy Test1 (classical)", 100.0 / 100000, 1.0, tfSteps(100000, 100, 30), 1e-7,
			Options{Orders: tfOrders, Classical: true}, 1.70928734, places(7), 13},
		{"TF Privacy test_compute_dp_sgd_privacy Test2 (classical)", 1024.0 / 100000000, 0.1, tfSteps(100000000, 1024, 10), 1e-7,
			Options{Orders: tfOrders, Classical: true}, 5907984.81339406, places(7), 1.25},
		// pytorch/opacus, examples/mnist_README.md @4d0ebc8: MNIST, batch
		// 240 of 60000 (q = 0.004, 250 steps an epoch), δ = 1e-5, ε printed
		// to 2 decimals and written when Opacus converted classically. Its
		// sample run: "(ε = 0.71, δ = 1e-05) for α = 18.0" after epoch 1 and
		// "(ε = 1.16, δ = 1e-05) for α = 17.0" after epoch 15 at σ = 1.3;
		// its sample parameter sets (6.86, 1e-5)-DP at σ = 0.7, 45 epochs,
		// and (2.91, 1e-5)-DP at σ = 1.1, 60 epochs.
		{"Opacus mnist_README epoch 1", 0.004, 1.3, 250, 1e-5, Options{Classical: true}, 0.71, places(2), 18},
		{"Opacus mnist_README epoch 15", 0.004, 1.3, 15 * 250, 1e-5, Options{Classical: true}, 1.16, places(2), 17},
		{"Opacus mnist_README σ = 0.7", 0.004, 0.7, 45 * 250, 1e-5, Options{Classical: true}, 6.86, places(2), 0},
		{"Opacus mnist_README σ = 1.1", 0.004, 1.1, 60 * 250, 1e-5, Options{Classical: true}, 2.91, places(2), 0},
		// tensorflow/privacy, tutorials/README.md @03035d5: the MNIST
		// tutorial's defaults (N = 60000, batch 256, σ = 1.1, 60 epochs,
		// δ = 1e-5) satisfy "eps = 3.01" by compute_dp_sgd_privacy.py, which
		// then converted classically over its own orders and ceil(60·60000/256)
		// steps. The improved conversion puts the same run at 2.60.
		{"TF Privacy tutorials/README.md MNIST", 256.0 / 60000, 1.1, tfSteps(60000, 256, 60), 1e-5,
			Options{Orders: tfOrders, Classical: true}, 3.01, places(2), 0},
	}
	for _, tt := range tests {
		r, err := Epsilon(History{{tt.q, tt.sigma, tt.steps}}, tt.delta, tt.o)
		if err != nil {
			t.Fatalf("%s: %v", tt.source, err)
		}
		if !near(r.Epsilon, tt.eps, tt.tol) || tt.order != 0 && r.Order != tt.order {
			t.Errorf("%s: ε = %.15g at order %g, want %.15g (±%g) at order %g", tt.source, r.Epsilon, r.Order, tt.eps, tt.tol, tt.order)
		}
	}
}

// seq returns the integers lo..hi−1 as float64.
func seq(lo, hi int) []float64 {
	var s []float64
	for a := lo; a < hi; a++ {
		s = append(s, float64(a))
	}
	return s
}

// RDP at extreme σ and T, where one step's A_α exceeds 1 by less than
// float64 resolves near 1 (A_2 − 1 ≈ 1.1e−15 at q = 0.001, σ = 30000).
// Summing A_α itself lost that excess: ε came out 0 where GDP gives 0.029.
// In this regime ε depends on (q, σ, T) through q²T/σ² alone, so the
// extreme accounting must equal the one at σ/100 and T/10⁴, where the
// series are exact, and nearly that at σ/1000 and T/10⁶, where PRV, an
// upper bound on the true ε, can check it in a moment.
func TestRDPExtreme(t *testing.T) {
	extreme := History{{0.001, 30000, 1e11}}
	scaled, small := History{{0.001, 300, 1e7}}, History{{0.001, 30, 1e5}}
	eps := func(h History, o Options) float64 {
		t.Helper()
		r, err := Epsilon(h, 1e-5, o)
		if err != nil {
			t.Fatal(err)
		}
		return r.Epsilon
	}
	rdp, gdp := eps(extreme, Options{}), eps(extreme, Options{Accountant: GDP})
	if !near(gdp, 0.02886, 1e-5) {
		t.Errorf("GDP ε = %.6g, want 0.02886", gdp)
	}
	// An upper bound: at or above the central limit, and (with Opacus'
	// orders, which stop at 63 where the best order is near 400) 0.1064.
	if want := eps(scaled, Options{}); !(rdp >= gdp) || !near(rdp, want, 1e-6*want) || !near(rdp, 0.10637, 1e-4) {
		t.Errorf("RDP ε = %.10g, want %.10g (σ/100, T/10⁴), 0.10637, above GDP's %.4g", rdp, want, gdp)
	}
	// With orders up to 6144 RDP comes within 20 % of GDP and of PRV's
	// estimate at the small history (PRV's reported ε less its 0.01).
	var orders []float64
	for a := 2.0; a <= 4096; a *= 2 {
		orders = append(orders, a, 1.5*a)
	}
	prv := eps(small, Options{Accountant: PRV}) - defaultEpsilonError
	if wide := eps(extreme, Options{Orders: orders}); !(wide >= prv && wide >= gdp && wide < 1.2*prv && wide < 1.2*gdp) {
		t.Errorf("RDP ε over orders to 6144 = %.6g, want within 20 %% above PRV %.6g and GDP %.6g", wide, prv, gdp)
	}

	// q → 1 is the single Gaussian, α/(2σ²), at any σ: at integer
	// orders (logAInt) exactly; at fractional ones (the series, or where
	// its log A_α is below fracFloor the chord of the Gaussian's
	// log A_k = k(k−1)/(2σ²) between the integers around α) at least the
	// Gaussian's and at most the chord's.
	const q = 1 - 1e-12
	for _, sigma := range []float64{3, 300, 30000, 3e7} {
		logA := func(k float64) float64 { return k * (k - 1) / (2 * sigma * sigma) }
		for _, a := range []float64{1.5, 2, 2.5, 7, 10.9, 63} {
			got, want := rdpStep(q, sigma, a), a/(2*sigma*sigma)
			k := math.Floor(a)
			chord := ((k+1-a)*logA(k) + (a-k)*logA(k+1)) / (a - 1)
			if !(got >= want*(1-1e-6) && got <= chord*(1+1e-6)) {
				t.Errorf("RDP(q = 1 − 1e−12, σ = %g, α = %g) = %.10g, want the Gaussian's %.10g (at most %.10g)", sigma, a, got, want, chord)
			}
		}
	}

	// NoiseMultiplier at T = 10¹⁵: ε(σ) lost to rounding let the search
	// stop at σ = 55552 (GDP: ε ≈ 17.9 even at σ = 10⁵, q = 0.01). Now no
	// σ ≤ 10⁶ meets ε = 1 there, and at q = 0.001 the σ found spends at
	// most 1 by GDP too.
	if s, err := NoiseMultiplier(0.01, 1e15, 1, 1e-5, Options{}); err == nil {
		t.Errorf("NoiseMultiplier(q = 0.01, T = 1e15, ε = 1) = %g, want an error", s)
	}
	s, err := NoiseMultiplier(0.001, 1e15, 1, 1e-5, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if g := eps(History{{0.001, s, 1e15}}, Options{Accountant: GDP}); !(g <= 1) {
		t.Errorf("NoiseMultiplier(q = 0.001, T = 1e15, ε = 1) = %g, whose GDP ε is %g", s, g)
	}
}
