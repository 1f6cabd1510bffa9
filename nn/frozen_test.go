package nn_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/psclip/psclip/models"
	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/nn/nntest"
	"github.com/psclip/psclip/tensor"
)

// Every parametrised layer with frozen parameters (a whole layer, its
// weight alone, its bias alone; first, inside and last in the model)
// against the brute force over the parameters left to train, with each
// per-sample rule: norms, clipped aggregate, the plain gradient and
// nn.BackwardParams' (nntest.CheckPerSample), finite differences
// (nntest.CheckGradients), and no frozen gradient written (both).
func TestFrozenPerSample(t *testing.T) {
	mlp := func() nn.Sequential {
		return nn.Sequential{nn.NewLinear("0", 6, 5, true), &nn.Tanh{}, nn.NewLinear("2", 5, 3, true)}
	}
	seq := func() nn.Sequential { // [B,T,in]: Gram matrices formed in Forward
		return nn.Sequential{nn.NewLinear("0", 4, 6, true), &nn.GELU{}, nn.NewLayerNorm("2", 6, true), nn.NewLinear("3", 6, 3, true)}
	}
	cnn := func() nn.Sequential {
		return nn.Sequential{nn.NewConv2d("0", 2, 3, 3, 1, 1, true), &nn.Tanh{}, nn.NewConv2d("2", 3, 4, 3, 2, 0, true), &nn.Flatten{}, nn.NewLinear("4", 4*2*2, 3, true)}
	}
	// The fused ReLU (Conv2d.ReLU) has kinks that finite differences
	// straddle: checked against the brute force only.
	relu := func() nn.Sequential {
		m := cnn()
		m[0].(*nn.Conv2d).ReLU = true
		return m
	}
	gn := func() nn.Sequential {
		g, err := nn.NewGroupNorm("2", 2, 4, true)
		if err != nil {
			t.Fatal(err)
		}
		return nn.Sequential{nn.NewConv2d("0", 2, 4, 3, 1, 1, true), &nn.Tanh{}, g, &nn.Flatten{}, nn.NewLinear("4", 4*6*6, 3, true)}
	}
	lora := func() nn.Sequential { // a LoRA first: its frozen base does no work
		l, err := nn.NewLoRA(nn.NewLinear("0", 6, 5, true), 2, 4)
		if err != nil {
			t.Fatal(err)
		}
		for i := range l.B.Weight.Value.Data {
			l.B.Weight.Value.Data[i] = float32(i%5) / 5
		}
		return nn.Sequential{l, &nn.Tanh{}, nn.NewLinear("2", 5, 3, true)}
	}
	weight := func(i int) func(nn.Sequential) {
		return func(m nn.Sequential) { m[i].Params()[0].Frozen = true }
	}
	bias := func(i int) func(nn.Sequential) {
		return func(m nn.Sequential) { m[i].Params()[1].Frozen = true }
	}
	layer := func(i int) func(nn.Sequential) { return func(m nn.Sequential) { nn.Freeze(m[i]) } }
	both := func(f, g func(nn.Sequential)) func(nn.Sequential) {
		return func(m nn.Sequential) { f(m); g(m) }
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name   string
		build  func() nn.Sequential
		x      *tensor.Tensor
		freeze func(nn.Sequential)
	}{
		{"lora/first", lora, nntest.RandTensor(rng, 4, 6), func(nn.Sequential) {}},
		{"lora/first, base bias trained", lora, nntest.RandTensor(rng, 4, 6), func(m nn.Sequential) { m[0].(*nn.LoRA).Base.Bias.Frozen = false }},
		{"linear/first", mlp, nntest.RandTensor(rng, 4, 6), layer(0)},
		{"linear/first weight", mlp, nntest.RandTensor(rng, 4, 6), weight(0)},
		{"linear/last bias", mlp, nntest.RandTensor(rng, 4, 6), bias(2)},
		{"linear/last", mlp, nntest.RandTensor(rng, 4, 6), layer(2)},
		{"sequence/first", seq, nntest.RandTensor(rng, 3, 5, 4), layer(0)},
		{"sequence/last weight", seq, nntest.RandTensor(rng, 3, 5, 4), weight(3)},
		{"layernorm", seq, nntest.RandTensor(rng, 3, 5, 4), layer(2)},
		{"layernorm/weight", seq, nntest.RandTensor(rng, 3, 5, 4), weight(2)},
		{"layernorm/bias", seq, nntest.RandTensor(rng, 3, 5, 4), bias(2)},
		{"conv/first", cnn, nntest.RandTensor(rng, 4, 2, 6, 6), layer(0)},
		{"conv/second weight", cnn, nntest.RandTensor(rng, 4, 2, 6, 6), weight(2)},
		{"conv/first bias, second", cnn, nntest.RandTensor(rng, 4, 2, 6, 6), both(bias(0), layer(2))},
		{"conv/backbone", cnn, nntest.RandTensor(rng, 4, 2, 6, 6), both(layer(0), layer(2))},
		{"groupnorm", gn, nntest.RandTensor(rng, 4, 2, 6, 6), layer(2)},
		{"groupnorm/weight", gn, nntest.RandTensor(rng, 4, 2, 6, 6), weight(2)},
		{"groupnorm/bias", gn, nntest.RandTensor(rng, 4, 2, 6, 6), bias(2)},
		{"conv relu/first bias", relu, nntest.RandTensor(rng, 4, 2, 6, 6), bias(0)},
		{"conv relu/first weight", relu, nntest.RandTensor(rng, 4, 2, 6, 6), weight(0)},
	} {
		for _, force := range []string{"auto", "ghost", "materialise"} {
			t.Run(tc.name+"/"+force, func(t *testing.T) {
				m := tc.build()
				tc.freeze(m)
				if force != "auto" {
					nn.ForceRule(m, force == "ghost")
				}
				if c, ok := m[0].(*nn.Conv2d); !ok || !c.ReLU {
					nntest.CheckGradients(t, m, tc.x, nntest.Options{})
				}
				out := m.Forward(&nn.Context{}, tc.x)
				n := tc.x.Dim(0)
				r := nntest.RandTensor(rand.New(rand.NewPCG(5, 6)), append([]int{n}, out.Shape[1:]...)...)
				nntest.CheckPerSample(t, m, tc.x, nntest.IDs(n), nntest.SquareLoss(r), nntest.MedianClip)
			})
		}
	}
}

