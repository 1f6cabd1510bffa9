package models

import (
	"math"
	"slices"
	"testing"

	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/tensor"
)

// TestTanhCNNLayout checks the parameters' names and shapes, their count
// (1,040 + 8,224 + 16,416 + 330 = 26,010, the paper's model) and the
// output shape for both input sides.
func TestTanhCNNLayout(t *testing.T) {
	want := []struct {
		name  string
		shape []int
	}{
		{"0.weight", []int{16, 1, 8, 8}}, {"0.bias", []int{16}},
		{"3.weight", []int{32, 16, 4, 4}}, {"3.bias", []int{32}},
		{"7.weight", []int{32, 512}}, {"7.bias", []int{32}},
		{"9.weight", []int{10, 32}}, {"9.bias", []int{10}},
	}
	for _, side := range []int{28, 32} {
		m, err := NewTanhCNN(TanhCNNConfig{Classes: 10, Side: side}, 1)
		if err != nil {
			t.Fatal(err)
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
		if n != 26010 {
			t.Errorf("%d parameters, want 26010", n)
		}
		y := m.Forward(&nn.Context{}, tensor.New(3, 1, side, side))
		if !slices.Equal(y.Shape, []int{3, 10}) {
			t.Errorf("side %d: output %v, want [3 10]", side, y.Shape)
		}
	}
}

// TestTanhCNNInit checks PyTorch's default initialisation: U(±1/√fan_in)
// for weights (kaiming_uniform with a = √5) and biases alike, the same
// draws for the same seed, other draws for another.
func TestTanhCNNInit(t *testing.T) {
	a, _ := NewTanhCNN(DefaultTanhCNN, 7)
	b, _ := NewTanhCNN(DefaultTanhCNN, 7)
	c, _ := NewTanhCNN(DefaultTanhCNN, 8)
	for i, p := range a.Params() {
		if !slices.Equal(p.Value.Data, b.Params()[i].Value.Data) {
			t.Fatalf("%s differs between two models with seed 7", p.Name)
		}
		if slices.Equal(p.Value.Data, c.Params()[i].Value.Data) {
			t.Fatalf("%s equal for seeds 7 and 8", p.Name)
		}
		w := a.Params()[i&^1].Value
		bound := 1 / math.Sqrt(float64(w.Len()/w.Shape[0]))
		hi := 0.0
		for _, v := range p.Value.Data {
			hi = max(hi, math.Abs(float64(v)))
		}
		// The largest of n uniform draws is near the bound.
		if hi > bound || hi < bound*(1-10/float64(p.Value.Len())) {
			t.Errorf("%s: largest |value| %g, want just under %g", p.Name, hi, bound)
		}
	}
}

// TestTanhCNNCanvas checks that the 32×32 model on a 28×28 image centred
// on a zero canvas computes what the 28×28 model computes on the image
// itself: the canvas's border is the first convolution's padding.
func TestTanhCNNCanvas(t *testing.T) {
	small, _ := NewTanhCNN(TanhCNNConfig{Classes: 10, Side: 28}, 5)
	big, _ := NewTanhCNN(TanhCNNConfig{Classes: 10, Side: 32}, 5)
	x28, x32 := tensor.New(2, 1, 28, 28), tensor.New(2, 1, 32, 32)
	for i := range x28.Data {
		v := float32(i*7919%256) / 255
		b, r, c := i/784, i%784/28, i%28
		x28.Data[i], x32.Data[b*1024+(r+2)*32+c+2] = v, v
	}
	y28 := small.Forward(&nn.Context{}, x28)
	y32 := big.Forward(&nn.Context{}, x32)
	for i := range y28.Data {
		if d := math.Abs(float64(y28.Data[i] - y32.Data[i])); d > 1e-6 {
			t.Errorf("logit %d: %v on 28×28, %v on the canvas", i, y28.Data[i], y32.Data[i])
		}
	}
}

func TestTanhCNNBadConfig(t *testing.T) {
	for _, cfg := range []TanhCNNConfig{{Classes: 0}, {Classes: 10, Side: 30}, {Classes: 10, Side: -1}} {
		if _, err := NewTanhCNN(cfg, 1); err == nil {
			t.Errorf("%+v: no error", cfg)
		}
	}
}
