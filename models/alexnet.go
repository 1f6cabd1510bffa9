package models

import (
	"fmt"

	"github.com/psclip/psclip/nn"
)

// AlexNetConfig configures AlexNet-CIFAR.
type AlexNetConfig struct {
	// Classes is the number of outputs (100 for CIFAR-100).
	Classes int
	// WidthDiv divides every channel and hidden width (64, 192, 384, 256,
	// 4096) for small runs; each stays at least 1. 1 is the paper's model.
	WidthDiv int
	// Dropout is the classifier's dropout probability (torchvision: 0.5).
	Dropout float64
	// InChannels is the number of image channels: 3 for RGB (0 means 3),
	// 1 for grey images such as Fashion-MNIST's padded to 32×32. Only the
	// first convolution's weight changes shape; with 3 the model and its
	// initial weights are those of the paper's model.
	InChannels int
}

// DefaultAlexNet is the paper's AlexNet-CIFAR for CIFAR-100.
var DefaultAlexNet = AlexNetConfig{Classes: 100, WidthDiv: 1, Dropout: 0.5, InChannels: 3}

// NewAlexNet returns AlexNet-CIFAR as the paper's appendix describes it:
// torchvision's AlexNet with a 3×3 stride-1 first convolution and 2×2
// stride-2 max-pools, for [B,C,32,32] images (C = cfg.InChannels):
//
//	features   = Conv(C,64,k3,p1) ReLU MaxPool(2,2) Conv(64,192,k5,p2) ReLU
//	             MaxPool(2,2) Conv(192,384,k3,p1) ReLU Conv(384,256,k3,p1) ReLU
//	             Conv(256,256,k3,p1) ReLU MaxPool(2,2)
//	avgpool    = AdaptiveAvgPool(6,6), then flatten
//	classifier = Dropout Linear(256·36,4096) ReLU Dropout Linear(4096,4096)
//	             ReLU Linear(4096,classes)
//
// with torchvision's parameter names (features.0.weight, …,
// classifier.6.bias) and PyTorch's default initialisation drawn, layer by
// layer in that order, from a generator seeded with seed. Each
// convolution's ReLU is fused into it (nn.Conv2d.ReLU, the same results as
// the two layers), so the Sequential holds no ReLU layer after a
// convolution.
func NewAlexNet(cfg AlexNetConfig, seed uint64) (nn.Sequential, error) {
	switch {
	case cfg.Classes < 1:
		return nil, fmt.Errorf("models: AlexNet needs at least 1 class, got %d", cfg.Classes)
	case cfg.WidthDiv < 1:
		return nil, fmt.Errorf("models: AlexNet width divisor must be at least 1, got %d", cfg.WidthDiv)
	case !(cfg.Dropout >= 0 && cfg.Dropout < 1):
		return nil, fmt.Errorf("models: AlexNet dropout must be in [0,1), got %g", cfg.Dropout)
	}
	in, err := inChannels("AlexNet", cfg.InChannels)
	if err != nil {
		return nil, err
	}
	w := func(n int) int { return max(1, n/cfg.WidthDiv) }
	c1, c2, c3, c4, c5, hidden := w(64), w(192), w(384), w(256), w(256), w(4096)
	convReLU := func(i, cin, cout, k, pad int) *nn.Conv2d {
		c := nn.NewConv2d(fmt.Sprintf("features.%d", i), cin, cout, k, 1, pad, true)
		c.ReLU = true
		return c
	}
	first := convReLU(0, in, c1, 3, 1)
	first.NoInputGrad = true // the images' gradient is never used
	m := nn.Sequential{
		first, nn.NewMaxPool2d(2, 2),
		convReLU(3, c1, c2, 5, 2), nn.NewMaxPool2d(2, 2),
		convReLU(6, c2, c3, 3, 1),
		convReLU(8, c3, c4, 3, 1),
		convReLU(10, c4, c5, 3, 1), nn.NewMaxPool2d(2, 2),
		nn.NewAdaptiveAvgPool2d(6, 6), &nn.Flatten{},
		nn.NewDropout(cfg.Dropout), nn.NewLinear("classifier.1", c5*36, hidden, true), &nn.ReLU{},
		nn.NewDropout(cfg.Dropout), nn.NewLinear("classifier.4", hidden, hidden, true), &nn.ReLU{},
		nn.NewLinear("classifier.6", hidden, cfg.Classes, true),
	}
	initDefault(m, seed, 0x616c65786e6574) // "alexnet"
	return m, nil
}
