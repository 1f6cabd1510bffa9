// Package optim holds the optimizers that turn gradients into parameter
// updates, with the exact semantics of their PyTorch counterparts so that
// hyperparameters carry over from papers and reference code:
//
//   - SGD: torch.optim.SGD with momentum, weight decay and Nesterov
//     (dampening 0);
//   - AdamW: torch.optim.AdamW with parameter groups, and DecayGroups to
//     split parameters as nanoGPT does (decay only on tensors with two or
//     more dimensions);
//   - schedules: Constant and WarmupCosine, nanoGPT's get_lr.
//
// An optimizer reads Param.Grad and updates Param.Value in place, in one
// fused pass per parameter that evaluates PyTorch's float32 formulas in
// PyTorch's order. Models of more than 2¹⁶ parameters are shared out among
// up to GOMAXPROCS goroutines by contiguous ranges of elements (the update
// is elementwise, so the result does not depend on the split); smaller ones
// are updated on the calling goroutine with no allocation. The learning
// rate is set before each step (SetLR, which refuses one that is not a
// positive normal float32) from a Schedule. State and SetState export and restore the
// optimizer's state as tensors named as in PyTorch's state ("<param
// name>.momentum_buffer", "<param name>.exp_avg", "<param name>.exp_avg_sq")
// plus the step count, so that a checkpoint can hold it and a resumed run
// continues bit for bit.
//
// Gradients must be finite: a NaN or Inf in a gradient reaches the weights
// and the state and stays there. Keeping non-finite steps away from the
// optimizer is the caller's job (package train skips such steps).
//
// The default SGD step (momentum, after the first) and the AdamW step run on
// kernels.SGDMomentum and kernels.AdamW, whose AVX-512 and AVX2 versions
// evaluate the same formulas in the same order, so the results are the same
// bits as the Go loops'. SGD streams five arrays and is bound by memory;
// AdamW's square root and two divisions bound a Go loop, and run 16 lanes
// at a time in the kernel (figures in nn/README.md, "The GPT step").
package optim

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/setting"
	"github.com/psclip/psclip/tensor"
)

// Optimizer updates parameters from their gradients.
type Optimizer interface {
	// Step makes one update from the parameters' gradients.
	Step()
	// Params lists the parameters Step updates.
	Params() []*nn.Param
	// SetLR sets the learning rate for the following steps. It refuses a
	// rate that is not a positive normal float32 (NaN, ±Inf, 0, negative)
	// with a *setting.Error for "LR", keeping the rate it had: such a rate
	// would write NaN into the weights or climb the loss.
	SetLR(lr float64) error
	// LR is the current learning rate.
	LR() float64
	// State returns the optimizer's state. Its tensors share memory with
	// the optimizer: copy them to keep a snapshot across steps.
	State() State
	// SetState restores a state returned by State, with the same parameter
	// names and shapes. On error the optimizer is unchanged.
	SetState(State) error
}

// State is an optimizer's state, as a checkpoint stores it.
type State struct {
	// Steps is the number of updates made.
	Steps int
	// Tensors holds the per-parameter state under PyTorch-like names,
	// "<param name>.<state name>". It is empty before the first step, as
	// PyTorch creates the state lazily.
	Tensors map[string]*tensor.Tensor
}

// checkParams validates a parameter list for an optimizer: at least one
// parameter, none frozen (nn.Param.Frozen: give an optimizer
// nn.Trainable's list).
func checkParams(params []*nn.Param) error {
	if len(params) == 0 {
		return setting.Errorf("Params", "none", "at least one parameter to update")
	}
	names := make(map[string]bool, len(params))
	for _, p := range params {
		switch {
		case p == nil || p.Value == nil || p.Grad == nil:
			return setting.Errorf("Params", nameOf(p), "parameters with a value and a gradient")
		case p.Frozen:
			return setting.Errorf("Params", p.Name, "parameters to train, not a frozen one (nn.Trainable lists those)")
		case !p.Value.SameShape(p.Grad):
			return setting.Errorf("Params", p.Name, "a gradient of the value's shape %v, not %v", p.Value.Shape, p.Grad.Shape)
		case names[p.Name]:
			return setting.Errorf("Params", p.Name, "distinct parameter names (two are named %q)", p.Name)
		}
		names[p.Name] = true
	}
	return nil
}

func nameOf(p *nn.Param) string {
	if p == nil {
		return "<nil>"
	}
	return p.Name
}

// checkLR refuses a learning rate that is not a positive normal float32,
// the precision the updates use: 0 would train nothing, a negative rate
// climbs the loss, and one outside float32's normal range becomes Inf or
// loses its precision.
func checkLR(lr float64) error { return setting.Positive32("LR", lr) }

// checkDecay refuses a weight decay that is negative, NaN or infinite, as
// PyTorch does.
func checkDecay(wd float64) error {
	if !(wd >= 0) || math.IsInf(wd, 0) {
		return setting.Errorf("WeightDecay", wd, "a finite number ≥ 0")
	}
	return nil
}

// stateSlot names one per-parameter state tensor: the State key is
// params[i].Name + "." + name, and data is the optimizer's buffer.
type stateSlot struct {
	name string
	bufs [][]float32
}

// exportState builds a State whose tensors wrap the optimizer's buffers.
func exportState(params []*nn.Param, steps int, slots ...stateSlot) State {
	s := State{Steps: steps, Tensors: map[string]*tensor.Tensor{}}
	if steps == 0 {
		return s
	}
	for _, slot := range slots {
		for i, p := range params {
			s.Tensors[p.Name+"."+slot.name] = tensor.From(slot.bufs[i], p.Value.Shape...)
		}
	}
	return s
}

// importState checks that s has exactly the tensors exportState would give
// for these parameters and copies them into the buffers.
func importState(params []*nn.Param, s State, slots ...stateSlot) error {
	if s.Steps < 0 {
		return fmt.Errorf("optim: negative step count %d", s.Steps)
	}
	expected := map[string]bool{}
	if s.Steps > 0 {
		for _, slot := range slots {
			for _, p := range params {
				key := p.Name + "." + slot.name
				t, ok := s.Tensors[key]
				if !ok {
					return fmt.Errorf("optim: state after %d steps has no tensor %q", s.Steps, key)
				}
				if !t.SameShape(p.Value) || len(t.Data) != p.Value.Len() {
					return fmt.Errorf("optim: state tensor %q is %v, parameter %q is %v", key, t, p.Name, p.Value)
				}
				expected[key] = true
			}
		}
	}
	for _, key := range slices.Sorted(maps.Keys(s.Tensors)) {
		if !expected[key] {
			return fmt.Errorf("optim: unexpected state tensor %q (after %d steps)", key, s.Steps)
		}
	}
	for _, slot := range slots {
		for i, p := range params {
			if s.Steps == 0 {
				clear(slot.bufs[i])
			} else {
				copy(slot.bufs[i], s.Tensors[p.Name+"."+slot.name].Data)
			}
		}
	}
	return nil
}
