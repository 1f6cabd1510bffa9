package optim

import (
	"math"

	"github.com/psclip/psclip/kernels"
	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/setting"
)

// AdamWConfig holds AdamW's hyperparameters, named as torch.optim.AdamW's
// (betas = (Beta1, Beta2)). The learning rate must be set (> 0); a β or ε
// left 0 takes PyTorch's default (β₁ 0.9, β₂ 0.999, ε 1e-8), so a config
// that names only LR is torch.optim.AdamW(lr=LR). A β or ε of exactly 0 is
// spelled Exactly(0). Weight decay is set per Group and taken as given: 0 is no decay
// (PyTorch's AdamW default is 1e-2).
type AdamWConfig struct {
	LR, Beta1, Beta2, Eps float64
}

// Exactly returns v for an AdamWConfig β or ε that means what it says, 0
// included: 0 becomes the smallest positive float64, which the update
// (formed in float64 and rounded to float32) cannot tell from 0, rather
// than PyTorch's default. Use it for values a user may have set to 0.
func Exactly(v float64) float64 {
	if v == 0 {
		return math.SmallestNonzeroFloat64
	}
	return v
}

// PyTorch's defaults for AdamWConfig fields left 0.
const (
	DefaultBeta1 = 0.9
	DefaultBeta2 = 0.999
	DefaultEps   = 1e-8
)

// Group is a parameter group: parameters that share a weight decay.
type Group struct {
	Params      []*nn.Param
	WeightDecay float64
}

// DecayGroups splits params as nanoGPT's configure_optimizers does: tensors
// with two or more dimensions (matrices, embeddings, convolution kernels)
// get weightDecay, the others (biases, normalisation gains) none. Each group
// keeps the order of params.
func DecayGroups(params []*nn.Param, weightDecay float64) []Group {
	decay, noDecay := Group{WeightDecay: weightDecay}, Group{}
	for _, p := range params {
		if len(p.Value.Shape) >= 2 {
			decay.Params = append(decay.Params, p)
		} else {
			noDecay.Params = append(noDecay.Params, p)
		}
	}
	return []Group{decay, noDecay}
}

// AdamW is Adam with decoupled weight decay, torch.optim.AdamW without
// amsgrad. With g the gradient, w the parameter, λ the group's weight decay
// and t the step number (from 1), a step is
//
//	w = w·(1 − lr·λ)
//	m = m + (1−β₁)·(g − m)                          (torch's lerp)
//	v = β₂·v + (1−β₂)·g·g
//	w = w − lr/(1−β₁ᵗ) · m / (√v / √(1−β₂ᵗ) + ε)
type AdamW struct {
	cfg    AdamWConfig
	groups []Group
	params []*nn.Param // all groups' parameters, in group order
	decay  []float64   // params[i]'s weight decay
	m, v   [][]float32
	steps  int
	k      kernels.AdamWConsts // the current step's scalars (but Decay), for update
}

// NewAdamW returns an AdamW optimizer over the groups. It returns an error
// for a learning rate that is not a positive normal float32 and for
// hyperparameters PyTorch rejects (negative ε or weight decay; a β outside
// [0, 1)) and for parameters without a gradient of their
// shape, with duplicate names, or in two groups.
func NewAdamW(groups []Group, cfg AdamWConfig) (*AdamW, error) {
	if err := checkLR(cfg.LR); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		v   *float64
		def float64
	}{{&cfg.Beta1, DefaultBeta1}, {&cfg.Beta2, DefaultBeta2}, {&cfg.Eps, DefaultEps}} {
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	switch {
	case !(cfg.Beta1 >= 0 && cfg.Beta1 < 1):
		return nil, setting.Errorf("Beta1", cfg.Beta1, "a number in [0, 1)")
	case !(cfg.Beta2 >= 0 && cfg.Beta2 < 1):
		return nil, setting.Errorf("Beta2", cfg.Beta2, "a number in [0, 1)")
	case !(cfg.Eps >= 0) || math.IsInf(cfg.Eps, 0):
		return nil, setting.Errorf("Eps", cfg.Eps, "a finite number ≥ 0")
	}
	o := &AdamW{cfg: cfg, groups: groups}
	for _, g := range groups {
		if err := checkDecay(g.WeightDecay); err != nil {
			return nil, err
		}
		for _, p := range g.Params {
			o.params = append(o.params, p)
			o.decay = append(o.decay, g.WeightDecay)
		}
	}
	if err := checkParams(o.params); err != nil {
		return nil, err
	}
	o.m = make([][]float32, len(o.params))
	o.v = make([][]float32, len(o.params))
	for i, p := range o.params {
		o.m[i] = make([]float32, p.Value.Len())
		o.v[i] = make([]float32, p.Value.Len())
	}
	return o, nil
}

// SetLR sets the learning rate for the following steps; it refuses one
// that is not a positive normal float32 (Optimizer.SetLR).
func (o *AdamW) SetLR(lr float64) error {
	if err := checkLR(lr); err != nil {
		return err
	}
	o.cfg.LR = lr
	return nil
}

// LR is the current learning rate.
func (o *AdamW) LR() float64 { return o.cfg.LR }

// Step updates every parameter from its gradient.
func (o *AdamW) Step() {
	o.steps++
	// Scalars are formed in float64 and rounded to float32 once, as torch
	// does with Python-float hyperparameters.
	t := float64(o.steps)
	lr, b1, b2 := o.cfg.LR, o.cfg.Beta1, o.cfg.Beta2
	o.k = kernels.AdamWConsts{
		Lerp:          float32(1 - b1),
		Beta2:         float32(b2),
		OneMinusBeta2: float32(1 - b2),
		BC2Sqrt:       float32(math.Sqrt(1 - math.Pow(b2, t))),
		Eps:           float32(o.cfg.Eps),
		StepSize:      float32(lr / (1 - math.Pow(b1, t))),
	}
	shard(o.params, o)
}

// update makes Step's update of elements [lo,hi) of parameter i.
func (o *AdamW) update(i, lo, hi int) {
	c := o.k
	// torch skips the decay when λ = 0; multiplying by 1 is exact.
	c.Decay = float32(1 - o.cfg.LR*o.decay[i])
	w := o.params[i].Value.Data[lo:hi]
	kernels.AdamW(w, o.params[i].Grad.Data[lo:hi][:len(w)], o.m[i][lo:hi][:len(w)], o.v[i][lo:hi][:len(w)], c)
}

// Params returns the parameters of all groups, in group order.
func (o *AdamW) Params() []*nn.Param { return o.params }

// State returns the step count and, after the first step, the moment
// estimates as "<param name>.exp_avg" and "<param name>.exp_avg_sq".
func (o *AdamW) State() State {
	return exportState(o.params, o.steps, o.slots()...)
}

// SetState restores a state returned by State.
func (o *AdamW) SetState(s State) error {
	if err := importState(o.params, s, o.slots()...); err != nil {
		return err
	}
	o.steps = s.Steps
	return nil
}

func (o *AdamW) slots() []stateSlot {
	return []stateSlot{{"exp_avg", o.m}, {"exp_avg_sq", o.v}}
}
