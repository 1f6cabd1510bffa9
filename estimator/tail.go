package estimator

import (
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/psclip/psclip/internal/detmath"
)

// Defaults of the online tail estimates.
const (
	// DefaultWindow is the number of recent per-sample norms a Tail keeps:
	// 64 batches of 64. An estimate over it costs O(window): PSAuto
	// took 0.12–0.37 ms per batch of 64 against 0.5–1.4 µs for a fixed
	// PS-Clip threshold (BenchmarkAdaptiveWeights, two runs on a shared
	// 2-core machine) — small next to a network's step, large next to the
	// quadratic's.
	DefaultWindow = 4096
	// MinTailSamples is how many norms a Tail needs before it estimates
	// anything. With fewer, the Hill estimate's relative standard deviation
	// 1/√(k−2) exceeds 27% (k = 16); adaptive estimators fall back to a
	// constant threshold until then.
	MinTailSamples = 256
	// MinBeta is the smallest β an automatic threshold uses. A tail index
	// p ≤ 1 means an infinite mean, for which the paper's guarantees
	// (error ∝ n^(−2(p−1)/p)) say nothing; 1.05 keeps β inside (1, 2] with
	// the exponent 1/β of k finite and the rate non-degenerate.
	MinBeta = 1.05
)

// Tail estimates the tail of the per-sample gradient norms online, over a
// sliding window of the most recent ones: the tail index p by Hill's
// estimator and the moment bound σ = (E|g|^q)^(1/q). It keeps the logarithms
// of the norms in a ring buffer of fixed size, so adding a batch costs O(n)
// and an estimate O(window), with no allocation after the first estimate.
//
// Hill's estimator uses the k+1 largest of the N norms in the window,
// X_(1) ≥ … ≥ X_(k+1):
//
//	p̂ = (k−1) / Σ_{i≤k} log(X_(i)/X_(k+1)),   k = ⌈√N⌉.
//
// The factor k−1 (rather than Hill's k) makes p̂ unbiased when the norms
// above X_(k+1) are exactly Pareto: the sum is then Gamma(k, p) distributed,
// so E p̂ = p and sd p̂ = p/√(k−2) (about 12.5% at N = 4096, k = 64). The
// choice k = ⌈√N⌉ trades that variance against the bias of a tail that is
// only Pareto asymptotically (a sum of noise and a drifting mean gradient,
// here): k/N → 0 keeps the order statistics in the tail as the window grows,
// and √N is the classic choice for second-order parameter ρ = −1/2, safe
// when ρ is unknown. The window's order statistic X_(k+1) is found by
// selection (expected O(N)), not by sorting.
//
// A Tail is not safe for concurrent use.
type Tail struct {
	logs    []float64 // ring buffer of log-norms; len = the number held
	next    int       // index in logs of the next write once full
	size    int       // capacity of the window
	scratch []float64
}

// NewTail returns an empty Tail keeping the last window norms; window must
// be at least MinTailSamples.
func NewTail(window int) (*Tail, error) {
	if err := checkWindow(window); err != nil {
		return nil, err
	}
	return &Tail{size: window, logs: make([]float64, 0, window)}, nil
}

// Window returns the capacity of the window.
func (t *Tail) Window() int { return t.size }

// Len returns the number of norms in the window.
func (t *Tail) Len() int { return len(t.logs) }

// Add appends the finite norms among norms to the window, dropping the
// oldest ones once it is full. Non-finite norms are left out: they are what
// the estimators drop, not part of the tail. A zero norm is kept (its
// logarithm is −Inf).
func (t *Tail) Add(norms []float64) {
	for _, x := range norms {
		if !(x >= 0) || math.IsInf(x, 1) {
			continue
		}
		l := detmath.Log(x)
		if len(t.logs) < t.size {
			t.logs = append(t.logs, l)
			continue
		}
		t.logs[t.next] = l
		if t.next++; t.next == t.size {
			t.next = 0
		}
	}
}

// Reset empties the window.
func (t *Tail) Reset() { t.logs, t.next = t.logs[:0], 0 }

// HillK returns the number k of upper order statistics Hill's estimator uses
// on a window of n norms: ⌈√n⌉.
func HillK(n int) int {
	k := int(math.Sqrt(float64(n)))
	if k*k < n {
		k++
	}
	return k
}

