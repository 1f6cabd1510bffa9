package estimator

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/psclip/psclip/internal/detmath"
)

// Defaults of the adaptive estimators' parameters (Params fields left 0).
const (
	DefaultTargetQuantile = 0.5  // Andrew et al.'s target fraction of unclipped samples
	DefaultQuantileRate   = 0.2  // Andrew et al.'s geometric learning rate η_C
	DefaultAutoClipR      = 0.01 // Bu et al.'s stability constant r of AUTO-S
	DefaultCountNoise     = 0.05 // Andrew et al.'s count noise σ_b, a share of the expected batch (E[B]/20)
)

// PSAuto is PS-Clip-SGD with a threshold τ_k = α·k^(1/β) estimated while
// training: α = σ̂ and β = p̂ clamped to [MinBeta, 2], the paper's optimal
// choice α = σ, β = p with the unknown σ and p replaced by Tail estimates
// over the recent per-sample gradient norms. Either may be fixed instead.
//
// The threshold of a batch is estimated from the norms of earlier batches
// only, so that it is independent of the samples it clips, as the paper's
// analysis assumes of α and β. Until the window holds MinTailSamples norms
// (and while Hill's estimator has no answer, e.g. for equal norms), the
// threshold is constant: the fixed α if there is one, else the median of
// the norms seen so far including the current batch's, which clips about
// half of them, as Andrew et al.'s adaptive clipping starts.
//
// PSAuto is deterministic: its weights depend only on the sequence of
// batches it was given. It is not safe for concurrent use; its state
// (window and estimate) is saved and restored by MarshalBinary and
// UnmarshalBinary for checkpoints.
type PSAuto struct {
	tail         *Tail
	alpha, beta  float64      // fixed values, 0 when estimated
	est          TailEstimate // the estimate for the next batch
	ready        bool         // est is valid
	logk, batchS []float64    // log k for k = 1..n; scratch for the warm-up median
}

// NewPSAuto returns PS-Clip-SGD with automatic α and β over a window of the
// last window norms (0: DefaultWindow, else at least MinTailSamples). A
// positive alpha or beta (a normal float32) fixes that parameter; 0
// estimates it. Its errors are *setting.Error values.
func NewPSAuto(alpha, beta float64, window int) (*PSAuto, error) {
	if window == 0 {
		window = DefaultWindow
	}
	t, err := NewTail(window)
	if err != nil {
		return nil, err
	}
	e := &PSAuto{tail: t, alpha: alpha, beta: beta}
	if err := e.validate(); err != nil {
		return nil, err
	}
	return e, nil
}

func (*PSAuto) Name() string          { return "ps-clip-auto" }
func (*PSAuto) PerSample() bool       { return true }
func (*PSAuto) Scale(float64) float64 { return 1 }

// Estimate returns the tail estimate the next batch's threshold will use,
// and false while the threshold is the warm-up constant. With a fixed β,
// the estimate's Beta is that β and Sigma the moment of that order.
func (e *PSAuto) Estimate() (TailEstimate, bool) { return e.est, e.ready }

// Threshold returns the threshold the next batch will be clipped with, and
// false during the warm-up without a fixed α, when it is the median of the
// next batch's norms together with the window's and so not yet known.
func (e *PSAuto) Threshold() (Threshold, bool) {
	if alpha, beta, ok := e.params(); ok {
		return Threshold{alpha: alpha, beta: beta}, true
	}
	if e.alpha != 0 {
		return Threshold{alpha: e.alpha}, true
	}
	return Threshold{}, false
}

// params returns the current α and β, false during the warm-up.
func (e *PSAuto) params() (alpha, beta float64, ok bool) {
	if !e.ready {
		return 0, 0, false
	}
	alpha = e.alpha
	if alpha == 0 {
		alpha = e.est.Sigma
	}
	return alpha, e.est.Beta, alpha > 0
}

