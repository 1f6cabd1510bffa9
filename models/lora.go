package models

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/setting"
)

// LoRATargets lists the layers of a GPT block that LoRA can adapt, by the
// names LoRAConfig.Targets uses: attn (attn.c_attn, the q, k and v
// projections), proj (attn.c_proj), fc (mlp.c_fc) and mlp-proj
// (mlp.c_proj).
var LoRATargets = []string{"attn", "proj", "fc", "mlp-proj"}

// LoRAConfig is the low-rank adaptation of a GPT (nn.LoRA): every block's
// Targets adapted at rank Rank with scale Alpha/Rank.
type LoRAConfig struct {
	Rank    int
	Alpha   float64
	Targets []string // of LoRATargets, each at most once
}

// Validate reports the first problem with c for a GPT of width d as a
// *setting.Error naming the field: a rank from 1 to d (every target's
// smaller side is d), a positive α whose α/r is a normal float32, and
// known, distinct targets, at least one.
func (c LoRAConfig) Validate(d int) error {
	switch {
	case c.Rank < 1 || c.Rank > d:
		return setting.Errorf("Rank", c.Rank, "a LoRA rank from 1 to the width %d", d)
	case !(c.Alpha > 0) || !setting.Normal32(c.Alpha/float64(c.Rank)):
		return setting.Errorf("Alpha", c.Alpha, "a positive LoRA α whose scale α/r is a normal float32")
	case len(c.Targets) == 0:
		return setting.Errorf("Targets", "[]", "at least one of %s", strings.Join(LoRATargets, ", "))
	}
	for _, t := range c.Targets {
		if !slices.Contains(LoRATargets, t) {
			return setting.Errorf("Targets", strconv.Quote(t), "one of %s", strings.Join(LoRATargets, ", "))
		}
	}
	return setting.Distinct("Targets", c.Targets)
}

// loraStream is the PCG stream of the adapters' initialisation
// ("gpt-lora").
const loraStream = 0x6770742d6c6f7261

// AdaptLoRA freezes every parameter of m and adapts c.Targets in every
// block by LoRA (nn.NewLoRA), so that only the adapters train: their A
// weights drawn, block by block, from a PCG generator seeded with seed
// (PyTorch's Linear default, as peft's), their B weights zero, so that the
// adapted model starts as m. Params then lists every adapted layer's
// adapters after its own parameters, named as nn.NewLoRA names them
// (transformer.h.0.attn.c_attn.lora_A.weight, …). Set the base weights
// first (ImportGPT2 refuses an adapted GPT); MergeLoRA undoes the
// adaptation into the base weights.
func (m *GPT) AdaptLoRA(c LoRAConfig, seed uint64) error {
	if err := c.Validate(m.cfg.NEmbd); err != nil {
		return err
	}
	if len(m.lora) > 0 {
		return errors.New("models: gpt: the GPT is adapted already")
	}
	nn.Freeze(m.net)
	has := func(t string) bool { return slices.Contains(c.Targets, t) }
	err := m.eachBlock(func(a *nn.CausalSelfAttention) error {
		if err := a.Adapt(has("attn"), has("proj"), c.Rank, c.Alpha); err != nil {
			return err
		}
		for _, l := range []*nn.LoRA{a.AttnLoRA, a.ProjLoRA} {
			if l != nil {
				m.lora = append(m.lora, l)
			}
		}
		return nil
	}, func(mlp nn.Sequential) error {
		for _, t := range []struct {
			i      int
			target string
		}{{1, "fc"}, {3, "mlp-proj"}} {
			if has(t.target) {
				l, err := nn.NewLoRA(mlp[t.i].(*nn.Linear), c.Rank, c.Alpha)
				if err != nil {
					return err
				}
				mlp[t.i] = l
			}
		}
		for _, l := range mlp {
			if l, ok := l.(*nn.LoRA); ok {
				m.lora = append(m.lora, l)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	m.params = m.net.Params()
	m.initLoRA(rand.New(rand.NewPCG(seed, loraStream)))
	return nil
}

// initLoRA draws the adapters' initialisation from rng: A as a Linear
// layer's default, B zero.
func (m *GPT) initLoRA(rng *rand.Rand) {
	for _, l := range m.lora {
		nn.InitDefault(rng, l.A.Weight, nil)
		l.B.Weight.Value.Zero()
	}
}

// Adapted reports whether m has LoRA adapters (AdaptLoRA).
func (m *GPT) Adapted() bool { return len(m.lora) > 0 }

// MergeLoRA merges every adapter into its base weight (nn.LoRA.Merge) and
// removes it: m is then a GPT without adapters whose outputs are the
// adapted model's (up to float32 rounding), for export (WriteGPT2) or
// inference. Its parameters stay frozen.
func (m *GPT) MergeLoRA() {
	if len(m.lora) == 0 {
		return
	}
	m.eachBlock(func(a *nn.CausalSelfAttention) error {
		a.Merge()
		return nil
	}, func(mlp nn.Sequential) error {
		for i, l := range mlp {
			if l, ok := l.(*nn.LoRA); ok {
				mlp[i] = l.Merge()
			}
		}
		return nil
	})
	m.lora = nil
	m.params = m.net.Params()
}

// eachBlock calls attn with every block's attention and mlp with every
// block's MLP (ln_2, c_fc, GELU, c_proj, dropout), in order, and returns
// the first error.
func (m *GPT) eachBlock(attn func(*nn.CausalSelfAttention) error, mlp func(nn.Sequential) error) error {
	for _, l := range m.net {
		r, ok := l.(*nn.Residual)
		if !ok {
			continue
		}
		f := r.F.(nn.Sequential)
		var err error
		if a, ok := f[1].(*nn.CausalSelfAttention); ok {
			err = attn(a)
		} else {
			err = mlp(f)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
