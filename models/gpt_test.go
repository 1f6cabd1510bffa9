package models

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/setting"
	"github.com/psclip/psclip/tensor"
)

var smallGPT = GPTConfig{NLayer: 2, NHead: 2, NEmbd: 16, BlockSize: 8, VocabSize: 11}

// NewGPT refuses a bad configuration with a *setting.Error naming the field.
func TestGPTConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(*GPTConfig)
		field string
	}{
		{"ok", func(*GPTConfig) {}, ""},
		{"bias", func(c *GPTConfig) { c.Bias = true }, ""},
		{"layers", func(c *GPTConfig) { c.NLayer = 0 }, "NLayer"},
		{"heads", func(c *GPTConfig) { c.NHead = -1 }, "NHead"},
		{"width", func(c *GPTConfig) { c.NEmbd = 0 }, "NEmbd"},
		{"divisible", func(c *GPTConfig) { c.NHead = 3 }, "NEmbd"},
		{"block", func(c *GPTConfig) { c.BlockSize = 0 }, "BlockSize"},
		{"vocab", func(c *GPTConfig) { c.VocabSize = 0 }, "VocabSize"},
		{"vocab-float32", func(c *GPTConfig) { c.VocabSize = 1<<24 + 1 }, "VocabSize"},
		{"dropout", func(c *GPTConfig) { c.Dropout = 1 }, "Dropout"},
		{"dropout-nan", func(c *GPTConfig) { c.Dropout = math.NaN() }, "Dropout"},
	} {
		c := smallGPT
		tc.edit(&c)
		_, err := NewGPT(c, 1)
		var se *setting.Error
		if tc.field == "" && err != nil || tc.field != "" && (!errors.As(err, &se) || se.Field != tc.field) {
			t.Errorf("%s: error %v, want a *setting.Error for %q", tc.name, err, tc.field)
		}
	}
}

// The parameters are nanoGPT's, by name, shape and order.
func TestGPTParams(t *testing.T) {
	for _, bias := range []bool{false, true} {
		c := smallGPT
		c.Bias = bias
		m, err := NewGPT(c, 1)
		if err != nil {
			t.Fatal(err)
		}
		d, v := c.NEmbd, c.VocabSize
		want := []string{fmt.Sprint("transformer.wte.weight", []int{v, d}), fmt.Sprint("transformer.wpe.weight", []int{c.BlockSize, d})}
		add := func(name string, shape ...int) { want = append(want, fmt.Sprint(name, shape)) }
		addLayer := func(name string, wshape []int, bshape int) {
			add(name+".weight", wshape...)
			if bias {
				add(name+".bias", bshape)
			}
		}
		for i := range c.NLayer {
			h := fmt.Sprintf("transformer.h.%d.", i)
			addLayer(h+"ln_1", []int{d}, d)
			addLayer(h+"attn.c_attn", []int{3 * d, d}, 3*d)
			addLayer(h+"attn.c_proj", []int{d, d}, d)
			addLayer(h+"ln_2", []int{d}, d)
			addLayer(h+"mlp.c_fc", []int{4 * d, d}, 4*d)
			addLayer(h+"mlp.c_proj", []int{d, 4 * d}, d)
		}
		addLayer("transformer.ln_f", []int{d}, d)
		var got []string
		total := 0
		for _, p := range m.Params() {
			got = append(got, fmt.Sprint(p.Name, p.Value.Shape))
			total += p.Value.Len()
		}
		if !slices.Equal(got, want) {
			t.Errorf("bias=%v: params\n%v\nwant\n%v", bias, got, want)
		}
		if n := c.NumParams(false); n != total {
			t.Errorf("NumParams(false) = %d, want %d", n, total)
		}
		if n := c.NumParams(true); n != total-c.BlockSize*d {
			t.Errorf("NumParams(true) = %d, want %d", n, total-c.BlockSize*d)
		}
	}
}

