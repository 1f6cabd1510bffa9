package privacy

import "math"

// DefaultOrders are the RDP orders Opacus' RDPAccountant searches by
// default (DEFAULT_ALPHAS = [1 + x / 10.0 for x in range(1, 100)] +
// list(range(12, 64))): 1.1 to 10.9 in steps of 0.1, then 12 to 63.
var DefaultOrders = defaultOrders()

func defaultOrders() []float64 {
	var orders []float64
	for x := 1; x < 100; x++ {
		orders = append(orders, 1+float64(x)/10.0)
	}
	for a := 12; a < 64; a++ {
		orders = append(orders, float64(a))
	}
	return orders
}

// rdpHistory returns the RDP of the composition of h at each order: the
// sum over its entries of Count times one step's RDP (RDP composes
// additively at every order).
func rdpHistory(h History, orders []float64) []float64 {
	rdp := make([]float64, len(orders))
	for _, s := range h {
		if s.Count == 0 {
			continue
		}
		for i, a := range orders {
			rdp[i] += rdpStep(s.SampleRate, s.NoiseMultiplier, a) * float64(s.Count)
		}
	}
	return rdp
}

// rdpStep is the RDP at order α > 1 of one step of the Poisson-subsampled
// Gaussian mechanism with sample rate 0 < q ≤ 1 and noise multiplier σ > 0:
// log(A_α)/(α−1) (Mironov, Talwar, Zhang 2019, Sec. 3.3), or α/(2σ²), the
// plain Gaussian's, when q = 1. It is +Inf where A_α cannot be computed
// (see logAFrac), which excludes the order.
//
// At large σ and small q, A_α exceeds 1 by less than float64 resolves
// near 1 (q = 0.001, σ = 30000: A_2 − 1 ≈ 1.1e−15), so log A_α is
// computed from A_α − 1 (logAInt). The fractional series cannot be taken
// that way; where its log A_α falls below fracFloor it is replaced by the
// chord between the neighbouring integer orders, an upper bound because
// log A_α is convex in α (a log moment-generating function) and A_1 = 1.
func rdpStep(q, sigma, alpha float64) float64 {
	if math.IsInf(1/(2*sigma*sigma), 1) { // σ so small that σ² underflows: no privacy
		return math.Inf(1)
	}
	if q == 1 {
		return alpha / (2 * sigma * sigma)
	}
	if alpha == math.Trunc(alpha) {
		return logAInt(q, sigma, int(alpha)) / (alpha - 1)
	}
	la := logAFrac(q, sigma, alpha)
	if la < fracFloor {
		a := math.Floor(alpha)
		lo := 0.0 // log A_1
		if a >= 2 {
			lo = logAInt(q, sigma, int(a))
		}
		t := alpha - a
		la = (1-t)*lo + t*logAInt(q, sigma, int(a)+1)
	}
	return la / (alpha - 1)
}

// fracFloor is the log A_α below which logAFrac's rounding (a few units
// of 2⁻⁵² in a sum near 1) exceeds 10⁻⁵ of the result.
const fracFloor = 1e-9

// logAInt is log(A_α) for an integer order α ≥ 2 and 0 < q < 1, where
// A_α = Σ_{i=0}^{α} C(α, i) q^i (1−q)^(α−i) exp((i² − i)/(2σ²)) (Opacus'
// _compute_log_a_for_int_alpha). The binomial weights sum to 1 and the
// terms i = 0, 1 have exponent 0, so
// A_α − 1 = Σ_{i=2}^{α} C(α, i) q^i (1−q)^(α−i) expm1((i² − i)/(2σ²)),
// summed in log space, and log A_α = log(1 + (A_α − 1)): exact to
// rounding however close A_α is to 1.
func logAInt(q, sigma float64, alpha int) float64 {
	logQ, log1Q := math.Log(q), math.Log1p(-q)
	logAm1 := math.Inf(-1)           // log(A_α − 1)
	logC := math.Log(float64(alpha)) // log C(α, i), updated by C(α, i) = C(α, i−1)·(α−i+1)/i
	for i := 2; i <= alpha; i++ {
		logC += math.Log(float64(alpha-i+1)) - math.Log(float64(i))
		fi := float64(i)
		s := logC + fi*logQ + float64(alpha-i)*log1Q + logExpm1((fi*fi-fi)/(2*sigma*sigma))
		logAm1 = logAdd(logAm1, s)
	}
	return log1pExp(logAm1)
}

// logExpm1 is log(e^x − 1) for x ≥ 0 (−Inf at 0), without overflow.
func logExpm1(x float64) float64 {
	if x > 1 {
		return x + math.Log1p(-math.Exp(-x))
	}
	return math.Log(math.Expm1(x))
}

