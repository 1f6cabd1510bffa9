package estimator

import (
	"fmt"
	"math"

	"github.com/psclip/psclip/internal/detmath"
	"github.com/psclip/psclip/setting"
)

// Threshold is PS-Clip-SGD's per-sample clipping threshold: sample k of a
// batch (k = 1..n in batch order) is clipped to norm τ_k. Build one with
// Constant (τ_k = γ), Increasing (τ_k = α·k^(1/β)) or HighProbability; the
// zero Threshold is not valid.
type Threshold struct {
	alpha float64
	beta  float64 // 0 for a constant threshold
}

// Constant returns the threshold τ_k = γ for every sample; γ must be a
// positive normal float32 (a *setting.Error for "Gamma" otherwise), as
// Spec's Clip.
func Constant(gamma float64) (Threshold, error) { return checkedThreshold(Threshold{alpha: gamma}) }

// Increasing returns the threshold τ_k = α·k^(1/β) of the paper's estimator
// G(x, α, β): later samples in the batch are clipped less. α and β must be
// positive normal float32 values (a *setting.Error for "Alpha" or "Beta").
func Increasing(alpha, beta float64) (Threshold, error) {
	if err := setting.Positive32("Beta", beta); err != nil {
		return Threshold{}, err // β = 0 would be the constant threshold
	}
	return checkedThreshold(Threshold{alpha: alpha, beta: beta})
}

// checkedThreshold returns t if it is valid, else the zero Threshold and
// the error.
func checkedThreshold(t Threshold) (Threshold, error) {
	if err := t.validate(); err != nil {
		return Threshold{}, err
	}
	return t, nil
}

// HighProbability returns the increasing threshold of the paper's
// high-probability convergence theorem for noise with E|∇f(x,ξ)|^p ≤ σ^p and
// failure probability δ:
//
//	α = σ / (log(1/δ) + 1/4)^(1/p),   β = p.
//
// The theorem holds for p ∈ (1, 2]; other p are refused.
func HighProbability(sigma, p, delta float64) (Threshold, error) {
	switch {
	case setting.Positive32("Sigma", sigma) != nil:
		return Threshold{}, setting.Positive32("Sigma", sigma)
	case !(p > 1 && p <= 2):
		return Threshold{}, setting.Errorf("P", p, "a tail index with 1 < p ≤ 2")
	case !(delta > 0 && delta < 1):
		return Threshold{}, setting.Errorf("Delta", delta, "a failure probability with 0 < δ < 1")
	}
	return Increasing(sigma/detmath.Pow(detmath.Log(1/delta)+0.25, 1/p), p)
}

// Alpha returns α, the threshold of the first sample (γ for a constant
// threshold).
func (t Threshold) Alpha() float64 { return t.alpha }

// Beta returns β, or +Inf for a constant threshold (the limit β → ∞).
func (t Threshold) Beta() float64 {
	if t.beta == 0 {
		return math.Inf(1)
	}
	return t.beta
}

// IsConstant reports whether every sample has the same threshold.
func (t Threshold) IsConstant() bool { return t.beta == 0 }

// Tau returns τ_k, the threshold of the k-th sample, k ≥ 1.
func (t Threshold) Tau(k int) float64 {
	switch t.beta {
	case 0:
		return t.alpha
	case 1:
		return t.alpha * float64(k)
	}
	return t.alpha * detmath.Pow(float64(k), 1/t.beta)
}

func (t Threshold) String() string {
	if t.beta == 0 {
		return fmt.Sprintf("γ=%g", t.alpha)
	}
	return fmt.Sprintf("%g·k^(1/%g)", t.alpha, t.beta)
}

// positive reports whether x is finite and > 0 (false for NaN).
func positive(x float64) bool { return x > 0 && !math.IsInf(x, 1) }
