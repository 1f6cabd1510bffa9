// Package normlog records the per-sample gradient norms a training step
// hands its estimator, so that a trainer can log them for psclip tail.
package normlog

import (
	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/internal/stats"
)

// Recorder is an estimator that passes everything to the estimator it wraps
// and keeps the norms Weights was given since the last Take (every
// micro-batch's, when a step accumulates several).
type Recorder struct {
	estimator.Estimator
	norms []stats.Float
}

// Weights records norms and returns the wrapped estimator's weights.
func (r *Recorder) Weights(norms []float64, w []float64) estimator.Stats {
	for _, x := range norms {
		r.norms = append(r.norms, stats.Float(x))
	}
	return r.Estimator.Weights(norms, w)
}

// Take returns the norms recorded since the last call. The slice is reused:
// it is valid until the next call of Weights.
func (r *Recorder) Take() []stats.Float {
	x := r.norms
	r.norms = r.norms[:0]
	return x
}
