// Package nn holds psclip's neural-network layers. Every layer has an explicit
// forward and backward pass, and every parametrised layer can compute each
// sample's squared gradient norm during the ordinary backward pass and then
// form the per-sample-clipped weight gradient without a second pass
// ("book-keeping" clipping).
//
// Constructors start a layer from PyTorch's default initialisation, drawn
// from the package's default source (a fixed seed, so a program starts from
// the same weights on every run); Init re-draws a whole model from a seed of
// one's choice, each layer with its own scheme (Initializer).
//
// Every layer says without running which inputs it accepts (Shaper), and
// CheckInput checks an input against a whole model, so that a trainer can
// refuse a bad batch before anything runs; Forward itself panics on a shape
// it does not accept, as a programming error.
//
// A layer of one's own takes part by implementing Layer (and, to be
// initialised and checked, Initializer and Shaper); package nntest checks
// its gradients and its per-sample mode as this package's layers are
// checked.
package nn
