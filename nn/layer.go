package nn

import (
	"math/rand/v2"

	"github.com/psclip/psclip/tensor"
)

// Layer is a differentiable function with explicit forward and backward
// passes. The first dimension of every input and output is the batch.
//
// A layer keeps what its backward pass needs from the latest Forward, so each
// Forward is followed by at most one Backward with the same Context.
// Shape mismatches are programming errors and panic, as in gonum.
type Layer interface {
	// Forward computes the layer's output for the batch x.
	Forward(ctx *Context, x *tensor.Tensor) *tensor.Tensor
	// Backward takes the gradient of the loss with respect to the output
	// of the latest Forward and returns the gradient with respect to its
	// input. Parametrised layers also produce their weight gradients: see
	// Context for the plain and per-sample modes.
	Backward(ctx *Context, dy *tensor.Tensor) *tensor.Tensor
	// Params lists the layer's trainable parameters (none for ReLU and the
	// like) in a fixed order. Backward leaves a frozen one (Param.Frozen)
	// alone: no gradient, no norm term.
	Params() []*Param
}

// ParamBackwarder is a Layer that can run its backward pass for its
// parameters' gradients alone, skipping the work of its input gradient (a
// model's first layer: nobody reads its input gradient). Sequential,
// Residual, Linear, Conv2d, CausalSelfAttention and LoRA are
// ParamBackwarders.
type ParamBackwarder interface {
	// BackwardParams produces the parameter gradients of Backward(ctx, dy),
	// in the context's mode, and no input gradient.
	BackwardParams(ctx *Context, dy *tensor.Tensor)
}

// BackwardParams runs l's backward pass for the gradients of its
// parameters, where the input gradient is not wanted: what a trainer calls
// on its model. A layer with no parameter to train (all frozen, or none) is
// left out; a ParamBackwarder skips its input gradient (and a Sequential the
// layers before its first with a parameter to train); any other layer runs
// its Backward.
func BackwardParams(ctx *Context, l Layer, dy *tensor.Tensor) {
	if !trains(l) {
		return
	}
	if pb, ok := l.(ParamBackwarder); ok {
		pb.BackwardParams(ctx, dy)
		return
	}
	l.Backward(ctx, dy)
}

// Context carries the state that one forward and backward pass share.
//
// In the plain mode a parametrised layer's Backward adds its full-batch
// weight gradient into Param.Grad, as every framework does.
//
// In the per-sample mode (BeginPerSample), dy holds each sample's own loss
// gradient, and a parametrised layer's Backward instead
//
//  1. adds every sample's squared gradient-norm contribution of its
//     parameters into SqNorms()[i], by the ghost norm or by materialising
//     per-sample gradients, whichever is cheaper for its shapes, and
//  2. registers with Defer the work that adds Σ_i c_i·g_i into Param.Grad
//     once the per-sample clip factors c are known.
//
// After the backward pass the caller turns SqNorms into factors and calls
// Finish(c): the clipped gradient is formed with no second backward pass.
// BeginPerSample may come before Forward or between Forward and Backward;
// before Forward, layers do part of their per-sample work in the forward
// pass, while their inputs are still in cache (Linear's Gram matrices).
// Deferred work may read the dy a layer was given and the input it kept, so
// neither may be modified between Backward and Finish.
type Context struct {
	// Train enables training-only behaviour such as dropout.
	Train bool
	// Rand is the source of training randomness (dropout masks). It must be
	// set when Train is true and the model has dropout.
	Rand *rand.Rand

	// PerSampleMemory bounds the bytes of per-sample gradients the layers
	// of a per-sample step may materialise (see budget.go): 0 leaves each
	// layer to its own rule, which holds them only where they take no more
	// memory than the activations the layer keeps anyway; a positive budget
	// is shared out among the layers by the time each saves a byte;
	// NoMaterialise materialises none. It changes how the norms are
	// computed, not what they are, but the clipped gradient's float32
	// additions run in another order.
	PerSampleMemory int64

	perSample bool
	sqNorms   []float64
	deferred  []func(c []float32)
	plan      planner
}

// BeginPerSample switches the context to the per-sample mode for a batch of
// n samples and clears the norms and deferred work of any earlier batch.
func (c *Context) BeginPerSample(n int) {
	c.perSample = true
	if cap(c.sqNorms) < n {
		c.sqNorms = make([]float64, n)
	}
	c.sqNorms = c.sqNorms[:n]
	clear(c.sqNorms)
	clear(c.deferred)
	c.deferred = c.deferred[:0]
	c.plan.spent = 0
}

// EndPerSample switches the context back to the plain mode.
func (c *Context) EndPerSample() {
	c.perSample = false
	clear(c.deferred)
	c.deferred = c.deferred[:0]
}

// PerSample reports whether the context is in the per-sample mode.
func (c *Context) PerSample() bool { return c.perSample }

// SqNorms returns the per-sample squared gradient norms accumulated so far in
// the per-sample mode, one per sample of the batch. Layers add into it.
func (c *Context) SqNorms() []float64 { return c.sqNorms }

// Defer registers weight-gradient work to run in Finish, once the per-sample
// clip factors are known.
func (c *Context) Defer(f func(c []float32)) { c.deferred = append(c.deferred, f) }

// Finish runs the deferred work with the per-sample factors c (one per
// sample): every parametrised layer adds Σ_i c[i]·g_i into its gradients.
// A factor of exactly 0 excludes its sample: layers skip that sample's
// contribution rather than multiply it by 0, because a sample is excluded
// precisely when its gradient holds NaN or Inf (and 0·NaN is NaN).
// It panics if len(c) is not the batch size given to BeginPerSample.
func (c *Context) Finish(factors []float32) {
	if len(factors) != len(c.sqNorms) {
		panic("nn: Finish: wrong number of clip factors")
	}
	// Last registered first: the layers nearest the input ran their
	// Backward last, so their activations and gradients are the likeliest
	// to be still in cache.
	for i := len(c.deferred) - 1; i >= 0; i-- {
		c.deferred[i](factors)
	}
	clear(c.deferred)
	c.deferred = c.deferred[:0]
}

// Sequential chains layers: the output of each is the input of the next.
type Sequential []Layer

// Forward runs the layers in order.
func (s Sequential) Forward(ctx *Context, x *tensor.Tensor) *tensor.Tensor {
	for _, l := range s {
		x = l.Forward(ctx, x)
	}
	return x
}

// Backward runs the layers' backward passes in reverse order.
func (s Sequential) Backward(ctx *Context, dy *tensor.Tensor) *tensor.Tensor {
	for i := len(s) - 1; i >= 0; i-- {
		dy = s[i].Backward(ctx, dy)
	}
	return dy
}

// BackwardParams runs the backward pass for the parameters' gradients
// alone: the layers before the first with a parameter to train are left
// out, and that one forms no input gradient.
func (s Sequential) BackwardParams(ctx *Context, dy *tensor.Tensor) {
	first := 0
	for first < len(s) && !trains(s[first]) {
		first++
	}
	for i := len(s) - 1; i > first; i-- {
		dy = s[i].Backward(ctx, dy)
	}
	if first < len(s) {
		BackwardParams(ctx, s[first], dy)
	}
}

// Params concatenates the layers' parameters in order.
func (s Sequential) Params() []*Param {
	var ps []*Param
	for _, l := range s {
		ps = append(ps, l.Params()...)
	}
	return ps
}
