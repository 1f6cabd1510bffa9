package models

import (
	"fmt"

	"github.com/psclip/psclip/nn"
)

// MLPConfig configures an MLP, the model of tabular data.
type MLPConfig struct {
	In     int   // input features
	Hidden []int // the hidden layers' widths, in order; none for a linear model
	Out    int   // outputs: classes, 1 for binary cross-entropy or regression
	Tanh   bool  // tanh activations instead of ReLU (bounded: DP-SGD's usual choice)
}

// NewMLP returns the multilayer perceptron of cfg for [B, In] inputs,
//
//	Linear(In, H₁) act … Linear(H_k, Out)
//
// with the parameter names of the PyTorch nn.Sequential that lists these
// layers in order (0.weight, 0.bias, 2.weight, …) and PyTorch's default
// initialisation drawn layer by layer from a generator seeded with seed.
func NewMLP(cfg MLPConfig, seed uint64) (nn.Sequential, error) {
	if cfg.In < 1 || cfg.Out < 1 {
		return nil, fmt.Errorf("models: MLP of %d inputs and %d outputs, want at least 1 of each", cfg.In, cfg.Out)
	}
	var m nn.Sequential
	in := cfg.In
	for _, h := range cfg.Hidden {
		if h < 1 {
			return nil, fmt.Errorf("models: MLP hidden widths %v, want every one at least 1", cfg.Hidden)
		}
		m = append(m, nn.NewLinear(fmt.Sprint(len(m)), in, h, true))
		if cfg.Tanh {
			m = append(m, &nn.Tanh{})
		} else {
			m = append(m, &nn.ReLU{})
		}
		in = h
	}
	m = append(m, nn.NewLinear(fmt.Sprint(len(m)), in, cfg.Out, true))
	initDefault(m, seed, 0x6d6c70) // "mlp"
	return m, nil
}
