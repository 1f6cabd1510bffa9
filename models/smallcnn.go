package models

import (
	"fmt"

	"github.com/psclip/psclip/nn"
)

// SmallCNNConfig configures SmallCNN.
type SmallCNNConfig struct {
	// Classes is the number of outputs.
	Classes int
	// InChannels is the number of image channels: 3 for RGB (0 means 3),
	// 1 for grey images.
	InChannels int
	// Width is the number of channels of the first convolution; the
	// second has 2·Width and the hidden layer 8·Width units.
	Width int
}

// DefaultSmallCNN is SmallCNN for Fashion-MNIST: grey images, 10 classes,
// 268,362 parameters.
var DefaultSmallCNN = SmallCNNConfig{Classes: 10, InChannels: 1, Width: 16}

// NewSmallCNN returns a small convolutional network for quick runs on
// [B,C,32,32] images (C = cfg.InChannels, w = cfg.Width):
//
//	features   = Conv(C,w,k3,p1) ReLU MaxPool(2,2) Conv(w,2w,k3,p1) ReLU MaxPool(2,2)
//	classifier = Flatten Linear(2w·8·8, 8w) ReLU Linear(8w, classes)
//
// with the parameter names of that PyTorch nn.Sequential pair
// (features.0.weight, …, classifier.3.bias) and PyTorch's default
// initialisation drawn, layer by layer in that order, from a generator
// seeded with seed. Every layer has a per-sample rule, so it trains with
// every estimator. At the default width a forward pass costs 1.6 million
// multiply-adds per image, against AlexNet-CIFAR's 272 million at full
// width.
func NewSmallCNN(cfg SmallCNNConfig, seed uint64) (nn.Sequential, error) {
	switch {
	case cfg.Classes < 1:
		return nil, fmt.Errorf("models: SmallCNN needs at least 1 class, got %d", cfg.Classes)
	case cfg.Width < 1:
		return nil, fmt.Errorf("models: SmallCNN width must be at least 1, got %d", cfg.Width)
	}
	in, err := inChannels("SmallCNN", cfg.InChannels)
	if err != nil {
		return nil, err
	}
	w := cfg.Width
	first := nn.NewConv2d("features.0", in, w, 3, 1, 1, true)
	first.NoInputGrad = true // the images' gradient is never used
	m := nn.Sequential{
		first, &nn.ReLU{}, nn.NewMaxPool2d(2, 2),
		nn.NewConv2d("features.3", w, 2*w, 3, 1, 1, true), &nn.ReLU{}, nn.NewMaxPool2d(2, 2),
		&nn.Flatten{},
		nn.NewLinear("classifier.1", 2*w*8*8, 8*w, true), &nn.ReLU{},
		nn.NewLinear("classifier.3", 8*w, cfg.Classes, true),
	}
	initDefault(m, seed, 0x736d616c6c636e6e) // "smallcnn"
	return m, nil
}
