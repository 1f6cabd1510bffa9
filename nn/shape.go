package nn

import (
	"fmt"
	"math"
	"slices"

	"github.com/psclip/psclip/kernels"
	"github.com/psclip/psclip/tensor"
)

// A Shaper is a layer that says, without running, which inputs its Forward
// accepts. Every layer of this package is one; CheckInput uses them so that
// a trainer can refuse a bad batch before any layer runs (Forward panics on
// a shape it does not accept).
type Shaper interface {
	// OutShape returns the shape of Forward's output for an input of shape
	// in (every dimension ≥ 1), or an *InputError saying why Forward would
	// refuse it.
	OutShape(in []int) ([]int, error)
}

// An InputChecker is a layer whose Forward needs more of its input than a
// shape, such as an Embedding's token ids. CheckInput calls it on the layer
// that first sees the model's input.
type InputChecker interface {
	CheckInput(x *tensor.Tensor) error
}

// InputError reports an input that a layer's Forward would refuse.
type InputError struct {
	Layer string // the layer, e.g. "Linear 0.weight"
	Input []int  // the shape it was given
	Want  string // what it accepts
}

func (e *InputError) Error() string {
	return fmt.Sprintf("nn: %s: input %v, want %s", e.Layer, e.Input, e.Want)
}

// OutShape returns the shape of l's output for an input of shape in, or an
// *InputError from the first layer that would refuse it. It returns nil and
// no error when a layer on the way is not a Shaper: its output shape cannot
// be known without running it.
func OutShape(l Layer, in []int) ([]int, error) {
	if s, ok := l.(Shaper); ok {
		return s.OutShape(in)
	}
	return nil, nil
}

// CheckInput reports, without running l, whether l.Forward accepts x: x must
// be a tensor whose data fits its shape, with at least one dimension and no
// empty one; every Shaper on the way must accept its input's shape; and the
// layer that first sees x must accept its values if it is an InputChecker.
// It returns l's output shape, nil when a layer on the way is not a Shaper.
// A layer that is neither is trusted: only its own Forward can tell.
func CheckInput(l Layer, x *tensor.Tensor) ([]int, error) {
	if x == nil {
		return nil, &InputError{Layer: "model", Want: "a tensor, not nil"}
	}
	n := 1
	for _, d := range x.Shape {
		if d < 1 {
			return nil, &InputError{Layer: "model", Input: x.Shape, Want: "no empty dimension"}
		}
		if n > math.MaxInt/d {
			return nil, &InputError{Layer: "model", Input: x.Shape, Want: "a shape whose size fits an int"}
		}
		n *= d
	}
	switch {
	case len(x.Shape) == 0:
		return nil, &InputError{Layer: "model", Input: x.Shape, Want: "a batch dimension"}
	case len(x.Data) != n:
		return nil, &InputError{Layer: "model", Input: x.Shape, Want: fmt.Sprintf("%d values, not %d", n, len(x.Data))}
	}
	if err := checkValues(l, x); err != nil {
		return nil, err
	}
	return OutShape(l, x.Shape)
}

// checkValues runs the InputChecker of the layer that first sees x.
func checkValues(l Layer, x *tensor.Tensor) error {
	switch l := l.(type) {
	case InputChecker:
		return l.CheckInput(x)
	case Sequential:
		if len(l) > 0 {
			return checkValues(l[0], x)
		}
	case *Residual:
		return checkValues(l.F, x)
	}
	return nil
}

func wrongInput(layer string, in []int, format string, args ...any) error {
	return &InputError{Layer: layer, Input: slices.Clone(in), Want: fmt.Sprintf(format, args...)}
}

// OutShape chains the layers' shapes; it is nil if one of them is not a
// Shaper.
func (s Sequential) OutShape(in []int) ([]int, error) {
	for _, l := range s {
		out, err := OutShape(l, in)
		if out == nil || err != nil {
			return nil, err
		}
		in = out
	}
	return slices.Clone(in), nil
}

// OutShape is in: the branch must keep its input's shape.
func (r *Residual) OutShape(in []int) ([]int, error) {
	out, err := OutShape(r.F, in)
	if err != nil {
		return nil, err
	}
	if out != nil && !slices.Equal(out, in) {
		return nil, wrongInput("Residual", in, "a shape its branch keeps (it gives %v)", out)
	}
	return slices.Clone(in), nil
}

// OutShape is [B,out] or [B,T,out] for [B,in] or [B,T,in].
func (l *Linear) OutShape(in []int) ([]int, error) {
	if (len(in) != 2 && len(in) != 3) || in[len(in)-1] != l.in {
		return nil, wrongInput("Linear "+l.Weight.Name, in, "[B,%d] or [B,T,%d]", l.in, l.in)
	}
	out := slices.Clone(in)
	out[len(out)-1] = l.out
	return out, nil
}

