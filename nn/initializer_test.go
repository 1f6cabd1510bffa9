package nn

import (
	"math"
	"slices"
	"testing"

	"github.com/psclip/psclip/tensor"
)

// Constructors start from PyTorch's default initialisation: Linear and
// Conv2d weights and biases U(-1/√fan_in, 1/√fan_in), not zero.
func TestConstructorsInitialise(t *testing.T) {
	for _, tc := range []struct {
		name  string
		l     Layer
		bound float64
	}{
		{"linear", NewLinear("l", 20, 5, true), 1 / math.Sqrt(20)},
		{"conv", NewConv2d("c", 3, 4, 3, 1, 1, true), 1 / math.Sqrt(27)},
	} {
		for _, p := range tc.l.Params() {
			var zeros int
			var sq float64
			for _, v := range p.Value.Data {
				if math.Abs(float64(v)) > tc.bound {
					t.Fatalf("%s: %s has %v outside ±%v", tc.name, p.Name, v, tc.bound)
				}
				if v == 0 {
					zeros++
				}
				sq += float64(v) * float64(v)
			}
			// U(-b, b) has variance b²/3.
			if zeros > 0 || sq/float64(p.Value.Len()) < tc.bound*tc.bound/3/4 {
				t.Errorf("%s: %s is not U(±%v): %d zeros, mean square %v", tc.name, p.Name, tc.bound, zeros, sq/float64(p.Value.Len()))
			}
		}
	}
	e := NewEmbedding("e", 100, 10)
	var sq float64
	for _, v := range e.Weight.Value.Data {
		sq += float64(v) * float64(v)
	}
	if ms := sq / 1000; ms < 0.8 || ms > 1.2 {
		t.Errorf("embedding: mean square %v, want about 1 (N(0,1))", ms)
	}
}

// Init re-draws a whole model from a seed: the same seed gives the same
// weights, another seed others, and a layer with parameters that cannot be
// initialised is refused before anything changes.
func TestInit(t *testing.T) {
	model := func() Sequential {
		return Sequential{NewConv2d("0", 1, 2, 3, 1, 0, true), &ReLU{}, &Flatten{},
			&Residual{F: Sequential{NewLayerNorm("ln", 8, true), NewLinear("r", 8, 8, true)}}, NewLinear("out", 8, 3, false)}
	}
	values := func(m Layer) []float32 {
		var v []float32
		for _, p := range m.Params() {
			v = append(v, p.Value.Data...)
		}
		return v
	}
	a, b, c := model(), model(), model()
	if slices.Equal(values(a), values(b)) {
		t.Fatal("two constructions drew the same weights from the default source")
	}
	for _, m := range []Sequential{a, b} {
		if err := Init(m, 42); err != nil {
			t.Fatal(err)
		}
	}
	if err := Init(c, 43); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(values(a), values(b)) {
		t.Error("the same seed gave different weights")
	}
	if slices.Equal(values(a), values(c)) {
		t.Error("different seeds gave the same weights")
	}
	before := values(a)
	bad := Sequential{a, &noInit{NewParam("w", 2)}}
	if err := Init(bad, 1); err == nil {
		t.Error("Init of a layer with parameters and no Init method succeeded")
	}
	if !slices.Equal(values(a), before) {
		t.Error("a refused Init changed weights")
	}
}

// noInit is a layer with a parameter and no Init method.
type noInit struct{ w *Param }

func (l *noInit) Forward(_ *Context, x *tensor.Tensor) *tensor.Tensor  { return x }
func (l *noInit) Backward(_ *Context, d *tensor.Tensor) *tensor.Tensor { return d }
func (l *noInit) Params() []*Param                                     { return []*Param{l.w} }
