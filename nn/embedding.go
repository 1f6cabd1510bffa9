package nn

import (
	"fmt"
	"math"

	"github.com/psclip/psclip/kernels"
	"github.com/psclip/psclip/tensor"
)

// Token ids travel through the Layer interface as float32 values in a [B, T]
// tensor, like every other input. float32 represents every integer below
// 2^24 = 16,777,216 exactly, far above any vocabulary in use (GPT-2's is
// 50,257), so the conversion loses nothing; CheckTokens rejects anything that
// is not such an integer.

// CheckTokens reports an error unless x is a [B, T] tensor of token ids, each
// an integer in [0, vocab). Models call it on their input, so that bad data
// is an error rather than a panic inside Forward.
func CheckTokens(x *tensor.Tensor, vocab int) error {
	if len(x.Shape) != 2 {
		return fmt.Errorf("nn: token ids must be a [batch, time] tensor, got %v", x)
	}
	for i, v := range x.Data {
		if _, ok := tokenID(v, vocab); !ok {
			return fmt.Errorf("nn: token %d (sample %d, position %d) is %v, not an id in [0, %d)",
				i, i/max(x.Shape[1], 1), i%max(x.Shape[1], 1), v, vocab)
		}
	}
	return nil
}

// tokenID converts v to an id in [0, n).
func tokenID(v float32, n int) (int, bool) {
	if !(v >= 0 && v < float32(n)) || v != float32(math.Trunc(float64(v))) {
		return 0, false
	}
	return int(v), true
}

// Embedding maps token ids to rows of its weight [num, dim], as
// torch.nn.Embedding: input [B, T] ids (see CheckTokens), output [B, T, dim].
// It is the first layer of a model: Backward produces no input gradient.
//
// Per-sample rule: sample i's gradient is sparse, with row v equal to the sum
// of dy_i[t] over the positions t where token v occurs. Rows of repeated
// tokens are summed before squaring (grouped through a per-token slot table,
// O(T·dim) per sample); the clipped sum Σ_i c_i·g_i is a scatter of c_i·dy_i.
// When the weight is tied to an output layer (TiedHead), Backward also adds
// the cross term of the two contributions, so that the norm is that of their
// sum. A frozen weight (Param.Frozen) has no gradient and no norm term,
// from either layer.
type Embedding struct {
	Weight *Param

	ids  []int32        // the latest input's ids
	x    *tensor.Tensor // the latest input
	y    *tensor.Tensor
	head *TiedHead // set by NewTiedHead

	slot []int32   // per token: its row in acc while grouping a sample, or -1
	acc  []float32 // the grouped rows of one sample
}

// NewEmbedding returns an embedding of num ids into dim features with
// PyTorch's default initialisation (Init) drawn from the package's default
// source. Its parameter is name+".weight", of shape [num, dim].
func NewEmbedding(name string, num, dim int) *Embedding {
	e := &Embedding{Weight: NewParam(name+".weight", num, dim)}
	initDefault(e)
	return e
}

// Params returns the weight.
func (e *Embedding) Params() []*Param { return []*Param{e.Weight} }

// Forward looks up the rows of the ids in x. It panics on an id that is not
// an integer in [0, num): check untrusted input with CheckTokens.
func (e *Embedding) Forward(ctx *Context, x *tensor.Tensor) *tensor.Tensor {
	num, dim := e.Weight.Value.Dim(0), e.Weight.Value.Dim(1)
	if len(x.Shape) != 2 {
		panic(fmt.Sprintf("nn: Embedding: input %v is not [batch, time]", x))
	}
	e.x = x
	e.ids = resize(e.ids, x.Len())
	e.y = reuse(e.y, x.Shape[0], x.Shape[1], dim)
	w := e.Weight.Value.Data
	for i, v := range x.Data {
		id, ok := tokenID(v, num)
		if !ok {
			panic(fmt.Sprintf("nn: Embedding: id %v out of [0, %d)", v, num))
		}
		e.ids[i] = int32(id)
		copy(e.y.Data[i*dim:(i+1)*dim], w[id*dim:(id+1)*dim])
	}
	return e.y
}

// Backward produces the weight gradient in the context's mode and returns
// nil: ids have no gradient. In the per-sample mode dy must stay unchanged
// until Context.Finish.
func (e *Embedding) Backward(ctx *Context, dy *tensor.Tensor) *tensor.Tensor {
	if !(len(dy.Shape) == 3 && dy.Shape[0] == e.x.Shape[0] && dy.Shape[1] == e.x.Shape[1] && dy.Shape[2] == e.Weight.Value.Dim(1)) {
		panic(fmt.Sprintf("nn: Embedding: gradient %v for ids %v", dy, e.x))
	}
	if e.Weight.Frozen {
		return nil
	}
	if !ctx.PerSample() {
		e.scatter(dy, 0, len(e.ids), 1)
		return nil
	}
	n := len(ctx.SqNorms())
	if dy.Shape[0] != n {
		panic(fmt.Sprintf("nn: Embedding: gradient %v for a batch of %d", dy, n))
	}
	t := dy.Shape[1]
	sq := ctx.SqNorms()
	for i := range n {
		sq[i] += e.groupedSqNorm(dy, i*t, (i+1)*t)
	}
	if e.head != nil {
		e.head.addCross(ctx, e.ids, dy)
	}
	ctx.Defer(func(c []float32) {
		for i, ci := range c {
			if ci != 0 {
				e.scatter(dy, i*t, (i+1)*t, ci)
			}
		}
	})
	return nil
}

