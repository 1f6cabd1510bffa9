package nn_test

import (
	"math/rand/v2"
	"testing"

	"github.com/psclip/psclip/models"
	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/nn/nntest"
	"github.com/psclip/psclip/tensor"
)

// The whole GPT at small width (2 layers, 2 heads, width 16, block 8, vocab
// 11, batch 3; the tied wte/lm_head, repeated tokens) against the brute force,
// with per-sequence cross-entropy, with and without biases.
func TestGPTPerSample(t *testing.T) {
	for _, bias := range []bool{false, true} {
		cfg := models.GPTConfig{NLayer: 2, NHead: 2, NEmbd: 16, BlockSize: 8, VocabSize: 11, Bias: bias}
		m, err := models.NewGPT(cfg, 1)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(3, 4))
		// GPT-2's init gives gradients dominated by the head; larger
		// weights make every layer's share of the norm count.
		for _, p := range m.Params() {
			if len(p.Value.Shape) == 2 {
				nn.Normal(rng, p.Value, 0.3)
			}
		}
		const b, tl = 3, 8
		x := tensor.New(b, tl)
		y := make([]int32, b*tl)
		for i := range x.Data {
			x.Data[i] = float32(rng.IntN(4)) // a small alphabet: many repeats
			y[i] = int32(rng.IntN(cfg.VocabSize))
		}
		if err := m.CheckInput(x); err != nil {
			t.Fatal(err)
		}
		nntest.CheckPerSample(t, m, x, y, nn.CrossEntropy, nntest.MedianClip)
	}
}
