package models

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/setting"
	"github.com/psclip/psclip/tensor"
)

// GPTConfig is nanoGPT's GPTConfig.
type GPTConfig struct {
	NLayer    int // transformer blocks
	NHead     int // attention heads; must divide NEmbd
	NEmbd     int // width
	BlockSize int // longest sequence
	VocabSize int
	Dropout   float64 // probability of every dropout layer in training
	Bias      bool    // biases in the Linear and LayerNorm layers (nanoGPT's bias=false: none)
	ExactGELU bool    // the erf GELU of today's nanoGPT (nn.GELU()); false: GPT-2's tanh approximation
}

// Validate reports the first problem with c, if any, as a *setting.Error
// naming the field.
func (c GPTConfig) Validate() error {
	switch {
	case c.NLayer <= 0:
		return setting.Errorf("NLayer", c.NLayer, "> 0 (n_layer)")
	case c.NHead <= 0:
		return setting.Errorf("NHead", c.NHead, "> 0 (n_head)")
	case c.NEmbd <= 0:
		return setting.Errorf("NEmbd", c.NEmbd, "> 0 (n_embd)")
	case c.NEmbd%c.NHead != 0:
		return setting.Errorf("NEmbd", c.NEmbd, "a multiple of n_head %d", c.NHead)
	case c.BlockSize <= 0:
		return setting.Errorf("BlockSize", c.BlockSize, "> 0 (block_size)")
	case c.VocabSize <= 0:
		return setting.Errorf("VocabSize", c.VocabSize, "> 0 (vocab_size)")
	case c.VocabSize > maxVocab:
		return setting.Errorf("VocabSize", c.VocabSize, "at most %d, the largest id float32 token inputs hold exactly", maxVocab)
	case !(c.Dropout >= 0 && c.Dropout < 1):
		return setting.Errorf("Dropout", c.Dropout, "a probability in [0, 1)")
	}
	return nil
}

// NumParams is the number of parameters of a GPT with this configuration as
// nanoGPT's get_num_params counts them: the tied weight once, and without the
// position embedding when nonEmbedding is true (nanoGPT's default and the
// figure it prints). It needs no model, so it can size one before building it.
func (c GPTConfig) NumParams(nonEmbedding bool) int {
	d := c.NEmbd
	block := 12*d*d + 2*d  // ln_1, c_attn, c_proj, ln_2, c_fc, c_proj weights
	n := c.VocabSize*d + d // wte, ln_f
	if c.Bias {
		block += 11 * d // ln_1 d, c_attn 3d, c_proj d, ln_2 d, c_fc 4d, c_proj d
		n += d
	}
	n += c.NLayer * block
	if !nonEmbedding {
		n += c.BlockSize * d
	}
	return n
}

// maxVocab is 2^24: token ids travel as float32 (see nn.CheckTokens).
const maxVocab = 1 << 24

// GPT is nanoGPT's GPT as an nn.Layer: the input is token ids [B, T] as
// float32 values (T ≤ BlockSize; check untrusted input with CheckInput) and
// the output the logits [B, T, VocabSize] at every position.
//
//	x = drop(wte(idx) + wpe(arange(T)))
//	x = x + attn(ln_1(x)); x = x + mlp(ln_2(x))   for each of the NLayer blocks
//	logits = ln_f(x)·wteᵀ
//
// with mlp = c_proj(gelu(c_fc(x))) (widths d → 4d → d) and GPT-2's tanh GELU
// (the erf GELU with ExactGELU).
//
// The output layer lm_head is tied to the token embedding: one parameter,
// listed and saved once as transformer.wte.weight. nanoGPT's state_dict shows
// it under both transformer.wte.weight and lm_head.weight (one tensor); a
// safetensors file of Params therefore holds it once, as Hugging Face's GPT-2
// files and safetensors.torch.save_model do, and loads into nanoGPT with
// safetensors.torch.load_model or load_state_dict(strict=False), which keep
// the two names tied. The per-sample gradient norm of the tied weight is that
// of the sum of both contributions (nn.TiedHead).
type GPT struct {
	cfg    GPTConfig
	net    nn.Sequential
	params []*nn.Param
	lora   []*nn.LoRA // the adapters of AdaptLoRA, in the order of Params
}

