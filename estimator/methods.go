package estimator

import (
	"fmt"
	"math"
	"sync/atomic"
)

// SGD is plain stochastic gradient descent: the direction is the mean of the
// per-sample gradients.
type SGD struct{}

func (SGD) Name() string                            { return "sgd" }
func (SGD) PerSample() bool                         { return false }
func (SGD) Factors(_ int, norms, c []float64) Stats { return unit(norms, c) }
func (SGD) Update([]float64)                        {}
func (SGD) Scale(float64) float64                   { return 1 }

// ClipSGD clips the batch mean to norm Gamma: the direction is
// min(1, γ/|ḡ|)·ḡ, as torch.nn.utils.clip_grad_norm_ does. NewClipSGD,
// Validate, Direction and package train check γ.
type ClipSGD struct {
	Gamma float64 // the clipping threshold γ, a positive normal float32
}

// NewClipSGD returns Clip-SGD with threshold γ, which must be a positive
// normal float32 (a *setting.Error for "Gamma" otherwise).
func NewClipSGD(gamma float64) (ClipSGD, error) {
	c := ClipSGD{Gamma: gamma}
	if err := c.validate(); err != nil {
		return ClipSGD{}, err
	}
	return c, nil
}

func (ClipSGD) Name() string                            { return "clip-sgd" }
func (ClipSGD) PerSample() bool                         { return false }
func (ClipSGD) Factors(_ int, norms, c []float64) Stats { return unit(norms, c) }
func (ClipSGD) Update([]float64)                        {}

// Scale is min(1, γ/norm).
func (c ClipSGD) Scale(norm float64) float64 {
	if norm > c.Gamma {
		return c.Gamma / norm
	}
	return 1
}

// NSGD is normalized SGD: the direction is ḡ/|ḡ|, a unit vector. A zero
// mean gives the zero direction rather than NaN.
type NSGD struct{}

func (NSGD) Name() string                            { return "nsgd" }
func (NSGD) PerSample() bool                         { return false }
func (NSGD) Factors(_ int, norms, c []float64) Stats { return unit(norms, c) }
func (NSGD) Update([]float64)                        {}

// Scale is 1/norm, and 0 for a zero norm.
func (NSGD) Scale(norm float64) float64 {
	if norm == 0 {
		return 0
	}
	return 1 / norm
}

// PSClip is per-sample clipped SGD: every sample is clipped to its own
// threshold before averaging,
//
//	G = (1/n) Σ_k min(1, τ_k/|g_k|) g_k,
//
// with τ_k from a Threshold. A PSClip is safe for concurrent use.
type PSClip struct {
	t Threshold
	// taus caches τ_1..τ_m, so that a batch calls no Pow and the factors'
	// loop reads every threshold alike. It only grows, and a cached table
	// is never modified, so concurrent readers need no lock.
	taus atomic.Pointer[[]float64]
}

// NewPSClip returns PS-Clip-SGD with threshold t, which must come from
// Constant, Increasing or HighProbability: with the zero Threshold it
// returns an estimator that Validate (and so Direction and package train)
// refuses.
func NewPSClip(t Threshold) *PSClip { return &PSClip{t: t} }

// Threshold returns the estimator's clipping threshold.
func (e *PSClip) Threshold() Threshold { return e.t }

// Name is "ps-clip-sgd" for a constant threshold and "inc-ps-clip-sgd" for
// an increasing one, so that the two kinds are told apart in logs.
func (e *PSClip) Name() string {
	if e.t.IsConstant() {
		return "ps-clip-sgd"
	}
	return "inc-ps-clip-sgd"
}

func (*PSClip) PerSample() bool       { return true }
func (*PSClip) Update([]float64)      {}
func (*PSClip) Scale(float64) float64 { return 1 }

// Factors sets c[i] = min(1, τ_k/norms[i]) with k = k0+i+1; a sample counts
// as clipped when its norm is above τ_k.
func (e *PSClip) Factors(k0 int, norms, c []float64) Stats {
	return e.scaled(k0, norms, c, 1)
}

