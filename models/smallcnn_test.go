package models

import (
	"math"
	"slices"
	"testing"

	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/tensor"
)

func TestSmallCNNLayout(t *testing.T) {
	m, err := NewSmallCNN(DefaultSmallCNN, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name  string
		shape []int
	}{
		{"features.0.weight", []int{16, 1, 3, 3}}, {"features.0.bias", []int{16}},
		{"features.3.weight", []int{32, 16, 3, 3}}, {"features.3.bias", []int{32}},
		{"classifier.1.weight", []int{128, 32 * 64}}, {"classifier.1.bias", []int{128}},
		{"classifier.3.weight", []int{10, 128}}, {"classifier.3.bias", []int{10}},
	}
	ps := m.Params()
	if len(ps) != len(want) {
		t.Fatalf("%d parameters, want %d", len(ps), len(want))
	}
	n := 0
	for i, w := range want {
		if ps[i].Name != w.name || !slices.Equal(ps[i].Value.Shape, w.shape) {
			t.Errorf("parameter %d: %s %v, want %s %v", i, ps[i].Name, ps[i].Value.Shape, w.name, w.shape)
		}
		n += ps[i].Value.Len()
	}
	if n != 268362 {
		t.Errorf("%d parameters, want 268362", n)
	}
	y := m.Forward(&nn.Context{}, tensor.New(2, 1, 32, 32))
	if !slices.Equal(y.Shape, []int{2, 10}) {
		t.Errorf("output %v, want [2 10]", y.Shape)
	}
	rgb, _ := NewSmallCNN(SmallCNNConfig{Classes: 4, Width: 2}, 1)
	if got := rgb.Params()[0].Value.Shape; !slices.Equal(got, []int{2, 3, 3, 3}) {
		t.Errorf("InChannels 0: first kernel %v, want [2 3 3 3]", got)
	}
}

func TestSmallCNNInit(t *testing.T) {
	cfg := SmallCNNConfig{Classes: 10, InChannels: 1, Width: 4}
	a, _ := NewSmallCNN(cfg, 7)
	b, _ := NewSmallCNN(cfg, 7)
	c, _ := NewSmallCNN(cfg, 8)
	for i, p := range a.Params() {
		if !slices.Equal(p.Value.Data, b.Params()[i].Value.Data) {
			t.Fatalf("%s differs between two models with seed 7", p.Name)
		}
		if slices.Equal(p.Value.Data, c.Params()[i].Value.Data) {
			t.Fatalf("%s equal for seeds 7 and 8", p.Name)
		}
		// U(±1/√fan_in) for weights and biases alike.
		w := a.Params()[i&^1].Value
		bound := 1 / math.Sqrt(float64(w.Len()/w.Shape[0]))
		for _, v := range p.Value.Data {
			if math.Abs(float64(v)) > bound {
				t.Fatalf("%s: %g outside ±%g", p.Name, v, bound)
			}
		}
	}
}

func TestSmallCNNBadConfig(t *testing.T) {
	for _, cfg := range []SmallCNNConfig{
		{Classes: 0, InChannels: 1, Width: 1},
		{Classes: 10, InChannels: 1, Width: 0},
		{Classes: 10, InChannels: -1, Width: 1},
	} {
		if _, err := NewSmallCNN(cfg, 1); err == nil {
			t.Errorf("%+v: no error", cfg)
		}
	}
}