// NewGPT returns a GPT with nanoGPT's initialisation (Init), drawn from a
// PCG generator seeded with seed.
func NewGPT(cfg GPTConfig, seed uint64) (*GPT, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	d := cfg.NEmbd
	wte := nn.NewEmbedding("transformer.wte", cfg.VocabSize, d)
	net := nn.Sequential{wte, nn.NewPositionEmbedding("transformer.wpe", cfg.BlockSize, d), nn.NewDropout(cfg.Dropout)}
	for i := range cfg.NLayer {
		h := fmt.Sprintf("transformer.h.%d", i)
		net = append(net,
			&nn.Residual{F: nn.Sequential{
				nn.NewLayerNorm(h+".ln_1", d, cfg.Bias),
				nn.NewCausalSelfAttention(h+".attn", d, cfg.NHead, cfg.Dropout, cfg.Bias),
			}},
			&nn.Residual{F: nn.Sequential{
				nn.NewLayerNorm(h+".ln_2", d, cfg.Bias),
				nn.NewLinear(h+".mlp.c_fc", d, 4*d, cfg.Bias),
				&nn.GELU{Exact: cfg.ExactGELU},
				nn.NewLinear(h+".mlp.c_proj", 4*d, d, cfg.Bias),
				nn.NewDropout(cfg.Dropout),
			}})
	}
	net = append(net, nn.NewLayerNorm("transformer.ln_f", d, cfg.Bias), nn.NewTiedHead(wte))
	m := &GPT{cfg: cfg, net: net, params: net.Params()}
	m.Init(rand.New(rand.NewPCG(seed, 0x6770742d696e6974))) // "gpt-init"
	return m, nil
}

// Init draws nanoGPT's initialisation (_init_weights) from rng in the order
// of Params: weights of Linear and Embedding layers N(0, 0.02²), except
// every c_proj.weight N(0, 0.02²/(2·NLayer)); biases 0; LayerNorm weights 1
// (nn.Initializer, so nn.Init re-initialises a GPT this way). The
// adapters of a LoRA-adapted GPT (AdaptLoRA) are drawn after, as AdaptLoRA
// draws them.
func (m *GPT) Init(rng *rand.Rand) {
	for _, p := range m.params {
		switch {
		case strings.Contains(p.Name, ".lora_"):
		case len(p.Value.Shape) == 2:
			std := 0.02
			if strings.HasSuffix(p.Name, ".c_proj.weight") {
				std /= math.Sqrt(2 * float64(m.cfg.NLayer))
			}
			nn.Normal(rng, p.Value, std)
		case strings.HasSuffix(p.Name, ".bias"):
			p.Value.Zero()
		default: // LayerNorm weights
			for i := range p.Value.Data {
				p.Value.Data[i] = 1
			}
		}
	}
	m.initLoRA(rng)
}

// Config returns the model's configuration.
func (m *GPT) Config() GPTConfig { return m.cfg }

// CheckInput reports an error unless x is a [B, T] tensor of token ids with
// B ≥ 1, 1 ≤ T ≤ BlockSize and every id an integer in [0, VocabSize).
func (m *GPT) CheckInput(x *tensor.Tensor) error {
	if err := nn.CheckTokens(x, m.cfg.VocabSize); err != nil {
		return err
	}
	if b, t := x.Shape[0], x.Shape[1]; b == 0 || t == 0 || t > m.cfg.BlockSize {
		return fmt.Errorf("models: gpt: input of %d sequences of length %d: want at least one sequence of length 1..%d", b, t, m.cfg.BlockSize)
	}
	return nil
}

// Forward returns the logits [B, T, VocabSize] for the token ids x [B, T].
// It panics on input that CheckInput rejects.
func (m *GPT) Forward(ctx *nn.Context, x *tensor.Tensor) *tensor.Tensor {
	return m.net.Forward(ctx, x)
}

// Backward produces the parameter gradients for the logit gradient dy and
// returns nil: token ids have no gradient.
func (m *GPT) Backward(ctx *nn.Context, dy *tensor.Tensor) *tensor.Tensor {
	return m.net.Backward(ctx, dy)
}

// BackwardParams produces the parameter gradients for the logit gradient
// dy, leaving out the blocks before the first with a parameter to train
// (nn.BackwardParams).
func (m *GPT) BackwardParams(ctx *nn.Context, dy *tensor.Tensor) { m.net.BackwardParams(ctx, dy) }

// Params lists the parameters in nanoGPT's named_parameters order:
// transformer.wte.weight, transformer.wpe.weight, then for every block
// ln_1, attn.c_attn, attn.c_proj, ln_2, mlp.c_fc, mlp.c_proj (weight, then
// bias, of each), and transformer.ln_f. The tied lm_head is not listed.
func (m *GPT) Params() []*nn.Param { return m.params }

var (
	_ nn.Layer           = (*GPT)(nil)
	_ nn.ParamBackwarder = (*GPT)(nil)
)

// OutShape is [B, T, VocabSize] for token ids [B, T] with T ≤ BlockSize
// (nn.Shaper); the ids themselves are checked by CheckInput.
func (m *GPT) OutShape(in []int) ([]int, error) { return m.net.OutShape(in) }
