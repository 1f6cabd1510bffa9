package privacy

import (
	"math"
	"sort"

	"github.com/psclip/psclip/setting"
)

// The PRV accountant of Gopi, Lee, Wutschitz 2021 ("Numerical composition
// of differential privacy"), step for step as Opacus' PRVAccountant (itself
// from Microsoft's prv_accountant): the privacy loss of one step is a
// random variable (PRV) whose distribution function is known in closed
// form; it is truncated to a domain [−L, L], discretised on a grid of mesh
// Δ, shifted so its mean is the continuous one, composed Count times by
// FFT and the entries by convolution, and ε read off the composed
// distribution. Domain and mesh are chosen from EpsilonError and
// DeltaError so that the true ε lies below the reported one.

// Defaults of the PRV accountant's error budget, as Opacus'
// PRVAccountant.get_epsilon.
const (
	defaultEpsilonError = 0.01 // eps_error
	deltaErrorFraction  = 1e3  // delta_error = δ / 1000
)

// maxPRVGrid bounds the PRV grid (points; its transforms take some 40
// bytes per point of the grid's power-of-two length, about 0.7 GB here):
// the grid grows as √T·L/ε_error, and beyond this a history is better
// accounted by RDP. Opacus' heaviest published test, σ = 1.5, q = 0.05,
// T = 50000, needs 1.4·10⁷ points.
const maxPRVGrid = 1 << 24

// roundingFloor is the δ that rounding may shift per grid point: the FFT
// leaves every point's mass with an absolute error of order the float64
// epsilon 2^−52, and δ sums up to all of them. Opacus checks δ − δ_error
// against size·finfo(longdouble).eps (2^−63), although its arithmetic is
// float64 too; this floor is the float64 one.
const roundingFloor = 0x1p-52

// prvErrors returns the ε and δ error budget of o at δ.
func (o Options) prvErrors(delta float64) (epsErr, deltaErr float64) {
	epsErr, deltaErr = o.EpsilonError, o.DeltaError
	if epsErr == 0 {
		epsErr = defaultEpsilonError
	}
	if deltaErr == 0 {
		deltaErr = delta / deltaErrorFraction
	}
	return epsErr, deltaErr
}

// prvEpsilon is the PRV accountant's ε for h at δ: the upper end of its
// interval, ε̂ + EpsilonError, as Opacus' get_epsilon returns, never
// negative. A grid too large or a δ too small for float64 to resolve is an
// error.
func prvEpsilon(h History, delta float64, o Options) (float64, error) {
	epsErr, deltaErr := o.prvErrors(delta)
	var parts History
	for _, s := range h {
		if s.Count > 0 {
			parts = append(parts, s)
		}
	}
	total := parts.Steps()
	l := prvDomainSize(parts, epsErr, deltaErr)
	mesh := epsErr / math.Sqrt(float64(total)*math.Log(12/deltaErr)/2)
	d, err := alignedDomain(-l, l, mesh)
	if err != nil {
		return 0, err
	}
	if roundingFloor*float64(d.size) > delta-deltaErr {
		return 0, setting.Errorf("Delta", delta, "a δ the prv accountant resolves on its grid of %d points (above %.3g)", d.size, roundingFloor*float64(d.size)+deltaErr)
	}
	composed := make([]discretePRV, len(parts))
	for i, s := range parts {
		dp, err := discretize(s.SampleRate, s.NoiseMultiplier, d)
		if err != nil {
			return 0, err
		}
		composed[i] = dp.selfCompose(s.Count)
	}
	eps := composeTree(composed).epsilon(delta-deltaErr) + epsErr
	return max(eps, 0), nil
}

// prvDomainSize is the half-width L of the PRV domain: the RDP ε of the
// whole history at δ_error/4 and of every single step at δ_error/(8T),
// whichever is largest, at least ε_error, plus 3 (Opacus'
// compute_safe_domain_size, after Gopi et al. Remark 5.6; RDP with Opacus'
// default orders).
func prvDomainSize(h History, epsErr, deltaErr float64) float64 {
	lmax, _ := rdpEpsilon(DefaultOrders, rdpHistory(h, DefaultOrders), deltaErr/4, false)
	total := float64(h.Steps())
	for _, s := range h {
		one := History{{s.SampleRate, s.NoiseMultiplier, 1}}
		e, _ := rdpEpsilon(DefaultOrders, rdpHistory(one, DefaultOrders), deltaErr/(8*total), false)
		lmax = max(lmax, e)
	}
	return max(lmax, epsErr) + 3
}

