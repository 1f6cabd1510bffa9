package estimator

import (
	"fmt"
	"strings"
)

// Names lists the estimators' command-line names.
var Names = []string{"sgd", "clip-sgd", "nsgd", "ps-clip-sgd", "ps-clip-auto", "ps-clip-quantile", "auto-clip"}

// Params are the hyperparameters New reads; each estimator uses only its own.
type Params struct {
	// Gamma is Clip-SGD's threshold γ, and PS-Clip-SGD's constant threshold
	// when Beta is 0.
	Gamma float64
	// Alpha and Beta give PS-Clip-SGD's increasing threshold α·k^(1/β);
	// Beta = 0 selects the constant threshold Gamma instead.
	Alpha, Beta float64
	// AutoAlpha and AutoBeta make ps-clip-sgd estimate α = σ̂ or β = p̂
	// online (PSAuto, which "ps-clip-auto" is with both) from the last
	// Window per-sample norms (0: DefaultWindow).
	AutoAlpha, AutoBeta bool
	Window              int
	// TargetQuantile and QuantileRate are ps-clip-quantile's target
	// fraction of unclipped samples and rate η_C (0: the defaults); its
	// initial threshold is Gamma (0: the first batch's median).
	TargetQuantile, QuantileRate float64
	// R is auto-clip's stability constant (0: DefaultAutoClipR).
	R float64
}

// New returns the estimator with the command-line name name (one of
// Names), checking the parameters it uses.
func New(name string, p Params) (Estimator, error) {
	switch name {
	case "sgd":
		return SGD{}, nil
	case "clip-sgd":
		return NewClipSGD(p.Gamma)
	case "nsgd":
		return NSGD{}, nil
	case "ps-clip-sgd":
		if p.AutoAlpha || p.AutoBeta {
			return newPSAuto(p)
		}
		t, err := psThreshold(p)
		if err != nil {
			return nil, err
		}
		return NewPSClip(t), nil
	case "ps-clip-auto":
		return checked(NewPSAuto(0, 0, p.Window))
	case "ps-clip-quantile":
		return checked(NewQuantile(p.TargetQuantile, p.QuantileRate, p.Gamma))
	case "auto-clip":
		return checked(NewAutoClip(p.R))
	}
	return nil, fmt.Errorf("estimator: unknown method %q (want one of %s)", name, strings.Join(Names, ", "))
}

func psThreshold(p Params) (Threshold, error) {
	if p.Beta == 0 {
		return Constant(p.Gamma)
	}
	return Increasing(p.Alpha, p.Beta)
}
