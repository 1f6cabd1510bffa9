package nn

import (
	"fmt"

	"github.com/psclip/psclip/kernels"
	"github.com/psclip/psclip/tensor"
)

// TiedHead is an output projection logits = h·Wᵀ whose weight W [vocab, d] is
// a token Embedding's weight: GPT's lm_head tied to wte. Its input is
// [B, T, d], its output [B, T, vocab]. The parameter belongs to the
// embedding, so Params is empty and a model lists (and saves) W once.
//
// In the plain mode both layers add their gradients into the one Param.Grad.
// In the per-sample mode sample i's gradient of W is the sum of the two
// contributions, g_i = e_i + o_i (embedding scatter e_i, head o_i =
// dLogits_iᵀ·h_i), and its squared norm needs the cross term:
//
//	|e_i + o_i|² = |e_i|² + |o_i|² + 2⟨e_i, o_i⟩.
//
// The head layer adds |o_i|² by its own per-sample rule (ghost or
// materialised) and the embedding adds |e_i|²; with dE the gradient at the
// embedding's output, the cross term is
//
//	⟨e_i, o_i⟩ = Σ_t ⟨dE_i[t], o_i[tok_t]⟩,
//
// T dot products of d values when the head materialised o_i. Otherwise it is
// computed without o_i,
//
//	⟨e_i, o_i⟩ = Σ_t Σ_s dLogits_i[s, tok_t]·⟨dE_i[t], h_i[s]⟩,
//
// by one T×T×d GEMM M_i = dE_i·h_iᵀ per sample and a gather of T² logit
// gradients. Repeated tokens need no grouping: the sum over t is linear. The
// head's Backward runs first (it is the last layer), keeps h and dLogits, and
// the embedding's Backward adds the cross term. Each layer defers its own
// share of Σ_i c_i·g_i into W.Grad.
type TiedHead struct {
	emb  *Embedding
	proj *Linear // the projection, with weight emb.Weight

	h, dlogits *tensor.Tensor // kept by a per-sample Backward for the cross term
	m          []float32      // M_i for every sample, [B, T, T], when the head uses the ghost norm
}

// NewTiedHead returns the output projection tied to emb: a Linear layer with
// no bias whose weight is emb.Weight.
func NewTiedHead(emb *Embedding) *TiedHead {
	if emb.head != nil {
		panic("nn: NewTiedHead: the embedding is already tied")
	}
	num, dim := emb.Weight.Value.Dim(0), emb.Weight.Value.Dim(1)
	th := &TiedHead{emb: emb, proj: &Linear{Weight: emb.Weight, in: dim, out: num}}
	emb.head = th
	return th
}

// Forward returns x·Wᵀ.
func (th *TiedHead) Forward(ctx *Context, x *tensor.Tensor) *tensor.Tensor {
	th.h = x
	return th.proj.Forward(ctx, x)
}

// Backward returns the input gradient dy·W. In the per-sample mode it keeps
// dy for the embedding's cross term: dy must stay unchanged until
// Context.Finish.
func (th *TiedHead) Backward(ctx *Context, dy *tensor.Tensor) *tensor.Tensor {
	th.dlogits = nil
	if ctx.PerSample() {
		th.dlogits = dy
	}
	return th.proj.Backward(ctx, dy)
}

// Params returns nil: the weight is the embedding's parameter.
func (th *TiedHead) Params() []*Param { return nil }

// addCross adds 2⟨e_i, o_i⟩ into every sample's squared norm, given the
// embedding's ids [B·T] and output gradient de [B, T, d]. It does nothing
// when the head's latest Backward was not in the per-sample mode.
func (th *TiedHead) addCross(ctx *Context, ids []int32, de *tensor.Tensor) {
	if th.dlogits == nil {
		return
	}
	dl, h := th.dlogits, th.h
	th.dlogits = nil
	b, t, d := de.Shape[0], de.Shape[1], de.Shape[2]
	v := th.emb.Weight.Value.Dim(0)
	if !(h.SameShape(de) && len(dl.Shape) == 3 && dl.Shape[0] == b && dl.Shape[1] == t && dl.Shape[2] == v) {
		panic(fmt.Sprintf("nn: TiedHead: embedding gradient %v, head input %v and logit gradient %v do not match", de, h, dl))
	}
	sq := ctx.SqNorms()
	if !th.proj.ghost {
		parallel(b, workers(b), func(_, lo, hi int) {
			for i := lo; i < hi; i++ {
				o := th.proj.psW[i*v*d : (i+1)*v*d] // [vocab, d]
				var cross float64
				for tt, tok := range ids[i*t : (i+1)*t] {
					cross += kernels.Dot(de.Data[(i*t+tt)*d:(i*t+tt+1)*d], o[int(tok)*d:])
				}
				sq[i] += 2 * cross
			}
		})
		return
	}
	th.m = resize(th.m, b*t*t)
	parallel(b, workers(b), func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			m := th.m[i*t*t : (i+1)*t*t]
			kernels.Sgemm(false, true, t, t, d, 1, de.Data[i*t*d:], d, h.Data[i*t*d:], d, 0, m, t)
			dli := dl.Data[i*t*v : (i+1)*t*v]
			var cross float64
			for tt, tok := range ids[i*t : (i+1)*t] {
				mr := m[tt*t : (tt+1)*t]
				var s float32
				for ss, mv := range mr {
					s += dli[ss*v+int(tok)] * mv
				}
				cross += float64(s)
			}
			sq[i] += 2 * cross
		}
	})
}
