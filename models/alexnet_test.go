package models

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/tensor"
)

func TestAlexNetLayout(t *testing.T) {
	m, err := NewAlexNet(AlexNetConfig{Classes: 100, WidthDiv: 16, Dropout: 0.5}, 1)
	if err != nil {
		t.Fatal(err)
	}
	// torchvision's names; widths 64,192,384,256,256,4096 divided by 16.
	want := []struct {
		name  string
		shape []int
	}{
		{"features.0.weight", []int{4, 3, 3, 3}}, {"features.0.bias", []int{4}},
		{"features.3.weight", []int{12, 4, 5, 5}}, {"features.3.bias", []int{12}},
		{"features.6.weight", []int{24, 12, 3, 3}}, {"features.6.bias", []int{24}},
		{"features.8.weight", []int{16, 24, 3, 3}}, {"features.8.bias", []int{16}},
		{"features.10.weight", []int{16, 16, 3, 3}}, {"features.10.bias", []int{16}},
		{"classifier.1.weight", []int{256, 16 * 36}}, {"classifier.1.bias", []int{256}},
		{"classifier.4.weight", []int{256, 256}}, {"classifier.4.bias", []int{256}},
		{"classifier.6.weight", []int{100, 256}}, {"classifier.6.bias", []int{100}},
	}
	ps := m.Params()
	if len(ps) != len(want) {
		t.Fatalf("%d parameters, want %d", len(ps), len(want))
	}
	for i, w := range want {
		if ps[i].Name != w.name || !slices.Equal(ps[i].Value.Shape, w.shape) {
			t.Errorf("parameter %d: %s %v, want %s %v", i, ps[i].Name, ps[i].Value.Shape, w.name, w.shape)
		}
	}
	y := m.Forward(&nn.Context{}, tensor.New(2, 3, 32, 32))
	if !slices.Equal(y.Shape, []int{2, 100}) {
		t.Errorf("output %v, want [2 100]", y.Shape)
	}
}

// The paper's model: torchvision's AlexNet has 61,100,840 parameters; a 3×3
// first kernel has 21,504 fewer and 100 classes 3,687,300 fewer.
func TestAlexNetParameterCount(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates the full model")
	}
	m, err := NewAlexNet(DefaultAlexNet, 1)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range m.Params() {
		n += p.Value.Len()
	}
	if n != 57392036 {
		t.Errorf("%d parameters, want 57392036", n)
	}
}

func TestAlexNetInit(t *testing.T) {
	a, _ := NewAlexNet(AlexNetConfig{Classes: 10, WidthDiv: 8, Dropout: 0.5}, 7)
	b, _ := NewAlexNet(AlexNetConfig{Classes: 10, WidthDiv: 8, Dropout: 0.5}, 7)
	c, _ := NewAlexNet(AlexNetConfig{Classes: 10, WidthDiv: 8, Dropout: 0.5}, 8)
	for i, p := range a.Params() {
		if !slices.Equal(p.Value.Data, b.Params()[i].Value.Data) {
			t.Fatalf("%s differs between two models with seed 7", p.Name)
		}
		if slices.Equal(p.Value.Data, c.Params()[i].Value.Data) {
			t.Fatalf("%s equal for seeds 7 and 8", p.Name)
		}
		// U(±1/√fan_in) for weights and biases alike.
		fanIn := a.Params()[i&^1].Value.Len() / a.Params()[i&^1].Value.Shape[0]
		bound := 1 / math.Sqrt(float64(fanIn))
		for _, v := range p.Value.Data {
			if float64(v) > bound || float64(v) < -bound {
				t.Fatalf("%s: %g outside ±%g", p.Name, v, bound)
			}
		}
	}
}

// TestAlexNetInChannels: 0 and 3 input channels build the same model with
// the same weights (the paper's), and 1 changes only the first kernel.
func TestAlexNetInChannels(t *testing.T) {
	zero, _ := NewAlexNet(AlexNetConfig{Classes: 10, WidthDiv: 16, Dropout: 0.5}, 3)
	three, _ := NewAlexNet(AlexNetConfig{Classes: 10, WidthDiv: 16, Dropout: 0.5, InChannels: 3}, 3)
	grey, err := NewAlexNet(AlexNetConfig{Classes: 10, WidthDiv: 16, Dropout: 0.5, InChannels: 1}, 3)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range zero.Params() {
		q, g := three.Params()[i], grey.Params()[i]
		if p.Name != q.Name || !slices.Equal(p.Value.Shape, q.Value.Shape) || !slices.Equal(p.Value.Data, q.Value.Data) {
			t.Fatalf("%s differs between InChannels 0 and 3", p.Name)
		}
		want := slices.Clone(p.Value.Shape)
		if i == 0 {
			want[1] = 1
		}
		if g.Name != p.Name || !slices.Equal(g.Value.Shape, want) {
			t.Errorf("InChannels 1: %s %v, want %v", g.Name, g.Value.Shape, want)
		}
	}
	if y := grey.Forward(&nn.Context{}, tensor.New(2, 1, 32, 32)); !slices.Equal(y.Shape, []int{2, 10}) {
		t.Errorf("grey output %v, want [2 10]", y.Shape)
	}
}

func TestAlexNetBadConfig(t *testing.T) {
	for _, cfg := range []AlexNetConfig{
		{Classes: 10, WidthDiv: 1, InChannels: -3},
		{Classes: 0, WidthDiv: 1},
		{Classes: 10, WidthDiv: 0},
		{Classes: 10, WidthDiv: 1, Dropout: 1},
		{Classes: 10, WidthDiv: 1, Dropout: -0.1},
	} {
		if _, err := NewAlexNet(cfg, 1); err == nil {
			t.Errorf("%+v: no error", cfg)
		}
	}
}

// Dropout is active in training and off in evaluation.
func TestAlexNetDropout(t *testing.T) {
	m, _ := NewAlexNet(AlexNetConfig{Classes: 10, WidthDiv: 16, Dropout: 0.5}, 1)
	rng := rand.New(rand.NewPCG(1, 1))
	x := tensor.New(2, 3, 32, 32)
	for i := range x.Data {
		x.Data[i] = float32(rng.NormFloat64())
	}
	eval1 := slices.Clone(m.Forward(&nn.Context{}, x).Data)
	eval2 := slices.Clone(m.Forward(&nn.Context{}, x).Data)
	train := m.Forward(&nn.Context{Train: true, Rand: rand.New(rand.NewPCG(2, 2))}, x).Data
	if !slices.Equal(eval1, eval2) || slices.Equal(eval1, train) {
		t.Error("evaluation must be deterministic and differ from training")
	}
}

// BenchmarkAlexNetStep times forward, loss and backward of AlexNet-CIFAR at
// full width on a batch of 64 images, plain and per-sample (benchStep).
// Dropout is off: the step's work is the same either way.
func BenchmarkAlexNetStep(b *testing.B) {
	const batch = 64
	m, err := NewAlexNet(DefaultAlexNet, 1)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	x := tensor.New(batch, 3, 32, 32)
	for i := range x.Data {
		x.Data[i] = float32(rng.NormFloat64())
	}
	y := make([]int32, batch)
	for i := range y {
		y[i] = int32(rng.IntN(DefaultAlexNet.Classes))
	}
	benchStep(b, m, x, y, "images", batch)
}