// Factors clips sample k = k0+i+1 to τ_k as PSClip does. During the
// warm-up without a fixed α the threshold is the median of the window's
// norms and those of this part of the step, so a step given in parts is
// clipped as one batch only once the warm-up is over.
func (e *PSAuto) Factors(k0 int, norms, c []float64) Stats {
	st := unit(norms, c)
	if alpha, beta, ok := e.params(); ok {
		e.growLogK(k0 + len(norms))
		for i, x := range norms {
			if tau := alpha * detmath.Exp(e.logk[k0+i]/beta); x > tau && c[i] != 0 {
				c[i] = tau / x
				st.Clipped++
			}
		}
	} else if gamma := e.warmUpThreshold(norms); gamma > 0 {
		for i, x := range norms {
			if x > gamma && c[i] != 0 {
				c[i] = gamma / x
				st.Clipped++
			}
		}
	}
	return st
}

// Update adds the step's norms to the window and estimates the next step's
// threshold.
func (e *PSAuto) Update(norms []float64) {
	e.tail.Add(norms)
	e.est, e.ready = e.tail.estimate(e.beta)
}

// warmUpThreshold is the fixed α, or else the median of the window's norms
// and the finite ones of the batch.
func (e *PSAuto) warmUpThreshold(norms []float64) float64 {
	if e.alpha != 0 {
		return e.alpha
	}
	s := e.batchS[:0]
	for _, x := range norms {
		if x >= 0 && !math.IsInf(x, 1) {
			s = append(s, x)
		}
	}
	for _, l := range e.tail.logs {
		s = append(s, detmath.Exp(l))
	}
	e.batchS = s
	if len(s) == 0 {
		return 0
	}
	selectNth(s, len(s)/2)
	return s[len(s)/2]
}

func (e *PSAuto) growLogK(n int) {
	for k := len(e.logk) + 1; k <= n; k++ {
		e.logk = append(e.logk, detmath.Log(float64(k)))
	}
}

func (e *PSAuto) String() string {
	a, b := "σ̂", "p̂"
	if e.alpha != 0 {
		a = fmt.Sprint(e.alpha)
	}
	if e.beta != 0 {
		b = fmt.Sprint(e.beta)
	}
	return fmt.Sprintf("%s·k^(1/%s) over %d norms", a, b, e.tail.size)
}

// Binary state formats: a tag and version byte, then little-endian fields.
const (
	psAutoTag   = "PSAUTO\x01"
	quantileTag = "PSQUANT\x01"
)

// MarshalBinary returns the estimator's state: its parameters and window.
func (e *PSAuto) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, len(psAutoTag)+8*(5+len(e.tail.logs)))
	b = append(b, psAutoTag...)
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(e.alpha))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(e.beta))
	b = binary.LittleEndian.AppendUint64(b, uint64(e.tail.size))
	b = binary.LittleEndian.AppendUint64(b, uint64(len(e.tail.logs)))
	b = binary.LittleEndian.AppendUint64(b, uint64(e.tail.next))
	for _, l := range e.tail.logs {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(l))
	}
	return b, nil
}

// UnmarshalBinary restores a state saved by MarshalBinary. The state must
// come from an estimator with the same α, β and window: resuming with other
// parameters is an error, not a silent change of method.
func (e *PSAuto) UnmarshalBinary(data []byte) error {
	r := reader{b: data}
	if !r.tag(psAutoTag) {
		return errors.New("estimator: not a ps-clip-auto state")
	}
	alpha, beta := r.float(), r.float()
	size, n, next := r.uint(), r.uint(), r.uint()
	if r.err != nil {
		return r.err
	}
	if alpha != e.alpha || beta != e.beta || size != uint64(e.tail.size) {
		return fmt.Errorf("estimator: ps-clip-auto state for α=%v β=%v window %d, this estimator has α=%v β=%v window %d (0 = automatic)",
			alpha, beta, size, e.alpha, e.beta, e.tail.size)
	}
	if n > size || next >= max(size, 1) || (n < size && next != 0) || uint64(len(r.b)) != 8*n {
		return errors.New("estimator: corrupt ps-clip-auto state")
	}
	logs := make([]float64, n, size)
	for i := range logs {
		logs[i] = r.float()
		if math.IsNaN(logs[i]) || math.IsInf(logs[i], 1) {
			return errors.New("estimator: corrupt ps-clip-auto state")
		}
	}
	e.tail.logs, e.tail.next = logs, int(next)
	e.est, e.ready = e.tail.estimate(e.beta)
	return nil
}

