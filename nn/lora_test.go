package nn

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// LoRA starts as its base layer, trains only its adapters, passes the
// layer checks (finite differences of the input and adapter gradients; the
// per-sample rule against the brute force, on vectors and on sequences,
// behind a trained layer so that the input gradient is used), and merges
// into one Linear with the same outputs.
func TestLoRA(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, shape := range [][]int{{5, 6}, {3, 4, 6}} {
		base := NewLinear("h.0.attn.c_attn", 6, 8, true)
		randomize(rng, base, 0.5)
		l, err := NewLoRA(base, 2, 4)
		if err != nil {
			t.Fatal(err)
		}
		x := randTensor(rng, shape...)
		y0 := slices.Clone(base.Forward(&Context{}, x).Data)
		if y := l.Forward(&Context{}, x); !slices.Equal(y.Data, y0) {
			t.Fatalf("%v: a new LoRA's output is not its base's", shape)
		}
		var names []string
		for _, p := range l.Params() {
			names = append(names, p.Name)
		}
		if !slices.Equal(names, []string{"h.0.attn.c_attn.weight", "h.0.attn.c_attn.bias", "h.0.attn.c_attn.lora_A.weight", "h.0.attn.c_attn.lora_B.weight"}) ||
			!base.Weight.Frozen || !base.Bias.Frozen || len(Trainable(l.Params())) != 2 || l.Scale != 2 {
			t.Fatalf("params %v, scale %v", names, l.Scale)
		}
		randomize(rng, l.B, 0.5) // a trained adapter
		checkGrad(t, l, randTensor(rng, shape...), gradOpt{})
		in := NewLinear("in", 3, 6, true)
		randomize(rng, in, 0.5)
		xs := randTensor(rng, append(slices.Clone(shape[:len(shape)-1]), 3)...)
		checkPerSample(t, Sequential{in, &Tanh{}, l}, xs, ids(shape[0]), squareLoss(randTensor(rng, append(slices.Clone(shape[:len(shape)-1]), 8)...)), medianClip)

		want := slices.Clone(l.Forward(&Context{}, x).Data)
		merged := l.Merge()
		for i, v := range merged.Forward(&Context{}, x).Data {
			if math.Abs(float64(v-want[i])) > 1e-5*(1+math.Abs(float64(want[i]))) {
				t.Fatalf("%v: merged output %d: %v, want %v", shape, i, v, want[i])
			}
		}
	}
	for _, tc := range []struct {
		rank  int
		alpha float64
	}{{0, 1}, {7, 1}, {2, 0}, {2, math.NaN()}} {
		if _, err := NewLoRA(NewLinear("l", 6, 8, true), tc.rank, tc.alpha); err == nil {
			t.Errorf("rank %d, α %v: no error", tc.rank, tc.alpha)
		}
	}
}
