package optim

import (
	"math"

	"github.com/psclip/psclip/kernels"
	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/setting"
)

// SGDConfig holds SGD's hyperparameters, named as torch.optim.SGD's. The
// learning rate must be set (> 0); the others default to 0 as in PyTorch.
type SGDConfig struct {
	LR          float64
	Momentum    float64
	WeightDecay float64
	Nesterov    bool
}

// SGD is stochastic gradient descent with momentum and L2 weight decay,
// torch.optim.SGD with dampening 0. With g the gradient, w the parameter,
// μ the momentum and λ the weight decay, a step is
//
//	d = g + λ·w
//	b = d on the first step, μ·b + d afterwards      (if μ ≠ 0)
//	u = d + μ·b with Nesterov, else b                (u = d if μ = 0)
//	w = w − lr·u
type SGD struct {
	cfg    SGDConfig
	params []*nn.Param
	bufs   [][]float32 // momentum buffers; nil when μ = 0
	steps  int
}

// NewSGD returns an SGD optimizer over params. It returns an error for a
// learning rate that is not a positive normal float32, for hyperparameters
// PyTorch rejects (negative momentum or weight decay; Nesterov without
// momentum) and for parameters without a
// gradient of their shape or with duplicate names.
func NewSGD(params []*nn.Param, cfg SGDConfig) (*SGD, error) {
	if err := checkParams(params); err != nil {
		return nil, err
	}
	if err := checkLR(cfg.LR); err != nil {
		return nil, err
	}
	switch {
	case !(cfg.Momentum >= 0) || math.IsInf(cfg.Momentum, 0):
		return nil, setting.Errorf("Momentum", cfg.Momentum, "a finite number ≥ 0")
	case checkDecay(cfg.WeightDecay) != nil:
		return nil, checkDecay(cfg.WeightDecay)
	case cfg.Nesterov && cfg.Momentum == 0:
		return nil, setting.Unread("Nesterov", true, "Nesterov momentum needs Momentum > 0")
	}
	o := &SGD{cfg: cfg, params: params}
	if cfg.Momentum != 0 {
		o.bufs = make([][]float32, len(params))
		for i, p := range params {
			o.bufs[i] = make([]float32, p.Value.Len())
		}
	}
	return o, nil
}

// SetLR sets the learning rate for the following steps; it refuses one
// that is not a positive normal float32 (Optimizer.SetLR).
func (o *SGD) SetLR(lr float64) error {
	if err := checkLR(lr); err != nil {
		return err
	}
	o.cfg.LR = lr
	return nil
}

// LR is the current learning rate.
func (o *SGD) LR() float64 { return o.cfg.LR }

// Step updates every parameter from its gradient, sharing the elements out
// among up to GOMAXPROCS goroutines (the update is elementwise, so the
// result does not depend on their number).
func (o *SGD) Step() {
	shard(o.params, o)
	o.steps++
}

// update makes Step's update of elements [lo,hi) of parameter i.
func (o *SGD) update(i, lo, hi int) {
	lr, wd := float32(o.cfg.LR), float32(o.cfg.WeightDecay)
	mu, nesterov, first := float32(o.cfg.Momentum), o.cfg.Nesterov, o.steps == 0
	p := o.params[i]
	w := p.Value.Data[lo:hi]
	g := p.Grad.Data[lo:hi][:len(w)]
	if mu == 0 {
		for j, x := range w {
			w[j] = x - lr*(g[j]+wd*x)
		}
		return
	}
	// One loop per case: hoisting the loop-invariant tests out of the
	// loop halves the step's time (package documentation).
	b := o.bufs[i][lo:hi][:len(w)]
	switch {
	case first:
		for j, x := range w {
			d := g[j] + wd*x
			b[j] = d
			if nesterov {
				d += mu * d
			}
			w[j] = x - lr*d
		}
	case nesterov:
		for j, x := range w {
			d := g[j] + wd*x
			bj := mu*b[j] + d
			b[j] = bj
			w[j] = x - lr*(d+mu*bj)
		}
	default:
		kernels.SGDMomentum(w, g, b, lr, wd, mu)
	}
}

// Params returns the parameters SGD updates.
func (o *SGD) Params() []*nn.Param { return o.params }

// State returns the step count and, once a step with momentum has been
// made, the momentum buffers as "<param name>.momentum_buffer".
func (o *SGD) State() State { return exportState(o.params, o.steps, o.slots()...) }

// SetState restores a state returned by State.
func (o *SGD) SetState(s State) error {
	if err := importState(o.params, s, o.slots()...); err != nil {
		return err
	}
	o.steps = s.Steps
	return nil
}

// slots lists the state tensors: none without momentum.
func (o *SGD) slots() []stateSlot {
	if o.bufs == nil {
		return nil
	}
	return []stateSlot{{"momentum_buffer", o.bufs}}
}
