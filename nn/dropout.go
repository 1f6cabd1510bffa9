package nn

import (
	"fmt"

	"github.com/psclip/psclip/kernels"
	"github.com/psclip/psclip/tensor"
)

// Dropout zeroes each element with probability P during training and scales
// the survivors by 1/(1-P) (inverted dropout, as PyTorch), so that evaluation
// is the identity.
type Dropout struct {
	P float64

	train bool      // whether the latest Forward dropped
	scale []float32 // 0 or 1/(1-P) per element of the latest Forward
	y, dx *tensor.Tensor
}

// NewDropout returns dropout with probability p ∈ [0,1).
func NewDropout(p float64) *Dropout {
	if !(p >= 0 && p < 1) {
		panic(fmt.Sprintf("nn: NewDropout(%g): probability outside [0,1)", p))
	}
	return &Dropout{P: p}
}

// Forward draws a mask from ctx.Rand when ctx.Train is set and P > 0, and is
// the identity otherwise.
func (d *Dropout) Forward(ctx *Context, x *tensor.Tensor) *tensor.Tensor {
	d.train = d.dropping(ctx)
	if !d.train {
		return x
	}
	if ctx.Rand == nil {
		panic("nn: Dropout in training mode needs Context.Rand")
	}
	keep := float32(1 / (1 - d.P))
	d.scale = resize(d.scale, x.Len())
	d.y = reuse(d.y, x.Shape...)
	// An element is dropped where ctx.Rand.Float64() < P. Float64 is the
	// low 53 bits of a Uint64 over 2⁵³, so the same test, exactly (P·2⁵³
	// only scales P by a power of two), is the integer's against P·2⁵³,
	// with no division and, through kernels.KeepIf, no branch on a coin flip. The
	// draws are serial; applying the mask is shared out.
	cut := d.P * (1 << 53)
	for i := range d.scale {
		u := ctx.Rand.Uint64() << 11 >> 11
		d.scale[i] = kernels.KeepIf(keep, !(float64(u) < cut))
	}
	spans(len(x.Data), passSpan, func(lo, hi int) {
		y, s := d.y.Data[lo:hi], d.scale[lo:hi]
		for i, v := range x.Data[lo:hi] {
			y[i] = s[i] * v
		}
	})
	return d.y
}

// dropping reports whether Forward in ctx draws a mask (false for a nil
// Dropout): when it does not, Forward and Backward are the identity.
func (d *Dropout) dropping(ctx *Context) bool {
	return d != nil && ctx.Train && d.P > 0
}

// Backward applies the latest Forward's mask to dy.
func (d *Dropout) Backward(ctx *Context, dy *tensor.Tensor) *tensor.Tensor {
	if !d.train {
		return dy
	}
	if dy.Len() != len(d.scale) {
		panic("nn: Dropout: gradient " + dy.String() + " does not match the latest Forward")
	}
	d.dx = reuse(d.dx, dy.Shape...)
	spans(len(dy.Data), passSpan, func(lo, hi int) {
		dx, s := d.dx.Data[lo:hi], d.scale[lo:hi]
		for i, v := range dy.Data[lo:hi] {
			dx[i] = s[i] * v
		}
	})
	return d.dx
}

// Params returns nil: Dropout has no parameters.
func (d *Dropout) Params() []*Param { return nil }