// domain is an even number of equally spaced grid points from tMin to tMax,
// moved right by shifts in all (Opacus' prv Domain).
type domain struct {
	tMin, tMax float64
	size       int
	shifts     float64
}

// alignedDomain is the grid of mesh dt from the multiple of dt at or below
// tMin to the one at or above tMax, one point longer if that makes the
// count even (Opacus' Domain.create_aligned).
func alignedDomain(tMin, tMax, dt float64) (domain, error) {
	tMin = math.Floor(tMin/dt) * dt
	tMax = math.Ceil(tMax/dt) * dt
	n := math.RoundToEven((tMax-tMin)/dt) + 1
	if !(n <= maxPRVGrid) {
		return domain{}, setting.Errorf("Accountant", string(PRV), "rdp or gdp here: prv would need a grid of %.3g points, above its limit of %d", n, maxPRVGrid)
	}
	size := int(n)
	if size%2 == 1 {
		size++
		tMax += dt
	}
	return domain{tMin: tMin, tMax: tMax, size: size}, nil
}

// dt is the grid's mesh.
func (d domain) dt() float64 { return (d.tMax - d.tMin) / float64(d.size-1) }

// ts are the grid points, as numpy.linspace(tMin, tMax, size) computes
// them: tMin + i·step, the last exactly tMax.
func (d domain) ts() []float64 {
	t := make([]float64, d.size)
	step := (d.tMax - d.tMin) / float64(d.size-1)
	for i := range t {
		t[i] = float64(i)*step + d.tMin
	}
	t[d.size-1] = d.tMax
	return t
}

// shiftRight moves the grid right by s.
func (d domain) shiftRight(s float64) domain {
	return domain{tMin: d.tMin + s, tMax: d.tMax + s, size: d.size, shifts: d.shifts + s}
}

// discretePRV is a distribution on a domain's grid.
type discretePRV struct {
	pmf []float64
	d   domain
}

// subsampledGaussian is the privacy loss of one step of the
// Poisson-subsampled Gaussian (remove relation): with x drawn from
// P = (1−q)·N(0, σ²) + q·N(1, σ²), the loss is
// L(x) = log(1 − q + q·e^{(2x−1)/(2σ²)}), increasing in x from log(1 − q).
type subsampledGaussian struct{ q, sigma float64 }

// cdf is P(L ≤ t) (Gopi et al. Proposition B4, Opacus'
// PoissonSubsampledGaussianPRV.cdf): with z = log((e^t + q − 1)/q),
// 1 − q·erfc((2zσ² − 1)/(2√2σ))/2 − (1−q)·erfc((2zσ² + 1)/(2√2σ))/2, and 0
// at or below log(1 − q).
func (g subsampledGaussian) cdf(t float64) float64 {
	q, s := g.q, g.sigma
	if !(t > math.Log1p(-q)) {
		return 0
	}
	z := math.Log((math.Expm1(t) + q) / q)
	return -q*math.Erfc((2*z*s*s-1)/(2*math.Sqrt2*s))/2 - (1-q)*math.Erfc((2*z*s*s+1)/(2*math.Sqrt2*s))/2 + 1
}

// x is the point where the loss is t > log(1 − q): L(x(t)) = t.
func (g subsampledGaussian) x(t float64) float64 {
	return g.sigma*g.sigma*math.Log((math.Expm1(t)+g.q)/g.q) + 0.5
}