// GPT-2 124M (vocab 50257, biases): nanoGPT prints "number of parameters:
// 123.65M" (wpe excluded, the tied wte counted once); with wpe it is the
// familiar 124,439,808.
func TestGPTNumParamsGPT2(t *testing.T) {
	gpt2 := GPTConfig{NLayer: 12, NHead: 12, NEmbd: 768, BlockSize: 1024, VocabSize: 50257, Bias: true}
	if n := gpt2.NumParams(true); n != 123_653_376 {
		t.Errorf("GPT-2: NumParams(true) = %d, want 123653376", n)
	}
	if n := gpt2.NumParams(false); n != 124_439_808 {
		t.Errorf("GPT-2: NumParams(false) = %d, want 124439808", n)
	}
}

// GPT-2 initialisation: N(0, 0.02²), c_proj N(0, 0.02²/(2·n_layer)),
// LayerNorm weight 1, bias 0; deterministic in the seed.
func TestGPTInit(t *testing.T) {
	c := GPTConfig{NLayer: 3, NHead: 2, NEmbd: 64, BlockSize: 32, VocabSize: 300, Bias: true}
	m, err := NewGPT(c, 7)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range m.Params() {
		x := p.Value.Data
		switch {
		case strings.HasSuffix(p.Name, ".bias"):
			if slices.ContainsFunc(x, func(v float32) bool { return v != 0 }) {
				t.Errorf("%s is not zero", p.Name)
			}
		case strings.Contains(p.Name, "ln_"):
			if slices.ContainsFunc(x, func(v float32) bool { return v != 1 }) {
				t.Errorf("%s is not one", p.Name)
			}
		default:
			want := 0.02
			if strings.HasSuffix(p.Name, "c_proj.weight") {
				want /= math.Sqrt(2 * 3)
			}
			var s, ss float64
			for _, v := range x {
				s += float64(v)
				ss += float64(v) * float64(v)
			}
			n := float64(len(x))
			mean, std := s/n, math.Sqrt(ss/n)
			// 4.5 standard errors: a wrong std (or a missing c_proj
			// scaling, a factor √6 here) fails.
			if math.Abs(mean) > 4.5*want/math.Sqrt(n) || math.Abs(std-want) > 4.5*want/math.Sqrt(2*n) {
				t.Errorf("%s: mean %.3g, std %.5g, want 0 and %.5g", p.Name, mean, std, want)
			}
		}
	}
	m2, _ := NewGPT(c, 7)
	m3, _ := NewGPT(c, 8)
	if !slices.Equal(m.Params()[0].Value.Data, m2.Params()[0].Value.Data) {
		t.Error("the same seed gives different weights")
	}
	if slices.Equal(m.Params()[0].Value.Data, m3.Params()[0].Value.Data) {
		t.Error("different seeds give the same weights")
	}
}

func TestGPTCheckInput(t *testing.T) {
	m, err := NewGPT(smallGPT, 1)
	if err != nil {
		t.Fatal(err)
	}
	long := tensor.New(1, smallGPT.BlockSize+1)
	for _, tc := range []struct {
		name string
		x    *tensor.Tensor
		err  string
	}{
		{"ok", tensor.From([]float32{0, 10, 3, 3}, 2, 2), ""},
		{"vocab", tensor.From([]float32{0, 11}, 1, 2), "[0, 11)"},
		{"fraction", tensor.From([]float32{1.5}, 1, 1), "not an id"},
		{"long", long, "length 1..8"},
		{"empty", tensor.New(0, 3), "at least one"},
		{"shape", tensor.New(2, 2, 2), "[batch, time]"},
	} {
		err := m.CheckInput(tc.x)
		if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
		}
	}
}

