package estimator

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/psclip/psclip/internal/detmath"
	"github.com/psclip/psclip/privacy"
	"github.com/psclip/psclip/setting"
)

// DPQuantile is DP-SGD whose clipping norm γ follows a target quantile
// of the per-sample gradient norms, privately: the adaptive clipping of
// Andrew et al. 2021 ("Differentially private learning with adaptive
// clipping", Algorithm 1), Quantile's rule with noise. Every step clips
// each sample to γ, adds N(0, σ_eff²γ²) to the sum of clipped gradients,
// and counts the samples γ left unclipped with noise of its own:
//
//	b̃ = 1/2 + (Σ_i (1[|g_i| ≤ γ] − 1/2) + N(0, σ_b²)) / E[B]
//	γ ← γ·exp(−η_C (b̃ − q))
//
// Each sample moves the centred count by at most 1/2 (a non-finite one
// counts as clipped), so the step is one Gaussian mechanism on the pair
// (clipped sum, count) with noise multiplier σ when
//
//	σ_eff = (σ⁻² − (2σ_b)⁻²)^(−1/2),
//
// which needs σ_b > σ/2: the accountant composes the steps at σ
// (privacy.History) exactly as plain DP-SGD's. Andrew et al. take
// σ_b = E[B]/20. The count noise comes from a stream of its own, keyed
// like the gradient noise (privacy.Secret: crypto/rand for seed 0, else the
// seed, not private). A data-parallel job must give every rank the same
// fixed seed, or each rank's count noise (and so its γ) differs.
type DPQuantile struct {
	clip                    *Quantile // γ and the factors
	sigma, sigmaB, sigmaEff float64
	expected                float64 // E[B]
	noise, count            *Gaussian
}

// NewDPQuantile returns the private quantile-adaptive DP-SGD with initial
// clipping norm gamma (a positive normal float32), target fraction of
// unclipped samples q ∈ (0, 1) (0: DefaultTargetQuantile), rate η_C (0:
// DefaultQuantileRate), accounted noise multiplier sigma, count noise
// sigmaB > sigma/2 and expected batch size expected > 0, its noise from
// privacy.NewSecret(seed). Its errors are *setting.Error values naming
// "Gamma", "Q", "Rate", "NoiseMultiplier", "CountNoise" or "ExpectedBatch".
func NewDPQuantile(gamma, q, rate, sigma, sigmaB, expected float64, seed uint64) (*DPQuantile, error) {
	if err := setting.Positive32("Gamma", gamma); err != nil {
		return nil, err
	}
	clip, err := NewQuantile(q, rate, gamma)
	if err != nil {
		return nil, err
	}
	switch {
	case !positive(sigma):
		return nil, setting.Errorf("NoiseMultiplier", sigma, "a positive finite noise multiplier")
	case !positive(sigmaB) || !(2*sigmaB > sigma):
		return nil, setting.Errorf("CountNoise", sigmaB, "a count noise σ_b above σ/2 = %g (the gradient's share of the noise is (σ⁻² − (2σ_b)⁻²)^(−1/2))", sigma/2)
	case !positive(expected):
		return nil, setting.Errorf("ExpectedBatch", expected, "a positive finite expected batch size")
	}
	s := privacy.NewSecret(seed)
	return &DPQuantile{
		clip: clip, sigma: sigma, sigmaB: sigmaB, expected: expected,
		sigmaEff: EffectiveNoise(sigma, sigmaB),
		noise:    newGaussian(s, gaussianTag),
		count:    newGaussian(s, clipCountTag),
	}, nil
}

// EffectiveNoise is the gradient's noise multiplier σ_eff =
// (σ⁻² − (2σ_b)⁻²)^(−1/2) that, with count noise σ_b, makes a step one
// Gaussian mechanism of noise multiplier σ; +Inf unless σ_b > σ/2.
func EffectiveNoise(sigma, sigmaB float64) float64 {
	d := 1/(sigma*sigma) - 1/(4*sigmaB*sigmaB)
	if !(d > 0) {
		return math.Inf(1)
	}
	return 1 / math.Sqrt(d)
}