// truncatedMean is the mean of the loss conditioned on tMin ≤ L < tMax:
// ∫ L(x)·p(x) dx over the x where the loss lies there, divided by that
// mass. It integrates in x, where p is a mixture of two Gaussians of
// width σ and L is smooth (its bend, near x = ½ + σ² log((1−q)/q), has
// width σ²): composite 8-point Gauss–Legendre on panels of a sixteenth of
// min(σ, σ²) across ±40σ of the mass, exact to rounding. Opacus integrates
// the distribution function with scipy's quad instead; the two agree to
// its tolerance.
func (g subsampledGaussian) truncatedMean(tMin, tMax float64) float64 {
	q, s := g.q, g.sigma
	lo, hi := -40*s, 1+40*s
	if tMin > math.Log1p(-q) {
		lo = max(lo, g.x(tMin))
	}
	hi = min(hi, g.x(tMax))
	logQ, log1Q := math.Log(q), math.Log1p(-q)
	norm := 1 / (s * math.Sqrt(2*math.Pi))
	f := func(x float64) float64 {
		loss := logAdd(log1Q, logQ+(2*x-1)/(2*s*s))
		p := (1-q)*math.Exp(-x*x/(2*s*s)) + q*math.Exp(-(x-1)*(x-1)/(2*s*s))
		return loss * p * norm
	}
	panel := min(s, s*s) / 16
	n := max(1, int(math.Ceil((hi-lo)/panel)))
	w := (hi - lo) / float64(n)
	var sum float64
	for i := range n {
		a := lo + float64(i)*w
		for k, node := range gaussLegendre8.nodes {
			sum += gaussLegendre8.weights[k] * f(a+w*(node+1)/2)
		}
	}
	sum *= w / 2
	return sum / (g.cdf(tMax) - g.cdf(tMin))
}

// gaussLegendre8 is the 8-point Gauss–Legendre rule on [−1, 1].
var gaussLegendre8 = struct{ nodes, weights [8]float64 }{
	nodes: [8]float64{-0.9602898564975363, -0.7966664774136267, -0.5255324099163290, -0.1834346424956498,
		0.1834346424956498, 0.5255324099163290, 0.7966664774136267, 0.9602898564975363},
	weights: [8]float64{0.1012285362903763, 0.2223810344533745, 0.3137066458778873, 0.3626837833783620,
		0.3626837833783620, 0.3137066458778873, 0.2223810344533745, 0.1012285362903763},
}

// discretize puts the loss of one step at (q, σ), truncated to d, on d's
// grid: point t gets the mass of [t − Δ/2, t + Δ/2), and the grid moves
// right by the difference of the continuous and the discrete means, so the
// two agree (Opacus' discretize). A shift of half a mesh or more is an
// error: the grid is too coarse for the loss.
func discretize(q, sigma float64, d domain) (discretePRV, error) {
	g := subsampledGaussian{q, sigma}
	lo, hi := g.cdf(d.tMin), g.cdf(d.tMax)
	mass := hi - lo
	cdf := func(t float64) float64 { // truncated to [tMin, tMax)
		switch {
		case t < d.tMin:
			return 0
		case t < d.tMax:
			return (g.cdf(t) - lo) / mass
		}
		return 1
	}
	ts, dt := d.ts(), d.dt()
	pmf := make([]float64, d.size)
	var meanD float64
	left := cdf(ts[0] - dt/2)
	for i, t := range ts {
		right := cdf(t + dt/2)
		pmf[i] = right - left
		meanD += t * pmf[i]
		left = right
	}
	shift := g.truncatedMean(d.tMin, d.tMax) - meanD
	if math.Abs(shift) >= dt/2 {
		return discretePRV{}, setting.Errorf("Accountant", string(PRV),
			"an accountant whose grid resolves this step (q = %g, σ = %g: its discrete mean is %.3g meshes off)", q, sigma, shift/dt)
	}
	return discretePRV{pmf: pmf, d: d.shiftRight(shift)}, nil
}

