package models

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/safetensors"
	"github.com/psclip/psclip/tensor"
)

// tinyGPT2 is the GPT-2-layout checkpoint testdata/gpt2-tiny/gen.py wrote
// with PyTorch: 2 layers, 4 heads, width 32, 16 positions, 64 tokens.
const tinyGPT2 = "testdata/gpt2-tiny"

// gpt2Logits returns the fixture's token sequences [B, T] and the logits
// [B, T, V] of gen.py's float64 forward.
func gpt2Logits(t *testing.T) (tokens []int64, shape []int, logits []float64) {
	t.Helper()
	f, err := safetensors.ReadFile(filepath.Join(tinyGPT2, "logits.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	tt, _ := f.Tensor("tokens")
	lt, _ := f.Tensor("logits")
	if tokens, err = safetensors.Values[int64](tt); err != nil {
		t.Fatal(err)
	}
	if logits, err = safetensors.Values[float64](lt); err != nil {
		t.Fatal(err)
	}
	return tokens, lt.Shape, logits
}

// checkLogits compares m's logits for the first T positions of the
// fixture's sequences with the float64 reference: the largest difference
// must be below 2e-5 of the largest logit: float32 rounding through two
// blocks gives 7e-7 (a transposed or misplaced tensor changes them by far
// more than 10 %).
func checkLogits(t *testing.T, m *GPT, T int) {
	t.Helper()
	tokens, shape, want := gpt2Logits(t)
	b, full, v := shape[0], shape[1], shape[2]
	x := tensor.New(b, T)
	for i := range b {
		for j := range T {
			x.Data[i*T+j] = float32(tokens[i*full+j])
		}
	}
	got := m.Forward(&nn.Context{}, x)
	var maxErr, maxAbs float64
	for i := range b {
		for j := range T {
			for k := range v {
				w := want[(i*full+j)*v+k]
				maxErr = max(maxErr, math.Abs(float64(got.Data[(i*T+j)*v+k])-w))
				maxAbs = max(maxAbs, math.Abs(w))
			}
		}
	}
	if maxErr > 2e-5*maxAbs {
		t.Errorf("logits differ from the float64 reference by up to %.3g (largest logit %.3g)", maxErr, maxAbs)
	}
	t.Logf("T = %d: largest difference %.3g, largest logit %.3g", T, maxErr, maxAbs)
}

// An imported GPT-2 checkpoint gives the logits of an independent float64
// forward written from Hugging Face's modeling_gpt2 (gen.py).
func TestGPT2ImportLogits(t *testing.T) {
	m, err := ReadGPT2(tinyGPT2)
	if err != nil {
		t.Fatal(err)
	}
	want := GPTConfig{NLayer: 2, NHead: 4, NEmbd: 32, BlockSize: 16, VocabSize: 64, Bias: true}
	if m.Config() != want {
		t.Errorf("config %+v, want %+v", m.Config(), want)
	}
	checkLogits(t, m, 16)

	// A shorter block takes wpe's first rows and gives the same logits.
	short := want
	short.BlockSize = 8
	m8, err := NewGPT(short, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := m8.ImportGPT2File(filepath.Join(tinyGPT2, GPT2WeightsFile)); err != nil {
		t.Fatal(err)
	}
	checkLogits(t, m8, 8)
}

// ExportGPT2 gives back the checkpoint's tensors bit for bit, and
// WriteGPT2 a directory ReadGPT2 reads into the same model.
func TestGPT2ExportRoundTrip(t *testing.T) {
	f, err := safetensors.ReadFile(filepath.Join(tinyGPT2, GPT2WeightsFile))
	if err != nil {
		t.Fatal(err)
	}
	m, err := ReadGPT2(tinyGPT2)
	if err != nil {
		t.Fatal(err)
	}
	exported := m.ExportGPT2()
	for _, e := range exported {
		orig, ok := f.Tensor(e.Name)
		if !ok || !slices.Equal(orig.Shape, e.Shape) || !bytes.Equal(orig.Data, e.Data) {
			t.Errorf("exported %s %v differs from the checkpoint's", e.Name, e.Shape)
		}
	}
	if n := len(f.Tensors) - 2; len(exported) != n { // less the two masks
		t.Errorf("%d tensors exported, want %d", len(exported), n)
	}
	dir := filepath.Join(t.TempDir(), "out")
	if err := WriteGPT2(dir, m); err != nil {
		t.Fatal(err)
	}
	back, err := ReadGPT2(dir)
	if err != nil {
		t.Fatal(err)
	}
	if back.Config() != m.Config() {
		t.Errorf("config after WriteGPT2 %+v, want %+v", back.Config(), m.Config())
	}
	for i, p := range back.Params() {
		if !slices.Equal(p.Value.Data, m.Params()[i].Value.Data) {
			t.Errorf("%s differs after WriteGPT2 and ReadGPT2", p.Name)
		}
	}
}

// withTensors writes the fixture's tensors, edited, to a new file.
func withTensors(t *testing.T, edit func([]safetensors.Tensor) []safetensors.Tensor) string {
	t.Helper()
	f, err := safetensors.ReadFile(filepath.Join(tinyGPT2, GPT2WeightsFile))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "model.safetensors")
	if err := safetensors.WriteFile(p, edit(slices.Clone(f.Tensors)), nil); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestGPT2ImportNames(t *testing.T) {
	cfg := GPTConfig{NLayer: 2, NHead: 4, NEmbd: 32, BlockSize: 16, VocabSize: 64, Bias: true}
	wte := func(ts []safetensors.Tensor) safetensors.Tensor {
		i := slices.IndexFunc(ts, func(t safetensors.Tensor) bool { return t.Name == "wte.weight" })
		return ts[i]
	}
	for _, c := range []struct {
		name string
		edit func([]safetensors.Tensor) []safetensors.Tensor
		cfg  func(*GPTConfig)
		err  string
	}{
		{"prefixed, with the tied head", func(ts []safetensors.Tensor) []safetensors.Tensor {
			head := wte(ts)
			head.Name = "lm_head.weight"
			for i := range ts {
				ts[i].Name = "transformer." + ts[i].Name
			}
			return append(ts, head)
		}, nil, ""},
		{"untied head", func(ts []safetensors.Tensor) []safetensors.Tensor {
			head := wte(ts)
			head.Name, head.Data = "lm_head.weight", slices.Clone(head.Data)
			head.Data[0] ^= 1
			return append(ts, head)
		}, nil, "lm_head.weight differs"},
		{"missing tensor", func(ts []safetensors.Tensor) []safetensors.Tensor {
			return slices.DeleteFunc(ts, func(t safetensors.Tensor) bool { return t.Name == "h.1.mlp.c_fc.bias" })
		}, nil, `no tensor "h.1.mlp.c_fc.bias"`},
		{"more layers than the model", nil, func(c *GPTConfig) { c.NLayer = 1 }, "h.1."},
		{"fewer layers than the model", nil, func(c *GPTConfig) { c.NLayer = 3 }, "h.2."},
		{"longer block than wpe", nil, func(c *GPTConfig) { c.BlockSize = 17 }, "wpe.weight has shape [16 32]"},
		{"other width", nil, func(c *GPTConfig) { c.NEmbd, c.NHead = 16, 2 }, "has shape"},
		{"no biases", nil, func(c *GPTConfig) { c.Bias = false }, "biases"},
		{"F64", func(ts []safetensors.Tensor) []safetensors.Tensor {
			w := wte(ts)
			vals, _ := safetensors.Values[float32](w)
			f64 := make([]float64, len(vals))
			i := slices.IndexFunc(ts, func(t safetensors.Tensor) bool { return t.Name == "wte.weight" })
			ts[i] = safetensors.New("wte.weight", w.Shape, f64)
			return ts
		}, nil, "F64"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(tinyGPT2, GPT2WeightsFile)
			if c.edit != nil {
				path = withTensors(t, c.edit)
			}
			mc := cfg
			if c.cfg != nil {
				c.cfg(&mc)
			}
			m, err := NewGPT(mc, 1)
			if err != nil {
				t.Fatal(err)
			}
			before := slices.Clone(m.Params()[0].Value.Data)
			err = m.ImportGPT2File(path)
			if c.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				checkLogits(t, m, 16)
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("error %v, want one containing %q", err, c.err)
			}
			if !slices.Equal(m.Params()[0].Value.Data, before) {
				t.Error("a refused import changed the model")
			}
		})
	}
}

func TestReadGPT2ConfigRefuses(t *testing.T) {
	orig, err := os.ReadFile(filepath.Join(tinyGPT2, GPT2ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ old, new, err string }{
		{`"gelu_new"`, `"relu"`, "activation_function"},
		{`"gelu_new"`, `"gelu"`, ""},
		{`1e-05`, `1e-06`, "layer_norm_epsilon"},
		{`"n_inner": null`, `"n_inner": 64`, "n_inner"},
		{`"n_inner": null`, `"n_inner": 128`, ""},
		{`"n_inner": null`, `"n_inner": null, "scale_attn_weights": false`, "attention"},
		{`"n_inner": null`, `"n_inner": null, "scale_attn_by_inverse_layer_idx": true`, "attention"},
		{`"model_type": "gpt2"`, `"model_type": "gpt_neo"`, "model_type"},
		{`"n_head": 4`, `"n_head": 3`, "n_head"},
		{`{`, `[`, "config.json"},
	} {
		p := filepath.Join(t.TempDir(), GPT2ConfigFile)
		if err := os.WriteFile(p, []byte(strings.Replace(string(orig), c.old, c.new, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := ReadGPT2Config(p)
		if (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s → %s: error %v, want %q", c.old, c.new, err, c.err)
		}
		if c.new == `"gelu"` && !cfg.ExactGELU {
			t.Error(`activation_function "gelu" is not the exact GELU`)
		}
	}
}
