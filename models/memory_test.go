package models

import (
	"testing"

	"github.com/psclip/psclip/nn"
)

// TestTrainingBytesCountsTheParameters checks the parameter part of the
// estimates against the models themselves: with no batch and no optimizer
// state, TrainingBytes is 8 bytes (value and gradient in float32) per
// parameter of the built model.
func TestTrainingBytesCountsTheParameters(t *testing.T) {
	count := func(ps []*nn.Param) float64 {
		n := 0
		for _, p := range ps {
			n += p.Value.Len()
		}
		return float64(n)
	}
	for _, c := range []AlexNetConfig{{Classes: 10, WidthDiv: 16}, {Classes: 100, WidthDiv: 1000}, {Classes: 10, WidthDiv: 8, InChannels: 1}} {
		m, err := NewAlexNet(c, 1)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := c.TrainingBytes(0, 0), 8*count(m.Params()); got != want {
			t.Errorf("%+v: %v bytes, want %v", c, got, want)
		}
	}
	for _, c := range []SmallCNNConfig{DefaultSmallCNN, {Classes: 100, Width: 3}} {
		m, err := NewSmallCNN(c, 1)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := c.TrainingBytes(0, 0), 8*count(m.Params()); got != want {
			t.Errorf("%+v: %v bytes, want %v", c, got, want)
		}
	}
	for _, c := range []TanhCNNConfig{DefaultTanhCNN, {Classes: 3, Side: 32}} {
		m, err := NewTanhCNN(c, 1)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := c.TrainingBytes(0, 0), 8*count(m.Params()); got != want {
			t.Errorf("%+v: %v bytes, want %v", c, got, want)
		}
	}
	c := GPTConfig{NLayer: 2, NHead: 2, NEmbd: 16, BlockSize: 8, VocabSize: 30}
	g, err := NewGPT(c, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.TrainingBytes(0, 0), 8*count(g.Params()); got != want {
		t.Errorf("GPT: %v bytes, want %v", got, want)
	}
	// A batch and optimizer state only add.
	if c.TrainingBytes(4, 2) <= c.TrainingBytes(0, 0) {
		t.Error("a batch and AdamW state add nothing")
	}
	// Absurd sizes do not overflow.
	huge := GPTConfig{NLayer: 100000000, NHead: 4, NEmbd: 128, BlockSize: 64, VocabSize: 256}
	if b := huge.TrainingBytes(12, 2); !(b > 1e15) {
		t.Errorf("10⁸ layers: %v bytes", b)
	}
}
