package models

import (
	"fmt"

	"github.com/psclip/psclip/nn"
)

// TanhCNNConfig configures TanhCNN.
type TanhCNNConfig struct {
	// Classes is the number of outputs.
	Classes int
	// Side is the side of the grey input images: 28 (0 means 28), the
	// paper's, whose first convolution pads by 2; or 32, the 28×28 images
	// centred on data/idx's black 32×32 canvas, which then is that
	// padding: the first convolution pads by 0 and reads the same pixels,
	// so the model computes what it computes on the 28×28 images, provided
	// black is 0 (pixels on the [0, 1] scale, not normalised by channel).
	Side int
}

// DefaultTanhCNN is the paper's model: 28×28 grey images, 10 classes,
// 26,010 parameters.
var DefaultTanhCNN = TanhCNNConfig{Classes: 10, Side: 28}

// NewTanhCNN returns the end-to-end CNN of Tramèr & Boneh, "Differentially
// private learning needs better features (or much more data)", ICLR 2021,
// their MNIST and Fashion-MNIST baseline, for [B,1,Side,Side] images:
//
//	Conv(1,16,k8,s2,p2) Tanh MaxPool(2,1)   [B,16,13,13] → [B,16,12,12]
//	Conv(16,32,k4,s2) Tanh MaxPool(2,1)     [B,32,5,5] → [B,32,4,4]
//	Flatten Linear(512,32) Tanh Linear(32,classes)
//
// with the parameter names of the PyTorch nn.Sequential that lists these
// layers in order (0.weight, 0.bias, 3.weight, …, 9.bias) and PyTorch's
// default initialisation drawn, layer by layer in that order, from a
// generator seeded with seed. Every layer has a per-sample rule, so it
// trains with every estimator.
func NewTanhCNN(cfg TanhCNNConfig, seed uint64) (nn.Sequential, error) {
	pad, err := cfg.pad()
	if err != nil {
		return nil, err
	}
	if cfg.Classes < 1 {
		return nil, fmt.Errorf("models: TanhCNN needs at least 1 class, got %d", cfg.Classes)
	}
	first := nn.NewConv2d("0", 1, 16, 8, 2, pad, true)
	first.NoInputGrad = true // the images' gradient is never used
	m := nn.Sequential{
		first, &nn.Tanh{}, nn.NewMaxPool2d(2, 1),
		nn.NewConv2d("3", 16, 32, 4, 2, 0, true), &nn.Tanh{}, nn.NewMaxPool2d(2, 1),
		&nn.Flatten{},
		nn.NewLinear("7", 32*4*4, 32, true), &nn.Tanh{},
		nn.NewLinear("9", 32, cfg.Classes, true),
	}
	initDefault(m, seed, 0x74616e68636e6e) // "tanhcnn"
	return m, nil
}

// pad is the first convolution's padding for the configured side.
func (c TanhCNNConfig) pad() (int, error) {
	switch c.Side {
	case 0, 28:
		return 2, nil
	case 32:
		return 0, nil
	}
	return 0, fmt.Errorf("models: TanhCNN takes 28×28 images or 32×32 ones padded from 28×28, not side %d", c.Side)
}