// A small GPT with frozen parameters against the brute force: the tied
// token embedding (so the head's share too), the position embedding, one
// attention's c_attn or c_proj, a layer norm, everything but ln_f.
func TestFrozenGPTPerSample(t *testing.T) {
	cfg := models.GPTConfig{NLayer: 2, NHead: 2, NEmbd: 16, BlockSize: 8, VocabSize: 11, Bias: true}
	for _, frozen := range [][]string{
		{"transformer.wte.weight"},
		{"transformer.wpe.weight"},
		{"transformer.wte.weight", "transformer.wpe.weight"},
		{"transformer.h.0.attn.c_attn.weight", "transformer.h.0.attn.c_attn.bias"},
		{"transformer.h.1.attn.c_proj.weight"},
		{"transformer.h.0.ln_1.weight", "transformer.h.1.mlp.c_fc.bias"},
		{"all but ln_f"},
	} {
		t.Run(frozen[0], func(t *testing.T) {
			m, err := models.NewGPT(cfg, 1)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(3, 4))
			for _, p := range m.Params() {
				if len(p.Value.Shape) == 2 {
					nn.Normal(rng, p.Value, 0.3)
				}
				for _, name := range frozen {
					p.Frozen = p.Frozen || p.Name == name ||
						name == "all but ln_f" && p.Name != "transformer.ln_f.weight" && p.Name != "transformer.ln_f.bias"
				}
			}
			const b, tl = 3, 8
			x := tensor.New(b, tl)
			y := make([]int32, b*tl)
			for i := range x.Data {
				x.Data[i] = float32(rng.IntN(4))
				y[i] = int32(rng.IntN(cfg.VocabSize))
			}
			nntest.CheckPerSample(t, m, x, y, nn.CrossEntropy, nntest.MedianClip)
		})
	}
}

// spy records whether its Backward ran.
type spy struct {
	nn.Layer
	ran bool
}

func (s *spy) Backward(ctx *nn.Context, dy *tensor.Tensor) *tensor.Tensor {
	s.ran = true
	return s.Layer.Backward(ctx, dy)
}

