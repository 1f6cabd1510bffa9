package models

import (
	"fmt"

	"github.com/psclip/psclip/nn"
)

// ScatterNetConfig configures the ScatterNet heads: models trained on the
// fixed scattering features of package scatter.
type ScatterNetConfig struct {
	// Channels and Side are the features' shape, [B, Channels, Side, Side]:
	// 81 channels of 7×7 for 28×28 grey images at J = 2, L = 8.
	Channels, Side int
	// Groups is the group normalisation's number of groups (Tramèr &
	// Boneh: 27); it must divide Channels.
	Groups int
	// Classes is the number of outputs.
	Classes int
}

// DefaultScatterNet is Tramèr & Boneh's configuration for MNIST and
// Fashion-MNIST: 81 channels of 7×7, 27 groups, 10 classes.
var DefaultScatterNet = ScatterNetConfig{Channels: 81, Side: 7, Groups: 27, Classes: 10}

func (c ScatterNetConfig) check() error {
	if c.Channels < 1 || c.Side < 1 || c.Classes < 1 || c.Groups < 1 || c.Channels%c.Groups != 0 {
		return fmt.Errorf("models: ScatterNet of %d channels of %d×%d in %d groups, %d classes: want positive sizes and groups that divide the channels", c.Channels, c.Side, c.Side, c.Groups, c.Classes)
	}
	return nil
}

// NewScatterLinear returns Tramèr & Boneh's "ScatterNet + linear" model
// (ICLR 2021; 89.7 % on Fashion-MNIST at ε = 3): a linear classifier on
// group-normalised scattering features [B, C, S, S],
//
//	GroupNorm(Groups, C, no affine parameters)  Flatten  Linear(C·S·S, classes)
//
// the linear layer named fc (fc.weight, fc.bias, as their ScatterLinear)
// with PyTorch's default initialisation from a generator seeded with seed.
// Group normalisation uses each sample's own statistics, so the model
// trains under DP-SGD with nothing shared between samples.
func NewScatterLinear(cfg ScatterNetConfig, seed uint64) (nn.Sequential, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	gn, err := nn.NewGroupNorm("norm", cfg.Groups, cfg.Channels, false)
	if err != nil {
		return nil, err
	}
	fc := nn.NewLinear("fc", cfg.Channels*cfg.Side*cfg.Side, cfg.Classes, true)
	m := nn.Sequential{gn, &nn.Flatten{}, fc}
	initDefault(m, seed, 0x7363617474657231) // "scatter1"
	return m, nil
}

// NewScatterCNN returns Tramèr & Boneh's "ScatterNet + CNN" model for
// MNIST-sized features (their MNIST_CNN on scattering input): on
// group-normalised features [B, C, S, S],
//
//	Conv(C,16,k3,s2,p1) Tanh          [B,16,⌈S/2⌉,⌈S/2⌉]
//	Conv(16,32,k3,s1,p1) Tanh         [B,32,…]
//	Flatten Linear(32·⌈S/2⌉²,32) Tanh Linear(32,classes)
//
// with the parameter names of the PyTorch modules in order (features.0,
// features.2, classifier.0, classifier.2) and PyTorch's default
// initialisation drawn in that order from a generator seeded with seed.
func NewScatterCNN(cfg ScatterNetConfig, seed uint64) (nn.Sequential, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	gn, err := nn.NewGroupNorm("norm", cfg.Groups, cfg.Channels, false)
	if err != nil {
		return nil, err
	}
	half := (cfg.Side-1)/2 + 1
	m := nn.Sequential{
		gn, nn.NewConv2d("features.0", cfg.Channels, 16, 3, 2, 1, true), &nn.Tanh{},
		nn.NewConv2d("features.2", 16, 32, 3, 1, 1, true), &nn.Tanh{},
		&nn.Flatten{},
		nn.NewLinear("classifier.0", 32*half*half, 32, true), &nn.Tanh{},
		nn.NewLinear("classifier.2", 32, cfg.Classes, true),
	}
	initDefault(m, seed, 0x7363617474657232) // "scatter2"
	return m, nil
}
