package estimator

import (
	"fmt"
	"strings"
)

// Names lists the estimators' command-line names.
var Names = []string{"sgd", "clip-sgd", "nsgd", "ps-clip-sgd"}

// Params are the hyperparameters New reads; each estimator uses only its own.
type Params struct {
	// Gamma is Clip-SGD's threshold γ, and PS-Clip-SGD's constant threshold
	// when Beta is 0.
	Gamma float64
	// Alpha and Beta give PS-Clip-SGD's increasing threshold α·k^(1/β);
	// Beta = 0 selects the constant threshold Gamma instead.
	Alpha, Beta float64
}

// New returns the estimator with the command-line name name ("sgd",
// "clip-sgd", "nsgd" or "ps-clip-sgd"), checking the parameters it uses.
func New(name string, p Params) (Estimator, error) {
	switch name {
	case "sgd":
		return SGD{}, nil
	case "clip-sgd":
		return NewClipSGD(p.Gamma)
	case "nsgd":
		return NSGD{}, nil
	case "ps-clip-sgd":
		t, err := psThreshold(p)
		if err != nil {
			return nil, err
		}
		return NewPSClip(t), nil
	}
	return nil, fmt.Errorf("estimator: unknown method %q (want one of %s)", name, strings.Join(Names, ", "))
}

func psThreshold(p Params) (Threshold, error) {
	if p.Beta == 0 {
		return Constant(p.Gamma)
	}
	return Increasing(p.Alpha, p.Beta)
}