// Hill returns Hill's estimate p̂ of the tail index from the window, and
// false when there is none: fewer than MinTailSamples norms, or order
// statistics X_(k+1) = 0 or all equal to it.
func (t *Tail) Hill() (float64, bool) {
	n := len(t.logs)
	if n < MinTailSamples {
		return 0, false
	}
	k := HillK(n)
	s := t.scratchCopy()
	// s[n-k-1] is X_(k+1); the k above it are the top ones.
	selectNth(s, n-k-1)
	base := s[n-k-1]
	if math.IsInf(base, -1) {
		return 0, false
	}
	var sum float64
	for _, l := range s[n-k:] {
		sum += l - base
	}
	if sum == 0 {
		return 0, false
	}
	return float64(k-1) / sum, true
}

// Moment returns (mean over the window of X^q)^(1/q), the empirical q-th
// moment bound σ̂ of the norms X, and 0 for an empty window; q must be > 0.
// It is computed relative to the largest norm, so that X^q cannot overflow.
func (t *Tail) Moment(q float64) float64 {
	if !(q > 0) {
		panic(fmt.Sprintf("estimator: moment of order %v", q))
	}
	if len(t.logs) == 0 {
		return 0
	}
	top := slices.Max(t.logs)
	if math.IsInf(top, -1) {
		return 0
	}
	var sum float64
	for _, l := range t.logs {
		sum += detmath.Exp(q * (l - top))
	}
	return detmath.Exp(top + detmath.Log(sum/float64(len(t.logs)))/q)
}

// Median returns the median of the norms in the window (the upper one of
// the two middle norms for an even count), or 0 when it is empty.
func (t *Tail) Median() float64 {
	n := len(t.logs)
	if n == 0 {
		return 0
	}
	s := t.scratchCopy()
	selectNth(s, n/2)
	return detmath.Exp(s[n/2])
}

// TailEstimate is the tail of the norms as an automatic PS-Clip threshold
// sees it.
type TailEstimate struct {
	P     float64 `json:"p_hat"`     // Hill's estimate p̂ of the tail index, not clamped
	Beta  float64 `json:"beta"`      // p̂ clamped to [MinBeta, 2]
	Sigma float64 `json:"sigma_hat"` // σ̂, the empirical Beta-th moment bound
	N     int     `json:"window"`    // norms in the window
	K     int     `json:"k"`         // order statistics Hill's estimator used
}

// Estimate returns p̂, β = p̂ clamped to [MinBeta, 2], and σ̂ = Moment(β),
// or false when Hill returns false.
func (t *Tail) Estimate() (TailEstimate, bool) { return t.estimate(0) }

// estimate is Estimate with β fixed to beta unless beta is 0.
func (t *Tail) estimate(beta float64) (TailEstimate, bool) {
	p, ok := t.Hill()
	if !ok {
		return TailEstimate{}, false
	}
	if beta == 0 {
		beta = min(max(p, MinBeta), 2)
	}
	return TailEstimate{P: p, Beta: beta, Sigma: t.Moment(beta), N: len(t.logs), K: HillK(len(t.logs))}, true
}

func (t *Tail) scratchCopy() []float64 {
	t.scratch = append(t.scratch[:0], t.logs...)
	return t.scratch
}

// selectNth reorders s so that s[n] is the value it would have if s were
// sorted, with s[:n] ≤ s[n] ≤ s[n+1:]: Hoare's quickselect with
// median-of-three pivots, expected O(len(s)). A range that fails to shrink
// fast enough is sorted instead, so the worst case is O(len(s) log len(s)).
func selectNth(s []float64, n int) {
	lo, hi := 0, len(s)-1
	budget := 2 * bits.Len(uint(len(s)))
	for hi > lo {
		if budget == 0 {
			slices.Sort(s[lo : hi+1])
			return
		}
		budget--
		mid := lo + (hi-lo)/2
		// Order s[lo], s[mid], s[hi]; the median becomes the pivot.
		if s[mid] < s[lo] {
			s[mid], s[lo] = s[lo], s[mid]
		}
		if s[hi] < s[lo] {
			s[hi], s[lo] = s[lo], s[hi]
		}
		if s[hi] < s[mid] {
			s[hi], s[mid] = s[mid], s[hi]
		}
		pivot := s[mid]
		i, j := lo, hi
		for i <= j {
			for s[i] < pivot {
				i++
			}
			for s[j] > pivot {
				j--
			}
			if i <= j {
				s[i], s[j] = s[j], s[i]
				i++
				j--
			}
		}
		// Now s[lo:j+1] ≤ pivot ≤ s[i:hi+1] and s[j+1:i] == pivot.
		switch {
		case n <= j:
			hi = j
		case n >= i:
			lo = i
		default:
			return
		}
	}
}
