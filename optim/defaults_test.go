package optim

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/setting"
)

// A config that names only the learning rate is PyTorch's: AdamW with
// β₁ 0.9, β₂ 0.999, ε 1e-8 takes the same steps as the explicit config.
func TestAdamWDefaults(t *testing.T) {
	run := func(cfg AdamWConfig) []float32 {
		p := param("w", []float32{1, -2, 3}, 3)
		o, err := NewAdamW([]Group{{Params: []*nn.Param{p}}}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 5 {
			for j := range p.Grad.Data {
				p.Grad.Data[j] = float32(i+1) * 0.1 * float32(j-1)
			}
			o.Step()
		}
		return p.Value.Data
	}
	got := run(AdamWConfig{LR: 1e-2})
	want := run(AdamWConfig{LR: 1e-2, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8})
	if !slices.Equal(got, want) {
		t.Errorf("AdamWConfig{LR} stepped to %v, PyTorch's defaults to %v", got, want)
	}
}

// Exactly(0) is a β₁ and ε of 0 against the float64 reference.
func TestAdamWExactlyZero(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	ps, refs := model(rng)
	o, err := NewAdamW([]Group{{Params: ps}}, AdamWConfig{LR: 1e-2, Beta1: Exactly(0), Beta2: 0.99, Eps: Exactly(0)})
	if err != nil {
		t.Fatal(err)
	}
	for step := range 5 {
		gs := setGrads(rng, ps)
		o.Step()
		for i, r := range refs {
			r.adamw(gs[i], 1e-2, 0, 0.99, 0, 0)
		}
		compare(t, "AdamW β₁=ε=0", step, ps, refs)
	}
}

// A learning rate that is 0 (a config that names nothing), negative or not
// a positive normal float32 is refused by both optimizers.
func TestLearningRateRefused(t *testing.T) {
	ps := []*nn.Param{nn.NewParam("w", 2)}
	for _, lr := range []float64{0, -1, 1e39, 1e-320, math.NaN(), math.Inf(1)} {
		if _, err := NewSGD(ps, SGDConfig{LR: lr}); err == nil {
			t.Errorf("SGD accepted learning rate %v", lr)
		}
		if _, err := NewAdamW([]Group{{Params: ps}}, AdamWConfig{LR: lr}); err == nil {
			t.Errorf("AdamW accepted learning rate %v", lr)
		}
	}
	if _, err := NewSGD(ps, SGDConfig{}); err == nil {
		t.Error("SGDConfig{} accepted")
	}
}

// Params lists what Step updates.
func TestParams(t *testing.T) {
	a, b := nn.NewParam("a", 2), nn.NewParam("b", 2)
	s, _ := NewSGD([]*nn.Param{a, b}, SGDConfig{LR: 1})
	w, _ := NewAdamW([]Group{{Params: []*nn.Param{b}}, {Params: []*nn.Param{a}}}, AdamWConfig{LR: 1})
	if !slices.Equal(s.Params(), []*nn.Param{a, b}) || !slices.Equal(w.Params(), []*nn.Param{b, a}) {
		t.Error("Params does not list the optimizer's parameters in order")
	}
}

// An optimizer over no parameter, or over a frozen one, is refused where
// it is built, with a *setting.Error for Params.
func TestParamsRefused(t *testing.T) {
	frozen := nn.NewParam("frozen", 2)
	frozen.Frozen = true
	for name, ps := range map[string][]*nn.Param{"none": nil, "frozen": {nn.NewParam("w", 2), frozen}} {
		_, errSGD := NewSGD(ps, SGDConfig{LR: 0.1})
		_, errAdamW := NewAdamW([]Group{{Params: ps}}, AdamWConfig{LR: 0.1})
		for opt, err := range map[string]error{"SGD": errSGD, "AdamW": errAdamW} {
			if se := (*setting.Error)(nil); !errors.As(err, &se) || se.Field != "Params" {
				t.Errorf("%s over %s: %v, want a *setting.Error for Params", opt, name, err)
			}
		}
	}
}
