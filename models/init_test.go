package models

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/psclip/psclip/nn"
)

func paramHash(ps []*nn.Param) string {
	h := sha256.New()
	for _, p := range ps {
		h.Write([]byte(p.Name))
		for _, v := range p.Value.Data {
			binary.Write(h, binary.LittleEndian, math.Float32bits(v))
		}
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// The models' initialisation is bit-identical to what it was before nn's
// constructors drew default weights of their own (hashes from the earlier
// code), so checkpoints and the nanoGPT replay are unchanged; and nn.Init
// re-draws a GPT with the GPT's own scheme.
func TestInitUnchanged(t *testing.T) {
	g, err := NewGPT(GPTConfig{NLayer: 2, NHead: 2, NEmbd: 16, BlockSize: 8, VocabSize: 11, Bias: true}, 7)
	if err != nil {
		t.Fatal(err)
	}
	g2, _ := NewGPT(GPTConfig{NLayer: 2, NHead: 2, NEmbd: 16, BlockSize: 8, VocabSize: 11}, 7)
	a, err := NewAlexNet(AlexNetConfig{Classes: 10, WidthDiv: 16}, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		ps   []*nn.Param
		want string
	}{
		{"gpt with biases", g.Params(), "638d44c38cc5bddf4c2107418c5a715b718932b1f446320c968d407163af7f6e"},
		{"gpt", g2.Params(), "9968351e1ec7517c11e2b392e4581086b991cfa2ca23625dbc25ac71f0df8200"},
		{"alexnet", a.Params(), "5e1f7763249b705fca64e0eda39760d7d6c5ff1ea153ab140a7c38a41a0dd169"},
	} {
		if got := paramHash(tc.ps); got != tc.want {
			t.Errorf("%s: weights hash to %s, want %s", tc.name, got, tc.want)
		}
	}
	if err := nn.Init(g, 1); err != nil {
		t.Fatal(err)
	}
	for _, p := range g.Params() {
		if p.Name == "transformer.h.0.attn.c_attn.bias" && p.Value.Data[0] != 0 {
			t.Errorf("nn.Init on a GPT: bias %v, want nanoGPT's 0", p.Value.Data[0])
		}
		if p.Name == "transformer.ln_f.weight" && p.Value.Data[0] != 1 {
			t.Errorf("nn.Init on a GPT: LayerNorm weight %v, want 1", p.Value.Data[0])
		}
	}
}
