// Package models builds the paper's networks from nn layers, with PyTorch
// parameter names so that weights move to and from torchvision and nanoGPT:
// AlexNet-CIFAR (torchvision's AlexNet adapted to 32×32 images, as in the
// paper's appendix) and a GPT in the nanoGPT layout.
//
// Constructors validate their options and return an error for bad ones, and
// initialise the parameters deterministically from a seed.
package models
