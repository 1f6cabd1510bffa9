package models

import (
	"math/rand/v2"

	"github.com/psclip/psclip/nn"
)

// initDefault draws PyTorch's default initialisation for the parameters of
// m, taken in (weight, bias) pairs in their order, from a PCG generator
// seeded with (seed, stream): how every model here but the GPT starts, each
// with a stream of its own.
func initDefault(m nn.Layer, seed, stream uint64) {
	rng := rand.New(rand.NewPCG(seed, stream))
	ps := m.Params()
	for i := 0; i < len(ps); i += 2 {
		nn.InitDefault(rng, ps[i], ps[i+1])
	}
}
