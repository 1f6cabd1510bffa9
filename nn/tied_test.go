package nn

import (
	"math/rand/v2"
	"testing"
)

// tiedModel is a small language model with a tied embedding and head: the
// per-sample norm is right only with the cross term of the two contributions.
func tiedModel(rng *rand.Rand, r rule) (Layer, *Embedding) {
	e := NewEmbedding("wte", 7, 6)
	head := NewTiedHead(e)
	head.proj.rule = r
	fc := NewLinear("fc", 6, 6, false)
	m := Sequential{e, NewPositionEmbedding("wpe", 8, 6), &Residual{F: Sequential{NewLayerNorm("ln", 6, false), fc, &GELU{}}}, NewLayerNorm("ln_f", 6, true), head}
	randomize(rng, m, 0.7)
	return m, e
}

func TestTiedHeadParams(t *testing.T) {
	m, e := tiedModel(rand.New(rand.NewPCG(1, 1)), ruleAuto)
	n := 0
	for _, p := range m.Params() {
		if p == e.Weight {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("the tied weight is listed %d times, want once", n)
	}
}

func TestTiedHeadGrad(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 3))
	m, _ := tiedModel(rng, ruleAuto)
	checkGrad(t, m, tokens(rng, 2, 5, 7), gradOpt{NoInput: true})
}

func TestTiedHeadPerSample(t *testing.T) {
	for _, tc := range []struct {
		name string
		rule rule
	}{{"ghost", ruleGhost}, {"materialise", ruleMaterialise}} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(4, 5))
			m, _ := tiedModel(rng, tc.rule)
			x := tokens(rng, 4, 6, 7)
			checkPerSample(t, m, x, ids(4), squareLoss(randTensor(rng, 4, 6, 7)), medianClip)
		})
	}
}
