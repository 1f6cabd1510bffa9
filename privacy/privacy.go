// Package privacy accounts for the privacy that differentially private
// training (DP-SGD) spends: every step is one run of the Poisson-subsampled
// Gaussian mechanism — each example joins the batch independently with
// probability q, its gradient is clipped to norm C and Gaussian noise of
// standard deviation σC is added to the sum — and the steps compose.
//
// A History records the steps; Epsilon turns it into the ε of an (ε, δ)
// guarantee with one of three accountants:
//
//   - RDP (Mironov, Talwar, Zhang 2019): Rényi DP of the subsampled
//     Gaussian at a list of orders, summed over the steps and converted to
//     (ε, δ) by Balle et al. 2020 (or the classical conversion). What
//     Opacus and TF Privacy report by default; an upper bound, loose by a
//     few percent.
//   - GDP (Bu, Dong, Long, Su 2020): the central limit of the composition,
//     a μ-Gaussian DP guarantee. An approximation, not a bound; close when
//     the steps are many and q·√T is moderate.
//   - PRV (Gopi, Lee, Wutschitz 2021): the privacy-loss distribution of a
//     step, discretised and composed exactly by FFT; ε to within a stated
//     error, the tightest of the three.
//
// NoiseMultiplier inverts the accounting: the σ that spends a target ε.
// Bad input is a *setting.Error naming the field.
package privacy

import (
	"errors"
	"math"

	"github.com/psclip/psclip/setting"
)

// Steps is a run of Count identical steps of the Poisson-subsampled
// Gaussian mechanism.
type Steps struct {
	SampleRate      float64 `json:"sample_rate"`      // q in (0, 1]
	NoiseMultiplier float64 `json:"noise_multiplier"` // σ > 0
	Count           int     `json:"count"`            // ≥ 0
}

// History is the composition of the training's steps, in order;
// consecutive equal Steps merge. It is JSON-serialisable so trainers
// checkpoint it and resume it exactly: the accounting depends only on the
// multiset of (q, σ) steps, and the JSON of a float64 round-trips exactly.
type History []Steps

// Add appends n steps at sample rate q and noise multiplier sigma, merging
// them into the last entry when that has the same q and σ. Add does not
// check its arguments; Epsilon does.
func (h *History) Add(q, sigma float64, n int) {
	if k := len(*h); k > 0 && (*h)[k-1].SampleRate == q && (*h)[k-1].NoiseMultiplier == sigma {
		(*h)[k-1].Count += n
		return
	}
	*h = append(*h, Steps{SampleRate: q, NoiseMultiplier: sigma, Count: n})
}

// Steps returns the total number of steps in h.
func (h History) Steps() int {
	n := 0
	for _, s := range h {
		n += s.Count
	}
	return n
}

// Accountant names an accountant.
type Accountant string

// The accountants.
const (
	RDP Accountant = "rdp" // Rényi DP (Mironov, Talwar, Zhang 2019)
	GDP Accountant = "gdp" // Gaussian DP, central limit (Bu, Dong, Long, Su 2020)
	PRV Accountant = "prv" // privacy random variables (Gopi, Lee, Wutschitz 2021)
)

// Accountants lists the accountants, in the order a user is offered them.
var Accountants = []Accountant{RDP, GDP, PRV}

// Options select the accountant and its settings (zero value: RDP with
// DefaultOrders, Balle et al. 2020 conversion).
type Options struct {
	Accountant Accountant // "" is RDP
	Orders     []float64  // RDP orders, each in (1, MaxOrder], once; nil: DefaultOrders (Opacus' default)
	Classical  bool       // RDP: ε = rdp − log δ/(α−1) instead of Balle et al. 2020

	// PRV's error budget (Opacus' eps_error, delta_error): the reported ε
	// is the accountant's estimate plus EpsilonError, an upper bound on the
	// true ε at δ as long as the discretisation's δ error stays below
	// DeltaError. 0 selects Opacus' defaults, 0.01 and δ/1000.
	EpsilonError float64
	DeltaError   float64
}

// Result of an accounting.
type Result struct {
	Epsilon float64 `json:"epsilon"`
	Order   float64 `json:"order,omitempty"` // RDP's best order
}

