package estimator

import (
	"fmt"
	"strconv"
)

// Describe returns e's method and the settings that decide its updates,
// exactly (floats in full precision): "ps-clip-quantile q=0.5 η=0.2
// γ₀=0", "dp-sgd C=1 σ=1.1". Estimators that wrap another (a method
// Unwrap() Estimator, as NoisyOf follows) are described by what they wrap,
// and an estimator of another package by its Name. A Trainer's State
// carries it, so that a state restores only into the method it was saved
// from (MismatchError).
func Describe(e Estimator) string {
	for {
		w, ok := e.(interface{ Unwrap() Estimator })
		if !ok {
			break
		}
		e = w.Unwrap()
	}
	if d, ok := e.(interface{ describe() string }); ok {
		return d.describe()
	}
	if e == nil {
		return "<nil>"
	}
	return e.Name()
}

func (SGD) describe() string        { return "sgd" }
func (NSGD) describe() string       { return "nsgd" }
func (c ClipSGD) describe() string  { return "clip-sgd γ=" + exact(c.Gamma) }
func (a AutoClip) describe() string { return "auto-clip r=" + exact(a.R) }
func (e *PSClip) describe() string {
	return fmt.Sprintf("ps-clip-sgd α=%s β=%s", exact(e.t.alpha), exact(e.t.beta))
}
func (e *PSAuto) describe() string {
	return fmt.Sprintf("ps-clip-auto α=%s β=%s window=%d", exact(e.alpha), exact(e.beta), e.tail.size)
}
func (e *Quantile) describe() string {
	return fmt.Sprintf("ps-clip-quantile q=%s η=%s γ₀=%s", exact(e.target), exact(e.rate), exact(e.initial))
}
func (e *DPSGD) describe() string {
	return fmt.Sprintf("dp-sgd C=%s σ=%s", exact(e.c), exact(e.sigma))
}

// exact formats x in the fewest digits that read back as x.
func exact(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// MismatchError is the error of restoring a state saved by one estimator
// into an estimator of another method or settings (Describe): a run
// continues with the method it was saved with, or not at all.
type MismatchError struct {
	Saved string // what saved the state (Describe), or what the state is
	Have  string // the estimator it was to be restored into (Describe)
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("estimator: a state saved by %s cannot be restored into %s", e.Saved, e.Have)
}