// selfCompose is the distribution of the sum of n independent copies, by
// the n-th power of the real FFT: a circular convolution, rolled back into
// place, with the domain moved by n − 1 shifts (Opacus' _compose_fourier).
// Opacus convolves circularly on the grid's own length N; here the grid is
// padded with zeros to the next power of two N' ≥ N first. Either way the
// mass that wraps around is what the sum has beyond the window around its
// mean, below the δ error; with N' ≥ N it is less. On the window, point j
// is the sum of copies whose grid indices add up to j + (n−1)·K, where
// t = 0 is grid point K = N/2 − 1 (the domain is symmetric).
func (p discretePRV) selfCompose(n int) discretePRV {
	size := len(p.pmf)
	m := 4
	for m < size {
		m <<= 1
	}
	buf := make([]float64, m)
	copy(buf, p.pmf)
	plan := newFFTPlan(m)
	x := make([]complex128, m/2+1)
	plan.rfft(buf, x)
	for k := range x {
		x[k] = powInt(x[k], n)
	}
	plan.irfft(x, buf)
	k := size/2 - 1
	off := int((int64(n-1) * int64(k)) % int64(m))
	out := make([]float64, size)
	for j := range out {
		out[j] = buf[(j+off)%m]
	}
	return discretePRV{pmf: out, d: p.d.shiftRight(p.d.shifts * float64(n-1))}
}

// powInt is z^n by repeated squaring.
func powInt(z complex128, n int) complex128 {
	r := complex(1, 0)
	for ; n > 0; n >>= 1 {
		if n&1 == 1 {
			r *= z
		}
		z *= z
	}
	return r
}

// composeTree convolves the distributions pairwise until one is left
// (Opacus' _compose_convolution_tree): an odd one out (the last) goes
// first into the next round.
func composeTree(ps []discretePRV) discretePRV {
	for len(ps) > 1 {
		var next []discretePRV
		if len(ps)%2 == 1 {
			next = append(next, ps[len(ps)-1])
			ps = ps[:len(ps)-1]
		}
		for i := 0; i+1 < len(ps); i += 2 {
			next = append(next, convolveSame(ps[i], ps[i+1]))
		}
		ps = next
	}
	return ps[0]
}

// convolveSame is the distribution of the sum of a and b (same grid
// length n): the full linear convolution, by zero-padded real FFTs, cut
// to its central n points as scipy.signal.convolve(mode="same") does, on
// a's domain moved by b's shifts.
func convolveSame(a, b discretePRV) discretePRV {
	n := len(a.pmf)
	m := 4
	for m < 2*n-1 {
		m <<= 1
	}
	buf := make([]float64, m)
	copy(buf, a.pmf)
	plan := newFFTPlan(m)
	fa, fb := make([]complex128, m/2+1), make([]complex128, m/2+1)
	plan.rfft(buf, fa)
	clear(buf)
	copy(buf, b.pmf)
	plan.rfft(buf, fb)
	for k := range fa {
		fa[k] *= fb[k]
	}
	full := buf
	plan.irfft(fa, full)
	start := (2*n - 1 - n) / 2
	return discretePRV{pmf: append([]float64(nil), full[start:start+n]...), d: a.d.shiftRight(b.d.shifts)}
}

// epsilon is the smallest ε at which the distribution's δ(ε) =
// Σ_{t ≥ ε} p_t·(1 − e^{ε−t}) meets delta (Opacus' DiscretePRV.compute_epsilon,
// find_epsilon): the first grid point i with δ(t_i) ≤ delta, where δ is
// then solved exactly, ε = log((D1_i − δ)/D2_i) with D1_i = Σ_{j≥i} p_j and
// D2_i = Σ_{j≥i} p_j e^{−t_j}. +Inf when no grid point meets delta.
func (p discretePRV) epsilon(delta float64) float64 {
	t := p.d.ts()
	n := len(t)
	d1, d2 := make([]float64, n), make([]float64, n)
	var s1, s2 float64
	for i := n - 1; i >= 0; i-- {
		s1 += p.pmf[i]
		s2 += p.pmf[i] * math.Exp(-t[i])
		d1[i], d2[i] = s1, s2
	}
	ndelta := func(i int) float64 { return math.Exp(t[i])*d2[i] - d1[i] }
	// numpy.searchsorted(ndelta, −delta, side="left"), a binary search.
	i := sort.Search(n, func(i int) bool { return !(ndelta(i) < -delta) })
	if i >= n {
		return math.Inf(1)
	}
	return math.Log((d1[i] - delta) / d2[i])
}
