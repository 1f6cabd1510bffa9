// Package normlog records the per-sample gradient norms a training step
// hands its estimator, so that a trainer can log them for psclip tail.
package normlog

import (
	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/internal/stats"
)

// Recorder is an estimator that passes everything to the estimator it wraps
// and keeps the norms Update was given since the last Take (all of a step's,
// when it accumulates several micro-batches).
type Recorder struct {
	estimator.Estimator
	norms []stats.Float
}

// Unwrap returns the wrapped estimator (estimator.NoisyOf looks through
// the Recorder for DP-SGD's noise).
func (r *Recorder) Unwrap() estimator.Estimator { return r.Estimator }

// Update records norms and passes them to the wrapped estimator.
func (r *Recorder) Update(norms []float64) {
	for _, x := range norms {
		r.norms = append(r.norms, stats.Float(x))
	}
	r.Estimator.Update(norms)
}

// Take returns the norms recorded since the last call. The slice is reused:
// it is valid until the next call of Update.
func (r *Recorder) Take() []stats.Float {
	x := r.norms
	r.norms = r.norms[:0]
	return x
}
