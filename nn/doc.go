// Package nn holds psclip's neural-network layers. Every layer has an explicit
// forward and backward pass, and every parametrised layer can compute each
// sample's squared gradient norm during the ordinary backward pass and then
// form the per-sample-clipped weight gradient without a second pass
// ("book-keeping" clipping).
package nn