// scatter adds s·dy[r] into the weight gradient row of id r, for r in [lo, hi).
func (e *Embedding) scatter(dy *tensor.Tensor, lo, hi int, s float32) {
	dim := e.Weight.Value.Dim(1)
	g := e.Weight.Grad.Data
	for r := lo; r < hi; r++ {
		id := int(e.ids[r])
		kernels.Axpy(s, dy.Data[r*dim:(r+1)*dim], g[id*dim:(id+1)*dim])
	}
}

// groupedSqNorm is |Σ_r dy[r]·e_{id_r}|² over the rows [lo, hi) of one sample:
// rows with the same id are summed before squaring.
func (e *Embedding) groupedSqNorm(dy *tensor.Tensor, lo, hi int) float64 {
	num, dim := e.Weight.Value.Dim(0), e.Weight.Value.Dim(1)
	if len(e.slot) != num {
		e.slot = make([]int32, num)
		for j := range e.slot {
			e.slot[j] = -1
		}
	}
	e.acc = resize(e.acc, (hi-lo)*dim)
	u := 0
	for r := lo; r < hi; r++ {
		id, row := e.ids[r], dy.Data[r*dim:(r+1)*dim]
		if s := e.slot[id]; s >= 0 {
			kernels.Axpy(1, row, e.acc[int(s)*dim:])
			continue
		}
		e.slot[id] = int32(u)
		copy(e.acc[u*dim:(u+1)*dim], row)
		u++
	}
	for r := lo; r < hi; r++ {
		e.slot[e.ids[r]] = -1
	}
	return kernels.SqNorm(e.acc[:u*dim])
}

// PositionEmbedding adds a learnt embedding of each position to its input,
// y[b, t] = x[b, t] + W[t], as nanoGPT adds wpe(arange(T)) to the token
// embedding. W is [block, dim]; inputs are [B, T, dim] with T ≤ block.
//
// Per-sample rule: sample i's gradient is dy_i itself in rows 0..T−1 (the
// positions are distinct), so its squared norm is |dy_i|² and the clipped sum
// adds Σ_i c_i·dy_i into those rows. A frozen weight (Param.Frozen) has
// none.
type PositionEmbedding struct {
	Weight *Param

	t int // the latest input's length
	y *tensor.Tensor
}

// NewPositionEmbedding returns a position embedding for up to block positions
// of dim features, initialised as Init does from the package's default
// source. Its parameter is name+".weight", of shape [block, dim].
func NewPositionEmbedding(name string, block, dim int) *PositionEmbedding {
	p := &PositionEmbedding{Weight: NewParam(name+".weight", block, dim)}
	initDefault(p)
	return p
}

// Params returns the weight.
func (p *PositionEmbedding) Params() []*Param { return []*Param{p.Weight} }

// Forward returns x plus the embedding of every position.
func (p *PositionEmbedding) Forward(ctx *Context, x *tensor.Tensor) *tensor.Tensor {
	block, dim := p.Weight.Value.Dim(0), p.Weight.Value.Dim(1)
	if len(x.Shape) != 3 || x.Shape[1] > block || x.Shape[2] != dim {
		panic(fmt.Sprintf("nn: PositionEmbedding(%d, %d): input %v", block, dim, x))
	}
	p.t = x.Shape[1]
	p.y = reuse(p.y, x.Shape...)
	w := p.Weight.Value.Data[:p.t*dim]
	for b := range x.Shape[0] {
		xb, yb := x.Data[b*len(w):(b+1)*len(w)], p.y.Data[b*len(w):(b+1)*len(w)]
		for j, v := range xb {
			yb[j] = v + w[j]
		}
	}
	return p.y
}

// Backward produces the weight gradient in the context's mode and returns dy
// itself, the input gradient of an addition. In the per-sample mode dy must
// stay unchanged until Context.Finish.
func (p *PositionEmbedding) Backward(ctx *Context, dy *tensor.Tensor) *tensor.Tensor {
	dim := p.Weight.Value.Dim(1)
	if !(len(dy.Shape) == 3 && dy.Shape[1] == p.t && dy.Shape[2] == dim) {
		panic(fmt.Sprintf("nn: PositionEmbedding: gradient %v for length %d", dy, p.t))
	}
	if p.Weight.Frozen {
		return dy
	}
	m := p.t * dim
	g := p.Weight.Grad.Data[:m]
	if !ctx.PerSample() {
		for b := range dy.Shape[0] {
			kernels.Axpy(1, dy.Data[b*m:(b+1)*m], g)
		}
		return dy
	}
	sq := ctx.SqNorms()
	if dy.Shape[0] != len(sq) {
		panic(fmt.Sprintf("nn: PositionEmbedding: gradient %v for a batch of %d", dy, len(sq)))
	}
	for i := range sq {
		sq[i] += kernels.SqNorm(dy.Data[i*m : (i+1)*m])
	}
	ctx.Defer(func(c []float32) {
		for i, ci := range c {
			if ci != 0 {
				kernels.Axpy(ci, dy.Data[i*m:(i+1)*m], g)
			}
		}
	})
	return dy
}
