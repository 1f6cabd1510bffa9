package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestLayerNormForward(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	l := NewLayerNorm("ln", 7, true)
	randomize(rng, l, 1)
	x := randTensor(rng, 2, 3, 7)
	y := l.Forward(&Context{}, x)
	for r := range x.Rows() {
		row := x.Data[r*7 : (r+1)*7]
		var mean, v float64
		for _, e := range row {
			mean += float64(e) / 7
		}
		for _, e := range row {
			v += (float64(e) - mean) * (float64(e) - mean) / 7
		}
		for j, e := range row {
			want := (float64(e)-mean)/math.Sqrt(v+1e-5)*float64(l.Weight.Value.Data[j]) + float64(l.Bias.Value.Data[j])
			if got := float64(y.Data[r*7+j]); math.Abs(got-want) > 1e-5*(1+math.Abs(want)) {
				t.Fatalf("row %d, feature %d: %v, want %v", r, j, got, want)
			}
		}
	}
}

func TestLayerNormInit(t *testing.T) {
	l := NewLayerNorm("transformer.ln_f", 4, false)
	if len(l.Params()) != 1 || l.Weight.Name != "transformer.ln_f.weight" {
		t.Fatalf("params %v", l.Params())
	}
	for _, w := range l.Weight.Value.Data {
		if w != 1 {
			t.Fatalf("weight %v, want ones", l.Weight.Value.Data)
		}
	}
	if b := NewLayerNorm("ln", 4, true).Bias; b == nil || b.Name != "ln.bias" {
		t.Fatalf("bias %v", b)
	}
}

func TestLayerNormGrad(t *testing.T) {
	for _, tc := range []struct {
		name  string
		shape []int
		bias  bool
	}{
		{"2d", []int{3, 6}, true},
		{"3d", []int{2, 4, 6}, true},
		{"3d-nobias", []int{2, 4, 6}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(2, 3))
			l := NewLayerNorm("ln", 6, tc.bias)
			randomize(rng, l, 1)
			checkGrad(t, l, randTensor(rng, tc.shape...), gradOpt{})
		})
	}
}

func TestLayerNormPerSample(t *testing.T) {
	for _, bias := range []bool{true, false} {
		rng := rand.New(rand.NewPCG(4, 5))
		l := NewLayerNorm("ln", 6, bias)
		randomize(rng, l, 1)
		fc := NewLinear("fc", 6, 3, false)
		randomize(rng, fc, 0.5)
		checkPerSample(t, Sequential{l, fc}, randTensor(rng, 4, 5, 6), ids(4), squareLoss(randTensor(rng, 4, 5, 3)), medianClip)
	}
}

// BenchmarkLayerNorm times the forward and the backward of one GPT layer
// norm (batch 12, T 64, 128 features, no bias).
func BenchmarkLayerNorm(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 9))
	x := randTensor(rng, 12, 64, 128)
	dy := randTensor(rng, 12, 64, 128)
	l := NewLayerNorm("ln", 128, false)
	var ctx Context
	b.Run("forward", func(b *testing.B) {
		for b.Loop() {
			l.Forward(&ctx, x)
		}
	})
	b.Run("backward", func(b *testing.B) {
		l.Forward(&ctx, x)
		for b.Loop() {
			l.Backward(&ctx, dy)
		}
	})
}
