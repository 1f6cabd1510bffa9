package privacy

import "math"

// gdpMu is the μ of the Gaussian-DP guarantee that the central limit
// theorem of Bu, Dong, Long, Su 2020 (Theorem 5, Poisson subsampling)
// gives the composition h: a run of T steps at (q, σ) is asymptotically
// μ-GDP with μ = q·√T·√(e^{1/σ²} − 1), and μ-GDP guarantees compose as
// μ² add (Dong, Roth, Su 2019, Corollary 2), so
// μ = √(Σ Count·q²·(e^{1/σ²} − 1)) over the entries.
func gdpMu(h History) float64 {
	var mu2 float64
	for _, s := range h {
		mu2 += float64(s.Count) * s.SampleRate * s.SampleRate * math.Expm1(1/(s.NoiseMultiplier*s.NoiseMultiplier))
	}
	return math.Sqrt(mu2)
}

// gdpDelta is the δ(ε) of a μ-GDP mechanism, its tight (ε, δ) curve
// (Dong, Roth, Su 2019, Corollary 1):
// δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2), the second term taken in log
// space so that e^ε may overflow while the product does not.
func gdpDelta(eps, mu float64) float64 {
	return math.Exp(logNormalCDF(-eps/mu+mu/2)) - math.Exp(eps+logNormalCDF(-eps/mu-mu/2))
}

// gdpEpsilon is the ε at which h, through its μ-GDP central limit, meets δ:
// the root of the decreasing δ(ε) = δ, found by bisection to the last
// bits of float64 (Opacus' eps_from_mu solves the same equation with
// Brent's method on [0, 500]). ε = 0 when δ(0) ≤ δ already; +Inf when μ is.
func gdpEpsilon(h History, delta float64) float64 {
	mu := gdpMu(h)
	switch {
	case math.IsInf(mu, 1):
		return math.Inf(1)
	case mu == 0 || gdpDelta(0, mu) <= delta:
		return 0
	}
	lo, hi := 0.0, 1.0
	for gdpDelta(hi, mu) > delta {
		lo, hi = hi, 2*hi
		if math.IsInf(hi, 1) {
			return hi
		}
	}
	for range 200 {
		mid := lo + (hi-lo)/2
		if mid == lo || mid == hi {
			break
		}
		if gdpDelta(mid, mu) > delta {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}
