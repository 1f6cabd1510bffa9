package nn

import (
	"fmt"

	"github.com/psclip/psclip/kernels"
	"github.com/psclip/psclip/tensor"
)

// LoRA is low-rank adaptation (Hu et al. 2021) of a Linear layer: the base
// layer's weight W [out,in] and bias are frozen, and a trainable update
// of rank r, scaled by α/r, is learnt beside it:
//
//	y = x·Wᵀ + b + (α/r)·(x·Aᵀ)·Bᵀ,    A [r,in], B [out,r]
//
// A starts from PyTorch's default Linear initialisation and B at zero (as
// peft's LoRA), so the adapted layer starts as the base layer.
//
// Per-sample rule: the update is two Linear layers in sequence, x → x·Aᵀ
// → (x·Aᵀ)·Bᵀ, each with its own one-pass rule (ghost norms or
// materialised per-sample gradients by the cost model): a sample's
// gradient norm² is the sum of theirs, and each forms its part of the
// clipped gradient Σ_i c_i·g_i. The frozen base does no weight-gradient or
// per-sample work (Param.Frozen); it still forms the input gradient when
// a layer below trains. Its per-sample gradients are small: r·(in + out)
// values a sample.
type LoRA struct {
	Base  *Linear
	A, B  *Linear // A: in → r, B: r → out, no biases
	Scale float32 // α/r

	y, dz, dx *tensor.Tensor
}

// NewLoRA freezes base's parameters and returns the LoRA adaptation of it
// at the given rank and α; the adapters are named after base's weight:
// P.lora_A.weight and P.lora_B.weight for base weight P.weight (peft's
// names without its adapter name).
func NewLoRA(base *Linear, rank int, alpha float64) (*LoRA, error) {
	if rank < 1 || rank > min(base.in, base.out) || !(alpha > 0) {
		return nil, fmt.Errorf("nn: LoRA of %s: rank %d and α %v, want a rank from 1 to %d and a positive α", base.Weight.Name, rank, alpha, min(base.in, base.out))
	}
	prefix := base.Weight.Name
	if n := len(prefix) - len(".weight"); n > 0 && prefix[n:] == ".weight" {
		prefix = prefix[:n]
	}
	Freeze(base)
	l := &LoRA{Base: base, A: NewLinear(prefix+".lora_A", base.in, rank, false), B: NewLinear(prefix+".lora_B", rank, base.out, false), Scale: float32(alpha / float64(rank))}
	l.A.NoInputGrad = base.NoInputGrad
	clear(l.B.Weight.Value.Data)
	return l, nil
}

// Params returns the base's (frozen) parameters, then A's and B's weights.
func (l *LoRA) Params() []*Param {
	return append(l.Base.Params(), l.A.Weight, l.B.Weight)
}

// OutShape is the base layer's.
func (l *LoRA) OutShape(in []int) ([]int, error) { return l.Base.OutShape(in) }

// Forward computes the base layer's output plus the scaled update, over the
// last dimension of x ([B,in] or [B,T,in]).
func (l *LoRA) Forward(ctx *Context, x *tensor.Tensor) *tensor.Tensor {
	base := l.Base.Forward(ctx, x)
	l.y = reuse(l.y, base.Shape...)
	copy(l.y.Data, base.Data)
	kernels.Axpy(l.Scale, l.B.Forward(ctx, l.A.Forward(ctx, x)).Data, l.y.Data)
	return l.y
}

// Backward produces the adapters' gradients in the context's mode and
// returns the input gradient: the base's plus the update's.
func (l *LoRA) Backward(ctx *Context, dy *tensor.Tensor) *tensor.Tensor {
	l.dz = reuse(l.dz, dy.Shape...)
	clear(l.dz.Data)
	kernels.Axpy(l.Scale, dy.Data, l.dz.Data)
	dxa := l.A.Backward(ctx, l.B.Backward(ctx, l.dz))
	dxb := l.Base.Backward(ctx, dy)
	if dxa == nil || dxb == nil { // NoInputGrad
		return nil
	}
	l.dx = reuse(l.dx, dxb.Shape...)
	kernels.Add(l.dx.Data, dxb.Data, dxa.Data)
	return l.dx
}

// BackwardParams produces the adapters' gradients of Backward and no input
// gradient: the frozen base does no work at all (a base parameter unfrozen
// since gets its gradient).
func (l *LoRA) BackwardParams(ctx *Context, dy *tensor.Tensor) {
	l.dz = reuse(l.dz, dy.Shape...)
	clear(l.dz.Data)
	kernels.Axpy(l.Scale, dy.Data, l.dz.Data)
	l.A.BackwardParams(ctx, l.B.Backward(ctx, l.dz))
	if l.Base.trains() {
		l.Base.BackwardParams(ctx, dy)
	}
}

// Merge adds the update into the base weight, (α/r)·B·A, and returns the
// base layer: the adapted layer as one Linear, for export or inference.
// The base's parameters stay frozen; l must not be used after.
func (l *LoRA) Merge() *Linear {
	out, in, r := l.Base.out, l.Base.in, l.A.out
	kernels.Sgemm(false, false, out, in, r, l.Scale, l.B.Weight.Value.Data, r, l.A.Weight.Value.Data, in, 1, l.Base.Weight.Value.Data, in)
	return l.Base
}