// Quantile is per-sample clipping with a constant threshold γ adapted
// geometrically toward a target quantile of the norms, the rule of Andrew
// et al. 2021 ("Differentially private learning with adaptive clipping")
// without its privacy noise: after clipping a batch with γ,
//
//	γ ← γ·exp(−η_C (b̄ − q)),
//
// where b̄ is the fraction of the batch's finite samples with norm ≤ γ and
// q the target fraction of unclipped samples. γ then tracks the q-quantile
// of the norms. The initial γ is given, or else the median of the first
// batch's norms (the right start for q = 0.5).
//
// Quantile is deterministic, not safe for concurrent use, and saves its
// state (γ) with MarshalBinary.
type Quantile struct {
	target, rate, initial float64
	gamma                 float64 // 0 until the first batch with a positive norm
	scratch               []float64
}

// NewQuantile returns the quantile-adaptive estimator with target fraction
// of unclipped samples q ∈ (0, 1) (0: DefaultTargetQuantile), rate η_C > 0
// (0: DefaultQuantileRate) and initial threshold gamma (0: the median of the
// first batch; else a positive normal float32). Its errors are
// *setting.Error values.
func NewQuantile(q, rate, gamma float64) (*Quantile, error) {
	if q == 0 {
		q = DefaultTargetQuantile
	}
	if rate == 0 {
		rate = DefaultQuantileRate
	}
	e := &Quantile{target: q, rate: rate, initial: gamma, gamma: gamma}
	if err := e.validate(); err != nil {
		return nil, err
	}
	return e, nil
}

func (*Quantile) Name() string          { return "ps-clip-quantile" }
func (*Quantile) PerSample() bool       { return true }
func (*Quantile) Scale(float64) float64 { return 1 }

// Gamma returns the threshold the next batch will be clipped with (0 before
// the first batch when no initial threshold was given).
func (e *Quantile) Gamma() float64 { return e.gamma }

// Factors clips every sample to γ. Before the first step without an
// initial γ, γ is the median of the norms given, so the first step given in
// parts is clipped part by part with each part's median.
func (e *Quantile) Factors(_ int, norms, c []float64) Stats {
	st := unit(norms, c)
	gamma := e.gamma
	if gamma == 0 && st.N > st.Dropped {
		gamma = e.median(norms)
	}
	if gamma == 0 {
		return st // no γ yet, or all norms zero: nothing to clip
	}
	for i, x := range norms {
		if x > gamma && c[i] != 0 {
			c[i] = gamma / x
			st.Clipped++
		}
	}
	return st
}

// Update moves γ by the step's fraction of unclipped finite samples (after
// setting it to the step's median norm on the first step without an
// initial γ).
func (e *Quantile) Update(norms []float64) {
	m, clipped := 0, 0
	for _, x := range norms {
		if x >= 0 && !math.IsInf(x, 1) {
			m++
		}
	}
	if m == 0 {
		return
	}
	if e.gamma == 0 {
		if e.gamma = e.median(norms); e.gamma == 0 {
			return // all norms zero: nothing to learn from
		}
	}
	for _, x := range norms {
		if x > e.gamma && !math.IsInf(x, 1) {
			clipped++
		}
	}
	unclipped := float64(m-clipped) / float64(m)
	e.gamma *= detmath.Exp(-e.rate * (unclipped - e.target))
}

// median returns the median of the finite norms; there must be one.
func (e *Quantile) median(norms []float64) float64 {
	s := e.scratch[:0]
	for _, x := range norms {
		if x >= 0 && !math.IsInf(x, 1) {
			s = append(s, x)
		}
	}
	e.scratch = s
	selectNth(s, len(s)/2)
	return s[len(s)/2]
}

