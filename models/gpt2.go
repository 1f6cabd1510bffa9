package models

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/psclip/psclip/internal/atomicfile"
	"github.com/psclip/psclip/internal/regfile"
	"github.com/psclip/psclip/safetensors"
	"github.com/psclip/psclip/tensor"
)

// The files of a Hugging Face GPT-2 directory that ReadGPT2 and WriteGPT2
// read and write.
const (
	GPT2ConfigFile  = "config.json"
	GPT2WeightsFile = "model.safetensors"
)

// gpt2JSON is the part of a Hugging Face GPT2Config (config.json) that
// fixes the model's function.
type gpt2JSON struct {
	ModelType     string   `json:"model_type,omitempty"`
	Architectures []string `json:"architectures,omitempty"`
	Activation    string   `json:"activation_function"`
	NLayer        int      `json:"n_layer"`
	NHead         int      `json:"n_head"`
	NEmbd         int      `json:"n_embd"`
	NPositions    int      `json:"n_positions"`
	NCtx          int      `json:"n_ctx,omitempty"`
	VocabSize     int      `json:"vocab_size"`
	LayerNormEps  float64  `json:"layer_norm_epsilon"`
	NInner        *int     `json:"n_inner"`
	// Dropouts: written as the model's, read only by Hugging Face.
	ResidPdrop float64 `json:"resid_pdrop"`
	EmbdPdrop  float64 `json:"embd_pdrop"`
	AttnPdrop  float64 `json:"attn_pdrop"`
	// Variants psclip's GPT does not compute: refused unless at GPT-2's
	// values.
	ScaleAttnWeights           *bool `json:"scale_attn_weights,omitempty"`
	ScaleAttnByInverseLayerIdx bool  `json:"scale_attn_by_inverse_layer_idx,omitempty"`
	ReorderAndUpcastAttn       bool  `json:"reorder_and_upcast_attn,omitempty"`
}

// The activation_function values of GPT-2's tanh GELU and of the exact one.
var gpt2Activations = map[string]bool{"gelu_new": false, "gelu_pytorch_tanh": false, "gelu": true}

