package estimator

import (
	"fmt"
	"math"

	"github.com/psclip/psclip/internal/detmath"
)

// Threshold is PS-Clip-SGD's per-sample clipping threshold: sample k of a
// batch (k = 1..n in batch order) is clipped to norm τ_k. Build one with
// Constant (τ_k = γ), Increasing (τ_k = α·k^(1/β)) or HighProbability; the
// zero Threshold is not valid.
type Threshold struct {
	alpha float64
	beta  float64 // 0 for a constant threshold
}

// Constant returns the threshold τ_k = γ for every sample.
func Constant(gamma float64) (Threshold, error) {
	if !positive(gamma) {
		return Threshold{}, fmt.Errorf("estimator: clipping threshold γ = %v, want a finite γ > 0", gamma)
	}
	return Threshold{alpha: gamma}, nil
}

// Increasing returns the threshold τ_k = α·k^(1/β) of the paper's estimator
// G(x, α, β): later samples in the batch are clipped less.
func Increasing(alpha, beta float64) (Threshold, error) {
	if !positive(alpha) {
		return Threshold{}, fmt.Errorf("estimator: threshold scale α = %v, want a finite α > 0", alpha)
	}
	if !positive(beta) {
		return Threshold{}, fmt.Errorf("estimator: threshold exponent β = %v, want a finite β > 0", beta)
	}
	return Threshold{alpha: alpha, beta: beta}, nil
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
	case !positive(sigma):
		return Threshold{}, fmt.Errorf("estimator: noise bound σ = %v, want a finite σ > 0", sigma)
	case !(p > 1 && p <= 2):
		return Threshold{}, fmt.Errorf("estimator: tail index p = %v, want 1 < p ≤ 2", p)
	case !(delta > 0 && delta < 1):
		return Threshold{}, fmt.Errorf("estimator: failure probability δ = %v, want 0 < δ < 1", delta)
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