func (*DPQuantile) Name() string          { return "dp-sgd-quantile" }
func (*DPQuantile) PerSample() bool       { return true }
func (*DPQuantile) Scale(float64) float64 { return 1 }

// Gamma is the clipping norm of the next step.
func (e *DPQuantile) Gamma() float64 { return e.clip.gamma }

// EffectiveNoise is the gradient's noise multiplier σ_eff.
func (e *DPQuantile) EffectiveNoise() float64 { return e.sigmaEff }

// Private reports whether the noise is from a secure seed.
func (e *DPQuantile) Private() bool { return !e.noise.Fixed() }

// Factors are min(1, γ/|g_i|), 0 for a non-finite norm.
func (e *DPQuantile) Factors(k0 int, norms, c []float64) Stats { return e.clip.Factors(k0, norms, c) }

// AddNoise adds N(0, (scale·σ_eff·γ)²) to every element of g.
func (e *DPQuantile) AddNoise(g [][]float32, scale float64) {
	e.noise.Add(g, scale*e.sigmaEff*e.clip.gamma)
}

// Update moves γ by the step's noisy fraction of unclipped samples b̃,
// also for a step without samples (the noise alone).
func (e *DPQuantile) Update(norms []float64) {
	var centred float64
	for _, x := range norms {
		if x >= 0 && x <= e.clip.gamma { // false for NaN and +Inf
			centred += 0.5
		} else {
			centred -= 0.5
		}
	}
	z := e.count.draw()
	b := 0.5 + (centred+e.sigmaB*z)/e.expected
	e.clip.gamma *= detmath.Exp(-e.clip.rate * (b - e.clip.target))
}

func (e *DPQuantile) String() string {
	return fmt.Sprintf("γ→q%g (η_C=%g, σ=%g, σ_b=%g)", e.clip.target, e.clip.rate, e.sigma, e.sigmaB)
}

// validate checks the settings (a zero DPQuantile has none).
func (e *DPQuantile) validate() error {
	if e.clip == nil || e.noise == nil || e.count == nil {
		return setting.Errorf("Gamma", 0, "an initial clipping norm: build a DPQuantile with NewDPQuantile")
	}
	return e.clip.validate()
}

// dpQuantileTag begins a DPQuantile's state.
const dpQuantileTag = "dpq1"

// MarshalBinary returns the state: γ and the two noise streams' states
// (only marks for secure ones, whose keys are never written).
func (e *DPQuantile) MarshalBinary() ([]byte, error) {
	b := append([]byte(nil), dpQuantileTag...)
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(e.clip.gamma))
	for _, g := range []*Gaussian{e.noise, e.count} {
		s, err := g.MarshalBinary()
		if err != nil {
			return nil, err
		}
		b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
		b = append(b, s...)
	}
	return b, nil
}

// UnmarshalBinary restores a state that MarshalBinary returned (fresh
// keys for secure noise).
func (e *DPQuantile) UnmarshalBinary(data []byte) error {
	bad := errors.New("estimator: corrupt dp-sgd-quantile state")
	r := reader{b: data}
	if !r.tag(dpQuantileTag) {
		return errors.New("estimator: not a dp-sgd-quantile state")
	}
	gamma := r.float()
	if r.err != nil || !positive(gamma) {
		return bad
	}
	var states [2][]byte
	for i := range states {
		if len(r.b) < 4 {
			return bad
		}
		n := int(binary.LittleEndian.Uint32(r.b))
		if len(r.b) < 4+n {
			return bad
		}
		states[i], r.b = r.b[4:4+n], r.b[4+n:]
	}
	if len(r.b) != 0 {
		return bad
	}
	noise, count := *e.noise, *e.count
	if err := noise.UnmarshalBinary(states[0]); err != nil {
		return err
	}
	if err := count.UnmarshalBinary(states[1]); err != nil {
		return err
	}
	e.clip.gamma, *e.noise, *e.count = gamma, noise, count
	return nil
}

var _ Noisy = (*DPQuantile)(nil)
