package estimator

import (
	"encoding"

	"github.com/psclip/psclip/setting"
)

// Noisy is an estimator that adds Gaussian noise to the sum of the step's
// clipped per-sample gradients, once per step, however many micro-batches
// the step has: DP-SGD. Package train then divides that sum by a fixed
// expected batch size (train.Config.ExpectedBatch, q·N under Poisson
// sampling, as Opacus does) rather than by the samples the step has, never
// rescales for dropped samples, takes a step with no samples (noise only)
// and has one rank of a data-parallel job call AddNoise before the ranks'
// gradients are summed.
type Noisy interface {
	Estimator
	// AddNoise adds to every element of g an independent draw of
	// N(0, (scale·σ·C)²): the step's noise, for a sum of clipped
	// gradients scaled by scale.
	AddNoise(g [][]float32, scale float64)
}

// NoisyOf returns e's noise: e if it is Noisy, else what e wraps, found
// through a method Unwrap() Estimator (estimators that record what another
// does), and nil if e adds no noise.
func NoisyOf(e Estimator) Noisy {
	for {
		switch x := e.(type) {
		case Noisy:
			return x
		case interface{ Unwrap() Estimator }:
			e = x.Unwrap()
		default:
			return nil
		}
	}
}

// DPSGD is DP-SGD (Abadi et al. 2016): every sample's gradient clipped to
// norm C, the clipped gradients summed and N(0, σ²C²) added to every
// coordinate of the sum, the result divided by the expected batch size:
//
//	d = (Σ_i min(1, C/|g_i|)·g_i + N(0, σ²C²·I)) / (q·N).
//
// Its factors are PS-Clip-SGD's with the constant threshold C; the noise is
// a Gaussian source's. It implements Noisy, and keeps its noise stream's
// position as its state (estimator.State) with a fixed seed.
type DPSGD struct {
	clip  *PSClip
	c     float64 // C
	sigma float64 // σ
	noise *Gaussian
}

// NewDPSGD returns DP-SGD with clipping norm c and noise multiplier sigma,
// both finite and > 0 (a *setting.Error for Clip or NoiseMultiplier, Spec's
// fields, otherwise), its noise from NewGaussian(seed): secure for seed 0.
func NewDPSGD(c, sigma float64, seed uint64) (*DPSGD, error) {
	switch {
	case !positive(c):
		return nil, setting.Errorf("Clip", c, "dp-sgd's clipping norm C, finite and > 0")
	case !positive(sigma):
		return nil, setting.Errorf("NoiseMultiplier", sigma, "dp-sgd's noise multiplier σ, finite and > 0")
	}
	return &DPSGD{clip: NewPSClip(Threshold{alpha: c}), c: c, sigma: sigma, noise: NewGaussian(seed)}, nil
}

func (*DPSGD) Name() string          { return "dp-sgd" }
func (*DPSGD) PerSample() bool       { return true }
func (*DPSGD) Update([]float64)      {}
func (*DPSGD) Scale(float64) float64 { return 1 }

// Private reports whether the noise is from a secure seed.
func (e *DPSGD) Private() bool { return !e.noise.Fixed() }

// Factors are min(1, C/|g_i|), 0 for a non-finite norm.
func (e *DPSGD) Factors(k0 int, norms, c []float64) Stats { return e.clip.Factors(k0, norms, c) }

// AddNoise adds N(0, (scale·σ·C)²) to every element of g.
func (e *DPSGD) AddNoise(g [][]float32, scale float64) {
	e.noise.Add(g, float64(scale*e.sigma)*e.c)
}

// MarshalBinary is the noise source's state.
func (e *DPSGD) MarshalBinary() ([]byte, error) { return e.noise.MarshalBinary() }

// UnmarshalBinary restores the noise source's state.
func (e *DPSGD) UnmarshalBinary(b []byte) error { return e.noise.UnmarshalBinary(b) }

var (
	_ Noisy                      = (*DPSGD)(nil)
	_ encoding.BinaryMarshaler   = (*DPSGD)(nil)
	_ encoding.BinaryUnmarshaler = (*DPSGD)(nil)
)