// The logits have the documented shape and, being causal, the logits at
// position t do not depend on later tokens.
func TestGPTForwardCausal(t *testing.T) {
	m, err := NewGPT(smallGPT, 3)
	if err != nil {
		t.Fatal(err)
	}
	x := tensor.From([]float32{1, 4, 2, 7, 0, 9}, 1, 6)
	y := m.Forward(&nn.Context{}, x).Clone()
	if want := []int{1, 6, 11}; !slices.Equal(y.Shape, want) {
		t.Fatalf("logits %v, want %v", y.Shape, want)
	}
	x.Data[4] = 5
	y2 := m.Forward(&nn.Context{}, x)
	if !slices.Equal(y.Data[:4*11], y2.Data[:4*11]) {
		t.Error("changing token 4 changed the logits of positions 0..3")
	}
	if slices.Equal(y.Data[4*11:], y2.Data[4*11:]) {
		t.Error("changing token 4 left the logits of positions 4..5 unchanged")
	}
}

// ExactGELU swaps the MLP's activation and nothing else: the same seed gives
// the same weights and logits that differ by about the two GELUs' gap.
func TestGPTExactGELU(t *testing.T) {
	x := tensor.From([]float32{1, 4, 2, 7, 0, 9}, 1, 6)
	var logits [2][]float32
	for i, exact := range []bool{false, true} {
		c := smallGPT
		c.ExactGELU = exact
		m, err := NewGPT(c, 3)
		if err != nil {
			t.Fatal(err)
		}
		logits[i] = m.Forward(&nn.Context{}, x).Clone().Data
	}
	var d float64
	for i, v := range logits[0] {
		d = max(d, math.Abs(float64(v-logits[1][i])))
	}
	if d == 0 || d > 1e-3 {
		t.Errorf("tanh and erf GELU logits differ by at most %g, want in (0, 1e-3]", d)
	}
}

// benchGPT is nanoGPT's character-level Shakespeare configuration (the
// "baby GPT" of its README, on CPU) at batch 12.
var benchGPT = GPTConfig{NLayer: 4, NHead: 4, NEmbd: 128, BlockSize: 64, VocabSize: 65}

// BenchmarkGPTStep times forward, loss and backward of one batch of 12,
// plain and per-sample (benchStep).
func BenchmarkGPTStep(b *testing.B) {
	const batch = 12
	m, err := NewGPT(benchGPT, 1)
	if err != nil {
		b.Fatal(err)
	}
	tl := benchGPT.BlockSize
	x := tensor.New(batch, tl)
	y := make([]int32, batch*tl)
	for i := range y {
		x.Data[i] = float32(i * 7 % benchGPT.VocabSize)
		y[i] = int32(i * 5 % benchGPT.VocabSize)
	}
	benchStep(b, m, x, y, "tokens", batch*tl)
}

// Same seed and data ⇒ bit-identical per-sample norms and clipped gradients
// whatever GOMAXPROCS is.
func TestGPTDeterministic(t *testing.T) {
	run := func(procs int) (norms []float64, grads [][]float32) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		m, err := NewGPT(GPTConfig{NLayer: 2, NHead: 4, NEmbd: 32, BlockSize: 16, VocabSize: 23}, 5)
		if err != nil {
			t.Fatal(err)
		}
		const b, tl = 5, 16
		x := tensor.New(b, tl)
		y := make([]int32, b*tl)
		for i := range y {
			x.Data[i] = float32(i * 7 % 23)
			y[i] = int32(i * 3 % 23)
		}
		var ctx nn.Context
		_, dy, err := nn.CrossEntropy(m.Forward(&ctx, x), y)
		if err != nil {
			t.Fatal(err)
		}
		ctx.BeginPerSample(b)
		m.Backward(&ctx, dy)
		norms = slices.Clone(ctx.SqNorms())
		c := make([]float32, b)
		for i := range c {
			c[i] = float32(i) / b
		}
		ctx.Finish(c)
		for _, p := range m.Params() {
			grads = append(grads, slices.Clone(p.Grad.Data))
		}
		return norms, grads
	}
	n1, g1 := run(1)
	n4, g4 := run(4)
	if !slices.Equal(n1, n4) {
		t.Fatalf("norms differ: %v and %v", n1, n4)
	}
	for k := range g1 {
		if !slices.Equal(g1[k], g4[k]) {
			t.Fatalf("gradient %d differs between GOMAXPROCS 1 and 4", k)
		}
	}
}