// OutShape is [B,cout,oh,ow] for [B,cin,h,w].
func (c *Conv2d) OutShape(in []int) ([]int, error) {
	if len(in) != 4 || in[1] != c.cin {
		return nil, wrongInput("Conv2d "+c.Weight.Name, in, "[B,%d,h,w]", c.cin)
	}
	oh, ow := kernels.ConvOut(in[2], c.k, c.stride, c.pad), kernels.ConvOut(in[3], c.k, c.stride, c.pad)
	if oh <= 0 || ow <= 0 {
		return nil, wrongInput("Conv2d "+c.Weight.Name, in, "h, w ≥ %d (a %d×%d kernel, padding %d)", c.k-2*c.pad, c.k, c.k, c.pad)
	}
	return []int{in[0], c.cout, oh, ow}, nil
}

// OutShape is in.
func (*ReLU) OutShape(in []int) ([]int, error) { return slices.Clone(in), nil }

// OutShape is in.
func (*GELU) OutShape(in []int) ([]int, error) { return slices.Clone(in), nil }

// OutShape is in.
func (*Dropout) OutShape(in []int) ([]int, error) { return slices.Clone(in), nil }

// OutShape is [B, d1·d2·…].
func (*Flatten) OutShape(in []int) ([]int, error) {
	return []int{in[0], tensor.Numel(in[1:])}, nil
}

// OutShape is [B,C,oh,ow] for [B,C,h,w] with h, w ≥ K.
func (m *MaxPool2d) OutShape(in []int) ([]int, error) {
	if len(in) != 4 || in[2] < m.K || in[3] < m.K {
		return nil, wrongInput(fmt.Sprintf("MaxPool2d(%d)", m.K), in, "[B,C,h,w] with h, w ≥ %d", m.K)
	}
	return []int{in[0], in[1], kernels.ConvOut(in[2], m.K, m.Stride, 0), kernels.ConvOut(in[3], m.K, m.Stride, 0)}, nil
}

// OutShape is [B,C,OH,OW] for [B,C,h,w].
func (a *AdaptiveAvgPool2d) OutShape(in []int) ([]int, error) {
	if len(in) != 4 {
		return nil, wrongInput("AdaptiveAvgPool2d", in, "[B,C,h,w]")
	}
	return []int{in[0], in[1], a.OH, a.OW}, nil
}

// OutShape is in, whose last dimension must be the normalised width.
func (l *LayerNorm) OutShape(in []int) ([]int, error) {
	if d := l.Weight.Value.Len(); in[len(in)-1] != d {
		return nil, wrongInput("LayerNorm "+l.Weight.Name, in, "[…,%d]", d)
	}
	return slices.Clone(in), nil
}

// OutShape is [B,T,dim] for ids [B,T].
func (e *Embedding) OutShape(in []int) ([]int, error) {
	if len(in) != 2 {
		return nil, wrongInput("Embedding "+e.Weight.Name, in, "ids [B,T]")
	}
	return []int{in[0], in[1], e.Weight.Value.Dim(1)}, nil
}

// CheckInput checks that every id is an integer in [0, num) (CheckTokens).
func (e *Embedding) CheckInput(x *tensor.Tensor) error {
	return CheckTokens(x, e.Weight.Value.Dim(0))
}

// OutShape is in, [B,T,dim] with T ≤ block.
func (p *PositionEmbedding) OutShape(in []int) ([]int, error) {
	block, dim := p.Weight.Value.Dim(0), p.Weight.Value.Dim(1)
	if len(in) != 3 || in[1] > block || in[2] != dim {
		return nil, wrongInput("PositionEmbedding "+p.Weight.Name, in, "[B,T,%d] with T ≤ %d", dim, block)
	}
	return slices.Clone(in), nil
}

// OutShape is [B,T,d] for the packed projections [B,T,3·d].
func (a *CausalAttention) OutShape(in []int) ([]int, error) {
	if len(in) != 3 || in[2]%(3*a.NHead) != 0 {
		return nil, wrongInput(fmt.Sprintf("CausalAttention(%d heads)", a.NHead), in, "[B,T,3·d] with the heads dividing d")
	}
	return []int{in[0], in[1], in[2] / 3}, nil
}

// OutShape is in, [B,T,d].
func (a *CausalSelfAttention) OutShape(in []int) ([]int, error) {
	return Sequential{a.attn(), a.Core, a.proj()}.OutShape(in)
}

// OutShape is [B,num] or [B,T,num], as the projection's.
func (th *TiedHead) OutShape(in []int) ([]int, error) { return th.proj.OutShape(in) }