func (e *Quantile) String() string {
	return fmt.Sprintf("γ→q%g (η_C=%g)", e.target, e.rate)
}

// MarshalBinary returns the estimator's state: its parameters and γ.
func (e *Quantile) MarshalBinary() ([]byte, error) {
	b := append([]byte(nil), quantileTag...)
	for _, v := range []float64{e.target, e.rate, e.initial, e.gamma} {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	return b, nil
}

// UnmarshalBinary restores a state saved by MarshalBinary by an estimator
// with the same parameters.
func (e *Quantile) UnmarshalBinary(data []byte) error {
	r := reader{b: data}
	if !r.tag(quantileTag) {
		return errors.New("estimator: not a ps-clip-quantile state")
	}
	q, rate, initial, gamma := r.float(), r.float(), r.float(), r.float()
	switch {
	case r.err != nil || len(r.b) != 0 || !(gamma == 0 || positive(gamma)):
		return errors.New("estimator: corrupt ps-clip-quantile state")
	case q != e.target || rate != e.rate || initial != e.initial:
		return fmt.Errorf("estimator: ps-clip-quantile state for q=%v η_C=%v γ₀=%v, this estimator has q=%v η_C=%v γ₀=%v",
			q, rate, initial, e.target, e.rate, e.initial)
	}
	e.gamma = gamma
	return nil
}

// AutoClip is the automatic clipping AUTO-S of Bu et al. ("Automatic
// clipping: differentially private deep learning made easier and
// stronger"): every sample is normalised rather than clipped,
//
//	G = (1/n) Σ_i g_i / (|g_i| + r),
//
// so there is no threshold to tune; r > 0 keeps small gradients from being
// blown up. The step size absorbs the lost scale. A sample counts as
// clipped when its factor 1/(|g_i| + r) is below 1.
type AutoClip struct {
	R float64 // the stability constant r, a positive normal float32 (Validate)
}

// NewAutoClip returns AUTO-S with stability constant r (0: DefaultAutoClipR;
// else a positive normal float32, a *setting.Error for "R" otherwise).
func NewAutoClip(r float64) (AutoClip, error) {
	if r == 0 {
		r = DefaultAutoClipR
	}
	a := AutoClip{R: r}
	if err := a.validate(); err != nil {
		return AutoClip{}, err
	}
	return a, nil
}

func (AutoClip) Name() string          { return "auto-clip" }
func (AutoClip) PerSample() bool       { return true }
func (AutoClip) Update([]float64)      {}
func (AutoClip) Scale(float64) float64 { return 1 }

// Factors sets c[i] = 1/(|g_i| + r) for the finite samples.
func (a AutoClip) Factors(_ int, norms, c []float64) Stats {
	st := unit(norms, c)
	for i, x := range norms {
		if c[i] != 0 {
			f := 1 / (x + a.R)
			c[i] = f
			if f < 1 {
				st.Clipped++
			}
		}
	}
	return st
}

// reader decodes the little-endian fields of a binary state.
type reader struct {
	b   []byte
	err error
}

func (r *reader) tag(t string) bool {
	if len(r.b) < len(t) || string(r.b[:len(t)]) != t {
		return false
	}
	r.b = r.b[len(t):]
	return true
}

func (r *reader) uint() uint64 {
	if len(r.b) < 8 {
		r.err = errors.New("estimator: truncated state")
		return 0
	}
	v := binary.LittleEndian.Uint64(r.b)
	r.b = r.b[8:]
	return v
}

func (r *reader) float() float64 { return math.Float64frombits(r.uint()) }

// checked converts a constructor's result to Spec.New's, so that a failed
// constructor gives a nil Estimator rather than a typed nil pointer.
func checked[E Estimator](e E, err error) (Estimator, error) {
	if err != nil {
		return nil, err
	}
	return e, nil
}
