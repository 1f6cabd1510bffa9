package estimator

import (
	"errors"

	"github.com/psclip/psclip/internal/isnil"
	"github.com/psclip/psclip/setting"
)

// Validate checks an estimator before it is used: the one check of every
// setting of the package's estimators, which their constructors, Spec,
// Direction and package train all run, so that an estimator built as a
// struct literal (ClipSGD{Gamma: -1}, ClipSGD{}, AutoClip{}, a zero PSAuto)
// is refused rather than reverse, freeze or poison training. A threshold
// or constant must be a positive normal float32, the precision the
// gradients it scales are in (Spec's rule: 1e39 is +Inf there, 1e-40
// subnormal). Errors about a setting are *setting.Error values naming the
// estimator's field or constructor argument ("Gamma", "Alpha", "Beta",
// "R", "Window", "Q", "Rate"); a nil estimator is an error too. An
// estimator from outside the package is trusted.
func Validate(e Estimator) error {
	if isnil.IsNil(e) {
		return errors.New("estimator: no estimator (nil)")
	}
	if v, ok := e.(interface{ validate() error }); ok {
		return v.validate()
	}
	return nil
}

func (c ClipSGD) validate() error { return setting.Positive32("Gamma", c.Gamma) }

func (a AutoClip) validate() error { return setting.Positive32("R", a.R) }

func (e *PSClip) validate() error { return e.t.validate() }

// validate checks a Threshold: Constant's γ, or Increasing's α and β.
func (t Threshold) validate() error {
	if t.beta == 0 {
		return setting.Positive32("Gamma", t.alpha)
	}
	return setting.First(setting.Positive32("Alpha", t.alpha), setting.Positive32("Beta", t.beta))
}

// validate checks a PSAuto: fixed α and β 0 (estimated) or positive normal
// float32 values, and a window NewTail accepts (a zero PSAuto has none).
func (e *PSAuto) validate() error {
	if e.tail == nil {
		return setting.Errorf("Window", 0, "at least %d norms: build a PSAuto with NewPSAuto", MinTailSamples)
	}
	return setting.First(setting.NonNegative32("Alpha", e.alpha), setting.NonNegative32("Beta", e.beta), checkWindow(e.tail.size))
}

// validate checks a Quantile: 0 < q < 1, a positive rate and an initial γ
// of 0 (the first batch's median) or a positive normal float32.
func (e *Quantile) validate() error {
	if !(e.target > 0 && e.target < 1) {
		return setting.Errorf("Q", e.target, "a fraction strictly between 0 and 1: build a Quantile with NewQuantile")
	}
	return setting.First(setting.Positive32("Rate", e.rate), setting.NonNegative32("Gamma", e.initial))
}

// checkWindow checks a Tail's window.
func checkWindow(window int) error {
	if window < MinTailSamples {
		return setting.Errorf("Window", window, "at least %d norms", MinTailSamples)
	}
	return nil
}
