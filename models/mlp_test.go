package models

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/nn/nntest"
)

func TestMLP(t *testing.T) {
	m, err := NewMLP(MLPConfig{In: 5, Hidden: []int{8, 4}, Out: 3, Tanh: true}, 1)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	n := 0
	for _, p := range m.Params() {
		names = append(names, p.Name)
		n += p.Value.Len()
	}
	// (5·8 + 8) + (8·4 + 4) + (4·3 + 3) = 48 + 36 + 15
	if n != 99 || !slices.Equal(names, []string{"0.weight", "0.bias", "2.weight", "2.bias", "4.weight", "4.bias"}) {
		t.Errorf("%d parameters %v", n, names)
	}
	x := nntest.RandTensor(rand.New(rand.NewPCG(1, 1)), 6, 5)
	nntest.CheckPerSample(t, m, x, []int32{0, 1, 2, 0, 1, 2}, nn.CrossEntropy, nntest.MedianClip)
	if lin, err := NewMLP(MLPConfig{In: 5, Out: 1}, 1); err != nil || len(lin) != 1 {
		t.Errorf("linear model: %d layers, %v", len(lin), err)
	}
	for _, c := range []MLPConfig{{In: 0, Out: 1}, {In: 2, Out: 0}, {In: 2, Hidden: []int{3, 0}, Out: 1}} {
		if _, err := NewMLP(c, 1); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
}
