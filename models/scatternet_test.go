package models

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/nn/nntest"
)

// The ScatterNet heads' shapes and parameter counts, by hand: linear
// 81·49·10 + 10 = 39,700; CNN (81·9·16 + 16) + (16·9·32 + 32) + (512·32 +
// 32) + (32·10 + 10) = 11,680 + 4,640 + 16,416 + 330 = 33,066.
func TestScatterNetShapes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		build  func(ScatterNetConfig, uint64) (nn.Sequential, error)
		params int
		names  []string
	}{
		{"linear", NewScatterLinear, 39700, []string{"fc.weight", "fc.bias"}},
		{"cnn", NewScatterCNN, 33066, []string{"features.0.weight", "features.0.bias", "features.2.weight", "features.2.bias",
			"classifier.0.weight", "classifier.0.bias", "classifier.2.weight", "classifier.2.bias"}},
	} {
		m, err := tc.build(DefaultScatterNet, 1)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		var names []string
		for _, p := range m.Params() {
			n += p.Value.Len()
			names = append(names, p.Name)
		}
		if n != tc.params || !slices.Equal(names, tc.names) {
			t.Errorf("%s: %d parameters %v, want %d %v", tc.name, n, names, tc.params, tc.names)
		}
		x := nntest.RandTensor(rand.New(rand.NewPCG(1, 1)), 4, 81, 7, 7)
		if out := m.Forward(&nn.Context{}, x); !slices.Equal(out.Shape, []int{4, 10}) {
			t.Errorf("%s: output %v, want [4 10]", tc.name, out.Shape)
		}
	}
	for _, c := range []ScatterNetConfig{{81, 7, 26, 10}, {81, 7, 27, 0}, {0, 7, 27, 10}} {
		if _, err := NewScatterLinear(c, 1); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
}

// Both heads pass the layer checks: per-sample norms and the clipped
// gradient against the brute force, on features of a small shape.
func TestScatterNetPerSample(t *testing.T) {
	cfg := ScatterNetConfig{Channels: 6, Side: 3, Groups: 2, Classes: 3}
	rng := rand.New(rand.NewPCG(2, 2))
	for _, build := range []func(ScatterNetConfig, uint64) (nn.Sequential, error){NewScatterLinear, NewScatterCNN} {
		m, err := build(cfg, 3)
		if err != nil {
			t.Fatal(err)
		}
		x := nntest.RandTensor(rng, 4, 6, 3, 3)
		nntest.CheckPerSample(t, m, x, []int32{0, 2, 1, 0}, nn.CrossEntropy, nntest.MedianClip)
	}
}