// log1pExp is log(1 + e^x), without overflow.
func log1pExp(x float64) float64 {
	if x > 0 {
		return x + math.Log1p(math.Exp(-x))
	}
	return math.Log1p(math.Exp(x))
}

// maxFracTerms bounds the series of logAFrac. The terms fall below e^−30
// after a few hundred at orders and noise of practical use; a series still
// running after this many is given up and its order excluded.
const maxFracTerms = 100000

// logAFrac is log(A_α) for a fractional order α > 1 and 0 < q < 1: the
// integral of A_α split at z0 = σ² log(1/q − 1) + 1/2 into two series
// with erfc factors, whose terms (of alternating sign past i > α) are
// added and subtracted in log space until both fall below e^−30 (Opacus'
// _compute_log_a_for_frac_alpha, from TF Privacy's rdp_accountant). It is
// +Inf where rounding makes a partial sum negative or the series does not
// settle (or a term overflows), a conservative answer that excludes the
// order.
func logAFrac(q, sigma, alpha float64) float64 {
	logQ, log1Q := math.Log(q), math.Log1p(-q)
	z0 := sigma*sigma*math.Log(1/q-1) + 0.5
	s2 := math.Sqrt2 * sigma
	la0, la1 := math.Inf(-1), math.Inf(-1)
	logC, positive := 0.0, true // log|C(α, i)| and its sign
	for i := 0; i < maxFracTerms; i++ {
		fi := float64(i)
		if i > 0 {
			c := (alpha - fi + 1) / fi
			logC += math.Log(math.Abs(c))
			if c < 0 {
				positive = !positive
			}
		}
		j := alpha - fi
		logT0 := logC + fi*logQ + j*log1Q
		logT1 := logC + j*logQ + fi*log1Q
		logE0 := math.Log(0.5) + logErfc((fi-z0)/s2)
		logE1 := math.Log(0.5) + logErfc((z0-j)/s2)
		logS0 := logT0 + (fi*fi-fi)/(2*sigma*sigma) + logE0
		logS1 := logT1 + (j*j-j)/(2*sigma*sigma) + logE1
		if positive {
			la0, la1 = logAdd(la0, logS0), logAdd(la1, logS1)
		} else {
			var ok0, ok1 bool
			la0, ok0 = logSub(la0, logS0)
			la1, ok1 = logSub(la1, logS1)
			if !ok0 || !ok1 {
				return math.Inf(1)
			}
		}
		switch m := max(logS0, logS1); {
		case m < -30:
			return logAdd(la0, la1)
		case math.IsNaN(m) || math.IsInf(m, 1):
			return math.Inf(1)
		}
	}
	return math.Inf(1)
}

// logAdd is log(e^x + e^y).
func logAdd(x, y float64) float64 {
	a, b := min(x, y), max(x, y)
	if math.IsInf(a, -1) {
		return b
	}
	return math.Log1p(math.Exp(a-b)) + b
}

// logSub is log(e^x − e^y) for x ≥ y; ok is false when x < y, a negative
// difference that has no logarithm.
func logSub(x, y float64) (d float64, ok bool) {
	switch {
	case x < y:
		return 0, false
	case math.IsInf(y, -1):
		return x, true
	case x == y:
		return math.Inf(-1), true
	}
	d = math.Log(math.Expm1(x-y)) + y
	if math.IsInf(d, 1) { // e^(x−y) overflows: e^x − e^y = e^x to the last bit
		return x, true
	}
	return d, true
}

// rdpEpsilon converts the RDP curve rdp (at orders) of a mechanism to the ε
// of an (ε, δ) guarantee, minimised over the orders, and returns the best
// order. The conversion is Balle et al. 2020, Theorem 21 (as Opacus'
// get_privacy_spent): ε = rdp − (log δ + log α)/(α−1) + log((α−1)/α); an
// order whose RDP also meets δ through the KL bound δ ≤ √(1 − e^−rdp)
// gives ε = 0 (as dp_accounting's compute_epsilon), and ε is never
// negative. classical selects ε = rdp − log δ/(α−1) (Mironov 2017,
// Proposition 3). Orders whose ε is NaN are skipped; ε is +Inf, with order
// 0, when no order gives a finite ε.
func rdpEpsilon(orders, rdp []float64, delta float64, classical bool) (eps, order float64) {
	eps = math.Inf(1)
	for i, a := range orders {
		r := rdp[i]
		var e float64
		switch {
		case classical:
			e = r - math.Log(delta)/(a-1)
		case delta*delta+math.Expm1(-r) > 0:
			e = 0
		default:
			e = r - (math.Log(delta)+math.Log(a))/(a-1) + math.Log((a-1)/a)
		}
		if e < eps {
			eps, order = e, a
		}
	}
	return max(eps, 0), order
}