// A frozen backbone costs no backward pass: nn.BackwardParams leaves out
// the layers before the first with a parameter to train, in both modes,
// and the first one forms no input gradient; Backward still returns the
// input gradient through frozen layers.
func TestFrozenBackboneSkipped(t *testing.T) {
	for _, perSample := range []bool{false, true} {
		first := &spy{Layer: nn.NewLinear("0", 6, 5, true)}
		act := &spy{Layer: &nn.Tanh{}}
		head := nn.NewLinear("2", 5, 3, true)
		m := nn.Sequential{first, act, &nn.Residual{F: nn.Sequential{nn.NewLinear("r", 5, 5, false)}}, head}
		nn.Freeze(first)
		nn.Freeze(m[2])
		x := nntest.RandTensor(rand.New(rand.NewPCG(1, 1)), 4, 6)
		ctx := &nn.Context{}
		if perSample {
			ctx.BeginPerSample(4)
		}
		out := m.Forward(ctx, x)
		nn.BackwardParams(ctx, m, out)
		if first.ran || act.ran {
			t.Errorf("per-sample %v: the frozen backbone's Backward ran (linear %v, tanh %v)", perSample, first.ran, act.ran)
		}
		if perSample {
			ctx.Finish([]float32{1, 1, 1, 1})
			ctx.EndPerSample()
		}
		if head.Weight.Grad.Len() == 0 || isZero(head.Weight.Grad.Data) {
			t.Errorf("per-sample %v: the head has no gradient", perSample)
		}
		if !isZero(first.Layer.(*nn.Linear).Weight.Grad.Data) {
			t.Errorf("per-sample %v: the frozen layer has a gradient", perSample)
		}
		out = m.Forward(&nn.Context{}, x)
		if dx := m.Backward(&nn.Context{}, out); dx == nil || !dx.SameShape(x) || !first.ran {
			t.Errorf("Backward through a frozen backbone: input gradient %v", dx)
		}
	}
}

func isZero(v []float32) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

// Trainable lists the parameters that are not frozen, each once.
func TestTrainable(t *testing.T) {
	a, b := nn.NewLinear("a", 2, 2, true), nn.NewLinear("b", 2, 2, false)
	nn.Freeze(a)
	a.Bias.Frozen = false
	got := nn.Trainable(append(append(a.Params(), b.Params()...), b.Weight))
	if len(got) != 2 || got[0] != a.Bias || got[1] != b.Weight {
		t.Errorf("Trainable = %v, want [a.bias b.weight]", got)
	}
}

// A LoRA-adapted GPT against the brute force: adapters on each target
// alone and on all four, with trained (non-zero) adapters and every base
// parameter frozen, so that only the adapters' per-sample rules count;
// and with one base parameter trained beside them.
func TestLoRAGPTPerSample(t *testing.T) {
	cfg := models.GPTConfig{NLayer: 2, NHead: 2, NEmbd: 16, BlockSize: 8, VocabSize: 11, Bias: true}
	for _, tc := range []struct {
		targets  []string
		unfreeze string
	}{
		{[]string{"attn"}, ""},
		{[]string{"proj"}, ""},
		{[]string{"fc"}, ""},
		{[]string{"mlp-proj"}, ""},
		{models.LoRATargets, ""},
		{[]string{"attn"}, "transformer.h.0.attn.c_attn.bias"},
		{[]string{"proj"}, "transformer.ln_f.weight"},
	} {
		t.Run(strings.Join(tc.targets, ",")+"+"+tc.unfreeze, func(t *testing.T) {
			m, err := models.NewGPT(cfg, 1)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(3, 4))
			for _, p := range m.Params() {
				if len(p.Value.Shape) == 2 {
					nn.Normal(rng, p.Value, 0.3)
				}
			}
			if err := m.AdaptLoRA(models.LoRAConfig{Rank: 3, Alpha: 6, Targets: tc.targets}, 1); err != nil {
				t.Fatal(err)
			}
			for _, p := range m.Params() {
				if !p.Frozen {
					nn.Normal(rng, p.Value, 0.3) // B leaves zero
				}
				if p.Name == tc.unfreeze {
					p.Frozen = false
				}
			}
			const b, tl = 3, 8
			x := tensor.New(b, tl)
			y := make([]int32, b*tl)
			for i := range x.Data {
				x.Data[i] = float32(rng.IntN(4))
				y[i] = int32(rng.IntN(cfg.VocabSize))
			}
			nntest.CheckPerSample(t, m, x, y, nn.CrossEntropy, nntest.MedianClip)
		})
	}
}
