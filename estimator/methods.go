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
// min(1, γ/|ḡ|)·ḡ, as torch.nn.utils.clip_grad_norm_ does. Build it with
// NewClipSGD to have γ checked.
type ClipSGD struct {
	Gamma float64 // the clipping threshold γ > 0
}

// NewClipSGD returns Clip-SGD with threshold γ, which must be finite and > 0.
func NewClipSGD(gamma float64) (ClipSGD, error) {
	if !positive(gamma) {
		return ClipSGD{}, fmt.Errorf("estimator: clip-sgd threshold γ = %v, want a finite γ > 0", gamma)
	}
	return ClipSGD{Gamma: gamma}, nil
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
	// taus caches τ_1..τ_m for an increasing threshold, so that a batch
	// calls no Pow. It only grows, and a cached table is never
	// modified, so concurrent readers need no lock.
	taus atomic.Pointer[[]float64]
}

// NewPSClip returns PS-Clip-SGD with threshold t, which must come from
// Constant, Increasing or HighProbability: the zero Threshold panics.
func NewPSClip(t Threshold) *PSClip {
	if t.alpha <= 0 {
		panic("estimator: NewPSClip with an invalid Threshold; build it with Constant, Increasing or HighProbability")
	}
	return &PSClip{t: t}
}

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
// as clipped when its factor is below 1.
func (e *PSClip) Factors(k0 int, norms, c []float64) Stats {
	st := unit(norms, c)
	taus := e.thresholds(k0 + len(norms))
	for i, x := range norms {
		tau := e.t.alpha
		if taus != nil {
			tau = taus[k0+i]
		}
		// x > tau is false for NaN; +Inf norms already have factor 0.
		if x > tau && c[i] != 0 {
			c[i] = tau / x
			st.Clipped++
		}
	}
	return st
}

// thresholds returns τ_1..τ_n, or nil for a constant threshold.
func (e *PSClip) thresholds(n int) []float64 {
	if e.t.beta == 0 {
		return nil
	}
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
