package models

import (
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/setting"
	"github.com/psclip/psclip/tensor"
)

// An adapted GPT starts as the GPT it adapts (bit for bit), trains only its
// adapters, lists them after their layers' parameters, draws them from its
// seed alone, and merges into a GPT with its logits that GPT-2's layout
// exports and reads back.
func TestGPTLoRA(t *testing.T) {
	m, err := ReadGPT2(tinyGPT2)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	x := tensor.New(2, 8)
	for i := range x.Data {
		x.Data[i] = float32(rng.IntN(m.Config().VocabSize))
	}
	base := slices.Clone(m.Forward(&nn.Context{}, x).Data)
	c := LoRAConfig{Rank: 4, Alpha: 8, Targets: []string{"attn", "proj", "fc", "mlp-proj"}}
	if err := m.AdaptLoRA(c, 7); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.Forward(&nn.Context{}, x).Data, base) {
		t.Fatal("a new adaptation changes the logits")
	}
	var trained []string
	for _, p := range nn.Trainable(m.Params()) {
		trained = append(trained, p.Name)
	}
	if len(trained) != 2*4*m.Config().NLayer || trained[0] != "transformer.h.0.attn.c_attn.lora_A.weight" ||
		trained[3] != "transformer.h.0.attn.c_proj.lora_B.weight" || trained[len(trained)-1] != "transformer.h.1.mlp.c_proj.lora_B.weight" {
		t.Fatalf("trainable parameters %v", trained)
	}
	if i := slices.IndexFunc(m.Params(), func(p *nn.Param) bool { return p.Name == trained[0] }); m.Params()[i-1].Name != "transformer.h.0.attn.c_attn.bias" {
		t.Errorf("the first adapter follows %s, not c_attn's bias", m.Params()[i-1].Name)
	}
	if err := m.AdaptLoRA(c, 7); err == nil {
		t.Error("a second adaptation: no error")
	}
	if err := WriteGPT2(t.TempDir(), m); err == nil {
		t.Error("WriteGPT2 of an adapted GPT: no error")
	}
	// The adapters depend on the seed alone, not on what the program
	// built before.
	again, err := ReadGPT2(tinyGPT2)
	if err != nil {
		t.Fatal(err)
	}
	nn.NewLinear("draws from the default source", 5, 5, false)
	if err := again.AdaptLoRA(c, 7); err != nil {
		t.Fatal(err)
	}
	for i, p := range again.Params() {
		if !slices.Equal(p.Value.Data, m.Params()[i].Value.Data) {
			t.Fatalf("%s differs between two adaptations with one seed", p.Name)
		}
	}
	// Trained adapters: the merged GPT has the adapted logits.
	for _, p := range nn.Trainable(m.Params()) {
		nn.Normal(rng, p.Value, 0.2)
	}
	want := slices.Clone(m.Forward(&nn.Context{}, x).Data)
	if maxDiff(want, base) < 0.1 {
		t.Fatal("trained adapters hardly change the logits: the test would prove nothing")
	}
	m.MergeLoRA()
	if m.Adapted() || len(m.Params()) != len(again.Params())-len(trained) {
		t.Fatalf("after MergeLoRA: adapted %v, %d parameters", m.Adapted(), len(m.Params()))
	}
	dir := filepath.Join(t.TempDir(), "merged")
	if err := WriteGPT2(dir, m); err != nil {
		t.Fatal(err)
	}
	back, err := ReadGPT2(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d := maxDiff(back.Forward(&nn.Context{}, x).Data, want); d > 1e-5 {
		t.Errorf("the merged GPT's logits differ from the adapted GPT's by %g", d)
	}
}

func maxDiff(a, b []float32) float64 {
	d := 0.0
	for i := range a {
		d = max(d, math.Abs(float64(a[i]-b[i])))
	}
	return d
}

// A bad adaptation is refused with a *setting.Error naming the field, and
// leaves the GPT as it was.
func TestGPTLoRARefuses(t *testing.T) {
	for _, tc := range []struct {
		c     LoRAConfig
		field string
	}{
		{LoRAConfig{Rank: 0, Alpha: 1, Targets: []string{"attn"}}, "Rank"},
		{LoRAConfig{Rank: 17, Alpha: 1, Targets: []string{"attn"}}, "Rank"},
		{LoRAConfig{Rank: 2, Alpha: 0, Targets: []string{"attn"}}, "Alpha"},
		{LoRAConfig{Rank: 2, Alpha: math.Inf(1), Targets: []string{"attn"}}, "Alpha"},
		{LoRAConfig{Rank: 2, Alpha: 1}, "Targets"},
		{LoRAConfig{Rank: 2, Alpha: 1, Targets: []string{"q"}}, "Targets"},
		{LoRAConfig{Rank: 2, Alpha: 1, Targets: []string{"fc", "fc"}}, "Targets"},
	} {
		m, err := NewGPT(smallGPT, 1)
		if err != nil {
			t.Fatal(err)
		}
		err = m.AdaptLoRA(tc.c, 1)
		var se *setting.Error
		if !errors.As(err, &se) || se.Field != tc.field {
			t.Errorf("%+v: error %v, want a *setting.Error for %s", tc.c, err, tc.field)
		}
		if m.Adapted() || len(nn.Trainable(m.Params())) != len(m.Params()) || strings.Contains(m.Params()[len(m.Params())-1].Name, "lora") {
			t.Errorf("%+v: a refused adaptation changed the GPT", tc.c)
		}
	}
}