// accountant returns o's accountant, RDP for "".
func (o Options) accountant() Accountant {
	if o.Accountant == "" {
		return RDP
	}
	return o.Accountant
}

// check reports the first setting of o that is not valid.
func (o Options) check() error {
	switch a := o.accountant(); a {
	case RDP:
		if o.Orders != nil {
			if err := checkOrders(o.Orders); err != nil {
				return err
			}
		}
	case GDP, PRV:
		if o.Orders != nil {
			return setting.Unread("Orders", o.Orders, "read only by the rdp accountant")
		}
		if o.Classical {
			return setting.Unread("Classical", true, "read only by the rdp accountant")
		}
		if a == GDP {
			break
		}
		if !(o.EpsilonError >= 0 && o.EpsilonError < 1) {
			return setting.Errorf("EpsilonError", o.EpsilonError, "0 (the default, 0.01) or an error in (0, 1)")
		}
		if !(o.DeltaError >= 0) || math.IsInf(o.DeltaError, 1) {
			return setting.Errorf("DeltaError", o.DeltaError, "0 (the default, δ/1000) or an error below δ")
		}
		return nil
	default:
		return setting.Errorf("Accountant", string(a), "one of rdp, gdp, prv")
	}
	if o.EpsilonError != 0 {
		return setting.Unread("EpsilonError", o.EpsilonError, "read only by the prv accountant")
	}
	if o.DeltaError != 0 {
		return setting.Unread("DeltaError", o.DeltaError, "read only by the prv accountant")
	}
	return nil
}

// MaxOrder is the largest RDP order Options.Orders may hold: an integer
// order α costs a sum of α + 1 terms per step size, and the best order of
// any practical accounting lies far below.
const MaxOrder = 1e5

// checkOrders checks an RDP order list: not empty, every order above 1 (the
// RDP of order 1 is a KL divergence the conversions do not use) and at most
// MaxOrder, none twice.
func checkOrders(orders []float64) error {
	if err := setting.Distinct("Orders", orders); err != nil {
		return err
	}
	for _, a := range orders {
		if !(a > 1 && a <= MaxOrder) {
			return setting.Errorf("Orders", a, "orders above 1 and at most 1e5")
		}
	}
	return nil
}

// checkStep reports whether q and σ describe a step: 0 < q ≤ 1 and σ a
// positive finite number whose step float64 can account: one step's RDP
// at order 2, log(1 + q²(e^{1/σ²} − 1)), must be at least the smallest
// normal float64 (σ ≲ 1.5e154·q), or every order's RDP rounds to 0 and ε to 0.
func checkStep(q, sigma float64) error {
	if !(q > 0 && q <= 1) {
		return setting.Errorf("SampleRate", q, "a sample rate in (0, 1]")
	}
	if !(sigma > 0) || math.IsInf(sigma, 1) {
		return setting.Errorf("NoiseMultiplier", sigma, "a positive finite noise multiplier")
	}
	if 2*math.Log(q)+logExpm1(1/(sigma*sigma)) < minLogRDP {
		return setting.Errorf("NoiseMultiplier", sigma, "a noise multiplier float64 accounting represents at sample rate %g (its per-step RDP underflows)", q)
	}
	return nil
}

// minLogRDP is the log of the smallest normal float64, 2⁻¹⁰²².
var minLogRDP = math.Log(0x1p-1022)

// MaxSteps is the most steps a History may hold: 2⁵³, the last integer
// float64 counts exactly (the accountants multiply a step's RDP, or add
// its μ², by the count).
const MaxSteps = 1 << 53

// check reports the first entry of h that is not valid, and a total of
// steps above MaxSteps.
func (h History) check() error {
	total := 0
	for _, s := range h {
		if err := checkStep(s.SampleRate, s.NoiseMultiplier); err != nil {
			return err
		}
		if s.Count < 0 {
			return setting.Errorf("Count", s.Count, "≥ 0 steps")
		}
		if total += s.Count; total > MaxSteps || s.Count > MaxSteps {
			return setting.Errorf("Count", s.Count, "at most 2^53 steps in all, what float64 counts exactly")
		}
	}
	return nil
}

// checkDelta checks that 0 < δ < 1.
func checkDelta(delta float64) error {
	if !(delta > 0 && delta < 1) {
		return setting.Errorf("Delta", delta, "a δ in (0, 1)")
	}
	return nil
}