// ReadGPT2Config reads a Hugging Face GPT-2 config.json as the GPTConfig
// of the same model: biases, BlockSize n_positions, ExactGELU for
// activation_function "gelu" (GPT-2's "gelu_new" is the tanh GELU), no
// dropout. A configuration psclip's GPT does not compute (another layer-norm
// ε than 1e-5, an MLP width other than 4·n_embd, unscaled or rescaled
// attention, another model type) is an error.
func ReadGPT2Config(path string) (GPTConfig, error) {
	b, err := readSmall(path, 1<<20)
	if err != nil {
		return GPTConfig{}, err
	}
	var j gpt2JSON
	if err := json.Unmarshal(b, &j); err != nil {
		return GPTConfig{}, fmt.Errorf("%s: %w", path, err)
	}
	exact, ok := gpt2Activations[j.Activation]
	switch {
	case j.ModelType != "" && j.ModelType != "gpt2":
		err = fmt.Errorf("model_type %q is not gpt2", j.ModelType)
	case !ok:
		err = fmt.Errorf("activation_function %q: want gelu_new (GPT-2's), gelu_pytorch_tanh or gelu", j.Activation)
	case j.LayerNormEps != 1e-5:
		err = fmt.Errorf("layer_norm_epsilon %v: psclip's LayerNorm has 1e-5", j.LayerNormEps)
	case j.NInner != nil && *j.NInner != 4*j.NEmbd:
		err = fmt.Errorf("n_inner %d: psclip's GPT has an MLP of 4·n_embd = %d", *j.NInner, 4*j.NEmbd)
	case j.ScaleAttnWeights != nil && !*j.ScaleAttnWeights, j.ScaleAttnByInverseLayerIdx, j.ReorderAndUpcastAttn:
		err = errors.New("attention scaled otherwise than by 1/√head size (scale_attn_weights, scale_attn_by_inverse_layer_idx, reorder_and_upcast_attn)")
	}
	if err != nil {
		return GPTConfig{}, fmt.Errorf("%s: %w", path, err)
	}
	c := GPTConfig{NLayer: j.NLayer, NHead: j.NHead, NEmbd: j.NEmbd, BlockSize: j.NPositions, VocabSize: j.VocabSize, Bias: true, ExactGELU: exact}
	if err := c.Validate(); err != nil {
		return GPTConfig{}, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// readSmall reads a regular file of at most limit bytes.
func readSmall(path string, limit int64) ([]byte, error) {
	f, size, err := regfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if size > limit {
		return nil, fmt.Errorf("%s has %d bytes, more than the %d of a configuration", path, size, limit)
	}
	return io.ReadAll(f)
}

// gpt2Name is the Hugging Face name of a GPT parameter: its name without
// "transformer.".
func gpt2Name(name string) string { return strings.TrimPrefix(name, "transformer.") }

// conv1D reports whether the parameter is the weight of one of GPT-2's
// Conv1D layers, which store it [in, out], transposed from Linear's [out,
// in].
func conv1D(name string) bool {
	for _, s := range []string{".attn.c_attn.weight", ".attn.c_proj.weight", ".mlp.c_fc.weight", ".mlp.c_proj.weight"} {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

// gpt2Buffers matches the tensors of Hugging Face GPT-2 files that are not
// weights: each block's causal mask and its masked value.
var gpt2Buffers = regexp.MustCompile(`^(transformer\.)?h\.\d+\.attn\.(bias|masked_bias)$`)

// ImportGPT2 sets m's weights from a GPT-2 checkpoint in Hugging Face's
// names and layout (h.0.attn.c_attn.weight, …, wte.weight, wpe.weight,
// ln_f.weight, with or without the prefix "transformer."), F32 tensors:
// the Conv1D weights are transposed into Linear's layout, and of wpe the
// first BlockSize positions are taken. lm_head.weight, if present, must
// equal wte.weight (psclip's head is tied to it); the attention masks are
// skipped. Any other tensor, a missing one, a shape that does not fit m or
// an m without biases is an error, and m is then unchanged.
func (m *GPT) ImportGPT2(f *safetensors.File) error {
	if !m.cfg.Bias {
		return errors.New("models: gpt2: GPT-2 has biases; the model has none (GPTConfig.Bias)")
	}
	if m.Adapted() {
		return errors.New("models: gpt2: the GPT has LoRA adapters; import before AdaptLoRA")
	}
	prefix := ""
	if _, ok := f.Tensor("transformer.wte.weight"); ok {
		prefix = "transformer."
	}
	values := make([][]float32, len(m.params))
	used := map[string]bool{}
	for i, p := range m.params {
		name := prefix + gpt2Name(p.Name)
		t, err := f.Float32(name)
		if err != nil {
			return fmt.Errorf("models: gpt2: %w", err)
		}
		used[name] = true
		want := p.Value.Shape
		if conv1D(p.Name) {
			want = []int{want[1], want[0]}
		}
		if strings.HasSuffix(p.Name, "wpe.weight") && len(t.Shape) == 2 && t.Shape[0] >= want[0] {
			want = []int{t.Shape[0], want[1]} // n_positions ≥ BlockSize
		}
		if !slices.Equal(t.Shape, want) {
			return fmt.Errorf("models: gpt2: %s has shape %v, want %v", name, t.Shape, want)
		}
		if conv1D(p.Name) {
			t = transpose(t)
		}
		values[i] = t.Data[:len(p.Value.Data)] // wpe: its first BlockSize rows
	}
	for _, t := range f.Tensors {
		switch {
		case used[t.Name] || gpt2Buffers.MatchString(t.Name):
		case t.Name == "lm_head.weight":
			head, err := f.Float32(t.Name)
			if err != nil {
				return fmt.Errorf("models: gpt2: %w", err)
			}
			wte, _ := f.Float32(prefix + "wte.weight")
			if !slices.Equal(head.Shape, wte.Shape) || !slices.Equal(head.Data, wte.Data) {
				return errors.New("models: gpt2: lm_head.weight differs from wte.weight; psclip's GPT ties them")
			}
		default:
			return fmt.Errorf("models: gpt2: tensor %s is not part of a GPT of %d layers", t.Name, m.cfg.NLayer)
		}
	}
	for i, p := range m.params {
		copy(p.Value.Data, values[i])
	}
	return nil
}

// ExportGPT2 returns m's weights in Hugging Face GPT-2's names (without
// "transformer.", as the hub's gpt2 files) and layout (Conv1D weights
// [in, out]), F32, without the tied lm_head: what ImportGPT2 reads. It
// panics for a GPT with LoRA adapters, which GPT-2's layout has no place
// for: MergeLoRA first.
func (m *GPT) ExportGPT2() []safetensors.Tensor {
	if m.Adapted() {
		panic("models: gpt2: ExportGPT2 of a GPT with LoRA adapters (MergeLoRA first)")
	}
	out := make([]safetensors.Tensor, len(m.params))
	for i, p := range m.params {
		t := p.Value
		if conv1D(p.Name) {
			t = transpose(t)
		}
		out[i] = safetensors.FromTensor(gpt2Name(p.Name), t)
	}
	return out
}

// ReadGPT2 reads a Hugging Face GPT-2 directory, config.json and
// model.safetensors (ReadGPT2Config, ImportGPT2), into a new GPT. Nothing is
// downloaded: the directory is one a user has, e.g. a clone of the hub's
// gpt2 repository or what WriteGPT2 wrote.
func ReadGPT2(dir string) (*GPT, error) {
	cfg, err := ReadGPT2Config(filepath.Join(dir, GPT2ConfigFile))
	if err != nil {
		return nil, err
	}
	m, err := NewGPT(cfg, 0)
	if err != nil {
		return nil, err
	}
	if err := m.ImportGPT2File(filepath.Join(dir, GPT2WeightsFile)); err != nil {
		return nil, err
	}
	return m, nil
}

// ImportGPT2File is ImportGPT2 of a safetensors file, whose path prefixes
// its errors.
func (m *GPT) ImportGPT2File(path string) error {
	f, err := safetensors.ReadFile(path)
	if err != nil {
		return err
	}
	if err := m.ImportGPT2(f); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// WriteGPT2 writes m as a Hugging Face GPT-2 directory, created if needed:
// config.json (model type gpt2, n_positions BlockSize, the dropouts at
// Dropout) and model.safetensors (ExportGPT2, with the metadata format "pt"
// that Hugging Face's loader expects). Each file is replaced atomically. A
// GPT with LoRA adapters is refused: MergeLoRA first.
func WriteGPT2(dir string, m *GPT) error {
	c := m.cfg
	switch {
	case !c.Bias:
		return errors.New("models: gpt2: GPT-2 has biases; the model has none (GPTConfig.Bias)")
	case m.Adapted():
		return errors.New("models: gpt2: the GPT has LoRA adapters, which GPT-2's layout has no place for (MergeLoRA first)")
	}
	act := "gelu_new"
	if c.ExactGELU {
		act = "gelu"
	}
	j := gpt2JSON{ModelType: "gpt2", Architectures: []string{"GPT2LMHeadModel"}, Activation: act,
		NLayer: c.NLayer, NHead: c.NHead, NEmbd: c.NEmbd, NPositions: c.BlockSize, NCtx: c.BlockSize, VocabSize: c.VocabSize,
		LayerNormEps: 1e-5, ResidPdrop: c.Dropout, EmbdPdrop: c.Dropout, AttnPdrop: c.Dropout}
	b, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := safetensors.WriteFile(filepath.Join(dir, GPT2WeightsFile), m.ExportGPT2(), map[string]string{"format": "pt"}); err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(dir, GPT2ConfigFile), append(b, '\n'))
}

// transpose returns the transpose of a 2-D tensor.
func transpose(t *tensor.Tensor) *tensor.Tensor {
	r, c := t.Shape[0], t.Shape[1]
	out := tensor.New(c, r)
	for i := range r {
		for j := range c {
			out.Data[j*r+i] = t.Data[i*c+j]
		}
	}
	return out
}
