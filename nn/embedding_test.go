package nn

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/psclip/psclip/tensor"
)

// tokens returns a [b, t] tensor (t ≥ 4) of random ids in [0, vocab), in
// which sample 0 has one token at three positions, so that the grouping of
// repeated tokens is exercised.
func tokens(rng *rand.Rand, b, t, vocab int) *tensor.Tensor {
	x := tensor.New(b, t)
	for i := range x.Data {
		x.Data[i] = float32(rng.IntN(vocab))
	}
	x.Data[1], x.Data[3] = x.Data[0], x.Data[0] // a token three times in sample 0
	return x
}

func TestCheckTokens(t *testing.T) {
	for _, tc := range []struct {
		name string
		x    *tensor.Tensor
		err  string
	}{
		{"ok", tensor.From([]float32{0, 4, 2, 1}, 2, 2), ""},
		{"too-big", tensor.From([]float32{0, 5, 2, 1}, 2, 2), "position 1"},
		{"negative", tensor.From([]float32{0, 1, -1, 1}, 2, 2), "sample 1"},
		{"fraction", tensor.From([]float32{0.5, 1}, 1, 2), "not an id"},
		{"nan", tensor.From([]float32{float32(math.NaN())}, 1, 1), "not an id"},
		{"1d", tensor.From([]float32{0, 1}, 2), "[batch, time]"},
	} {
		err := CheckTokens(tc.x, 5)
		if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
		}
	}
}

func TestEmbeddingForward(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	e := NewEmbedding("wte", 5, 3)
	randomize(rng, e, 1)
	p := NewPositionEmbedding("wpe", 4, 3)
	randomize(rng, p, 1)
	x := tensor.From([]float32{4, 0, 4, 2, 1, 3}, 2, 3)
	y := p.Forward(&Context{}, e.Forward(&Context{}, x))
	for i, id := range x.Data {
		for j := range 3 {
			want := e.Weight.Value.Data[int(id)*3+j] + p.Weight.Value.Data[(i%3)*3+j]
			if y.Data[i*3+j] != want {
				t.Fatalf("y[%d][%d] = %v, want %v", i, j, y.Data[i*3+j], want)
			}
		}
	}
}

func TestEmbeddingGrad(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	e := NewEmbedding("wte", 6, 4)
	p := NewPositionEmbedding("wpe", 7, 4)
	m := Sequential{e, p}
	randomize(rng, m, 1)
	checkGrad(t, m, tokens(rng, 2, 5, 6), gradOpt{NoInput: true})
}

func TestEmbeddingPerSample(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	e := NewEmbedding("wte", 6, 4)
	p := NewPositionEmbedding("wpe", 7, 4)
	fc := NewLinear("fc", 4, 3, false)
	m := Sequential{e, p, fc}
	randomize(rng, m, 1)
	x := tokens(rng, 4, 5, 6)
	checkPerSample(t, m, x, ids(4), squareLoss(randTensor(rng, 4, 5, 3)), medianClip)
}
