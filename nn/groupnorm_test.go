package nn

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// GroupNorm's output against its definition in float64, for images
// [B, C, H, W] and vectors [B, C].
func TestGroupNormForward(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		groups int
		shape  []int
		affine bool
	}{{3, []int{2, 6, 3, 4}, true}, {1, []int{2, 4, 5}, true}, {6, []int{3, 6}, true}, {3, []int{2, 6, 3, 4}, false}} {
		c := tc.shape[1]
		l, err := NewGroupNorm("gn", tc.groups, c, tc.affine)
		if err != nil {
			t.Fatal(err)
		}
		randomize(rng, l, 1)
		weight, bias := func(int) float64 { return 1 }, func(int) float64 { return 0 }
		if tc.affine {
			weight = func(ch int) float64 { return float64(l.Weight.Value.Data[ch]) }
			bias = func(ch int) float64 { return float64(l.Bias.Value.Data[ch]) }
		}
		x := randTensor(rng, tc.shape...)
		y := l.Forward(&Context{}, x)
		per := x.Len() / tc.shape[0]
		n := per / tc.groups
		for i := range tc.shape[0] {
			for g := range tc.groups {
				vals := x.Data[i*per+g*n : i*per+(g+1)*n]
				var mean, v float64
				for _, e := range vals {
					mean += float64(e) / float64(n)
				}
				for _, e := range vals {
					v += (float64(e) - mean) * (float64(e) - mean) / float64(n)
				}
				for k, e := range vals {
					ch := (g*n + k) / (per / c)
					want := (float64(e)-mean)/math.Sqrt(v+1e-5)*weight(ch) + bias(ch)
					if got := float64(y.Data[i*per+g*n+k]); math.Abs(got-want) > 1e-5*(1+math.Abs(want)) {
						t.Fatalf("%v, groups %d: sample %d group %d value %d: %v, want %v", tc.shape, tc.groups, i, g, k, got, want)
					}
				}
			}
		}
	}
}

func TestGroupNormGrad(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 3))
	for _, tc := range []struct {
		groups int
		shape  []int
		affine bool
	}{{3, []int{2, 6, 2, 3}, true}, {2, []int{3, 8}, true}, {3, []int{2, 6, 2, 3}, false}} {
		l, err := NewGroupNorm("gn", tc.groups, tc.shape[1], tc.affine)
		if err != nil {
			t.Fatal(err)
		}
		randomize(rng, l, 1)
		checkGrad(t, l, randTensor(rng, tc.shape...), gradOpt{})
	}
}

// The per-sample rule against the brute force, in a small ScatterNet-like
// head: GroupNorm over [B, C, H, W] features, then a linear classifier.
func TestGroupNormPerSample(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 5))
	for _, affine := range []bool{true, false} {
		gn, err := NewGroupNorm("gn", 3, 6, affine)
		if err != nil {
			t.Fatal(err)
		}
		randomize(rng, gn, 1)
		conv := NewConv2d("conv", 2, 6, 3, 1, 1, true)
		randomize(rng, conv, 0.5)
		fc := NewLinear("fc", 6*2*2, 3, true)
		randomize(rng, fc, 0.5)
		checkPerSample(t, Sequential{conv, gn, &Flatten{}, fc}, randTensor(rng, 5, 2, 2, 2), ids(5), squareLoss(randTensor(rng, 5, 3)), medianClip)
	}
}

func TestGroupNormRefuses(t *testing.T) {
	for _, tc := range []struct{ groups, c int }{{0, 4}, {3, 4}, {2, 0}, {-1, 4}} {
		if _, err := NewGroupNorm("gn", tc.groups, tc.c, true); err == nil {
			t.Errorf("%d groups of %d channels: no error", tc.groups, tc.c)
		}
	}
	l, err := NewGroupNorm("gn", 2, 4, true)
	if err != nil {
		t.Fatal(err)
	}
	var ie *InputError
	for _, in := range [][]int{{4}, {2, 3, 5}} {
		if _, err := l.OutShape(in); !errors.As(err, &ie) {
			t.Errorf("input %v: %v, want *InputError", in, err)
		}
	}
	if p := l.Params(); len(p) != 2 || p[0].Name != "gn.weight" || p[1].Name != "gn.bias" || p[0].Value.Data[0] != 1 || p[1].Value.Data[0] != 0 {
		t.Errorf("params %v", p)
	}
	if l, err := NewGroupNorm("gn", 2, 4, false); err != nil || len(l.Params()) != 0 {
		t.Errorf("without affine parameters: %v, %v", l.Params(), err)
	}
}