// weights is Weights in one pass over the norms: the factors come scaled
// by 1/n, the products Weights would form, unless a sample is dropped,
// which takes a second pass with 1/m.
func (e *PSClip) weights(norms, w []float64) Stats {
	st := e.scaled(0, norms, w, 1/float64(len(norms)))
	if m := st.N - st.Dropped; st.Dropped > 0 && m > 0 {
		st = e.scaled(0, norms, w, 1/float64(m))
	}
	return st
}

// scaled sets c[i] to s times the factor Factors sets: s·min(1, τ_k/norms[i])
// with k = k0+i+1, rounded as the product of s and the factor, and 0 for a
// non-finite norm.
func (e *PSClip) scaled(k0 int, norms, c []float64, s float64) Stats {
	n := len(norms)
	checkLen(n, c)
	taus := e.thresholds(k0 + n)[k0:]
	st := Stats{N: n}
	var sum float64
	for i := 0; i < n; i += clipChunk {
		j := min(n, i+clipChunk)
		sum = clip(norms[i:j], taus[i:j], c[i:j], s, sum, &st)
	}
	if m := n - st.Dropped; m > 0 {
		st.MeanNorm = sum / float64(m)
	}
	return st
}

// clipChunk is the most samples clip takes at once.
const clipChunk = 64

// clip sets cs[i] = s·min(1, ts[i]/xs[i]) for the finite norms xs[i] and 0
// for the others, counts them in st, and returns sum plus the finite norms,
// added in order. len(xs) ≤ clipChunk.
//
// Which samples a batch clips is random, and a branch on it is mispredicted
// about once per change from clipped to unclipped and back: so the first
// loop only notes the samples above their thresholds, without a branch, and
// the last divides for those, whose divisions then overlap. The first loop
// does not test every norm for NaN or ±Inf either: the sum is finite only
// if every norm is, and only otherwise does a second loop test each.
func clip(xs, ts, cs []float64, s, sum float64, st *Stats) float64 {
	ts, cs = ts[:len(xs)], cs[:len(xs)]
	var above [clipChunk]uint8
	k, total := 0, sum
	for i, x := range xs {
		total += x
		cs[i] = s
		above[k&(clipChunk-1)] = uint8(i) // k ≤ i
		if x > ts[i] {
			k++
		}
	}
	if total-total != 0 { // a norm is NaN or ±Inf, or the sum overflowed
		k, total = 0, sum
		for i, x := range xs {
			if !(math.Abs(x) <= math.MaxFloat64) {
				st.Dropped++
				cs[i] = 0
				continue
			}
			total += x
			above[k&(clipChunk-1)] = uint8(i)
			if x > ts[i] {
				k++
			}
		}
	}
	for _, i := range above[:k] {
		cs[i] = float64(ts[i]/xs[i]) * s
	}
	st.Clipped += k
	return total
}

// thresholds returns τ_1..τ_n, or more.
func (e *PSClip) thresholds(n int) []float64 {
	if p := e.taus.Load(); p != nil && len(*p) >= n {
		return *p
	}
	taus := make([]float64, n)
	for i := range taus {
		taus[i] = e.t.Tau(i + 1)
	}
	// A racing goroutine may store a table of another length; either is
	// correct, and the next miss rebuilds.
	e.taus.Store(&taus)
	return taus
}

// unit sets the factors of plain averaging, 1 for every sample with a
// finite norm and 0 for the others, and counts the samples.
func unit(norms, c []float64) Stats {
	n := len(norms)
	checkLen(n, c)
	st := Stats{N: n}
	var sum float64
	for i, x := range norms {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			st.Dropped++
			c[i] = 0
			continue
		}
		sum += x
		c[i] = 1
	}
	if m := n - st.Dropped; m > 0 {
		st.MeanNorm = sum / float64(m)
	}
	return st
}

func checkLen(n int, c []float64) {
	if len(c) < n {
		panic(fmt.Sprintf("estimator: %d factors for %d norms", len(c), n))
	}
}
