// Package models builds the paper's networks from nn layers, with PyTorch
// parameter names so that weights move to and from torchvision and nanoGPT:
// AlexNet-CIFAR (torchvision's AlexNet adapted to 32×32 images, as in the
// paper's appendix; RGB, or grey with InChannels 1), SmallCNN (two
// convolutions and two linear layers, for quick runs on 32×32 images such
// as Fashion-MNIST's padded by data/idx), TanhCNN (Tramèr & Boneh's CNN
// for 28×28 grey images) and a GPT in the nanoGPT layout, with text
// generation (Generate, GPT.Generate: temperature and top-k sampling, as
// nanoGPT's sample.py) that needs no package beyond the core ones.
//
// Constructors validate their options and return an error for bad ones (a
// *setting.Error naming the field for a GPTConfig), and initialise the
// parameters deterministically from a seed.
package models