// Epsilon returns the ε of the whole history at δ. An empty history (or
// one of zero steps) spends nothing: ε = 0.
func Epsilon(h History, delta float64, o Options) (Result, error) {
	if err := setting.First(h.check(), checkDelta(delta), o.check()); err != nil {
		return Result{}, err
	}
	if h.Steps() == 0 {
		return Result{}, nil
	}
	switch o.accountant() {
	case GDP:
		return Result{Epsilon: gdpEpsilon(h, delta)}, nil
	case PRV:
		if _, deltaErr := o.prvErrors(delta); !(deltaErr < delta) {
			return Result{}, setting.Errorf("DeltaError", o.DeltaError, "an error below δ = %g", delta)
		}
		eps, err := prvEpsilon(h, delta, o)
		return Result{Epsilon: eps}, err
	}
	orders := o.Orders
	if orders == nil {
		orders = DefaultOrders
	}
	eps, order := rdpEpsilon(orders, rdpHistory(h, orders), delta, o.Classical)
	return Result{Epsilon: eps, Order: order}, nil
}

// maxSigma is where NoiseMultiplier gives up, as Opacus' MAX_SIGMA.
const maxSigma = 1e6

// epsilonTolerance is how far below the target the ε of NoiseMultiplier's
// σ may be: Opacus' default epsilon_tolerance.
const epsilonTolerance = 0.01

// NoiseMultiplier returns the noise multiplier σ for which steps steps at
// sample rate q spend at most targetEpsilon at δ, found by bisection
// exactly as Opacus' get_noise_multiplier: σ doubles from 20 until ε(σ) ≤
// target, then the interval [0, σ] is halved until ε(σ) lies within 0.01
// below the target (Opacus' epsilon_tolerance, an absolute tolerance in ε).
// The σ returned always spends at most targetEpsilon. A target that would
// need σ above 10⁶ is an error for field "Epsilon".
func NoiseMultiplier(q float64, steps int, targetEpsilon, delta float64, o Options) (float64, error) {
	if err := setting.First(checkStep(q, 1), setting.Positive("Count", steps), checkCount(steps),
		checkTarget(targetEpsilon), checkDelta(delta), o.check()); err != nil {
		return 0, err
	}
	// eps is the ε of σ. A σ that PRV cannot account on a grid of its
	// size (an *setting.Error for "Accountant": its ε is vast) counts as
	// +Inf, too little noise; any other error ends the search.
	eps := func(sigma float64) (float64, error) {
		r, err := Epsilon(History{{SampleRate: q, NoiseMultiplier: sigma, Count: steps}}, delta, o)
		if se := (*setting.Error)(nil); errors.As(err, &se) && se.Field == "Accountant" {
			return math.Inf(1), nil
		}
		return r.Epsilon, err
	}
	lo, hi := 0.0, 10.0
	epsHi := math.Inf(1)
	for epsHi > targetEpsilon {
		hi *= 2
		var err error
		if epsHi, err = eps(hi); err != nil {
			return 0, err
		}
		if hi > maxSigma {
			return 0, setting.Errorf("Epsilon", targetEpsilon, "a budget that σ ≤ 1e6 meets (this one is too small)")
		}
	}
	// The interval halves each time; after 100 halvings it is below the
	// resolution of float64, so the cap only guards an ε(σ) that is not
	// continuous.
	for i := 0; i < 100 && targetEpsilon-epsHi > epsilonTolerance; i++ {
		mid := (lo + hi) / 2
		e, err := eps(mid)
		if err != nil {
			return 0, err
		}
		if e < targetEpsilon {
			hi, epsHi = mid, e
		} else {
			lo = mid
		}
	}
	return hi, nil
}

// checkCount checks that a run of steps is at most MaxSteps long.
func checkCount(steps int) error {
	if steps > MaxSteps {
		return setting.Errorf("Count", steps, "at most 2^53 steps, what float64 counts exactly")
	}
	return nil
}

// checkTarget checks a target ε: positive and finite.
func checkTarget(eps float64) error {
	if !(eps > 0) || math.IsInf(eps, 1) {
		return setting.Errorf("Epsilon", eps, "a positive finite ε")
	}
	return nil
}
