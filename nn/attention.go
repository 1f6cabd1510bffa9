package nn

import (
	"fmt"
	"iter"
	"math"

	"github.com/psclip/psclip/kernels"
	"github.com/psclip/psclip/tensor"
)

// CausalAttention is the parameter-free core of causal multi-head
// self-attention: it takes the packed projections qkv [B, T, 3d] (q, k and v
// side by side, each split into NHead heads of d/NHead features, as nanoGPT's
// c_attn output) and returns softmax(q·kᵀ/√(d/NHead) + causal mask)·v with the
// heads concatenated, [B, T, d].
//
// Every (sample, head) pair is an independent job of small GEMMs that read q,
// k and v in place through leading dimensions (no transposed copies), run in
// parallel; each output element is computed by one job in a fixed order, so
// results do not depend on GOMAXPROCS. The products over causal blocks of
// query rows that take kᵀ or vᵀ share it, and a job packs it (a transposing
// pack) once for all its blocks (kernels.PackedB) rather than once a block.
type CausalAttention struct {
	NHead int
	// Drop is applied to the attention probabilities (nanoGPT's
	// attn_dropout); nil means none.
	Drop *Dropout

	b, t, d int
	qkv     *tensor.Tensor
	p       *tensor.Tensor // softmax probabilities [B, H, T, T]
	pd      *tensor.Tensor // probabilities after dropout: p itself without it
	dp      *tensor.Tensor // gradient of p (then of the scores), [B, H, T, T]
	y, dqkv *tensor.Tensor
	exps    [][]float64       `held:"-"` // per worker: causalSoftmax's scratch
	packs   []kernels.PackedB `held:"-"` // per worker: kᵀ or vᵀ of a job's causal blocks
}

// Forward computes the attention output for the packed projections x.
func (a *CausalAttention) Forward(ctx *Context, x *tensor.Tensor) *tensor.Tensor {
	if len(x.Shape) != 3 || x.Shape[2]%(3*a.NHead) != 0 {
		panic(fmt.Sprintf("nn: CausalAttention(%d heads): input %v is not [B, T, 3·d] with heads dividing d", a.NHead, x))
	}
	a.b, a.t, a.d = x.Shape[0], x.Shape[1], x.Shape[2]/3
	b, t, d, h := a.b, a.t, a.d, a.NHead
	a.qkv = x
	a.p = reuse(a.p, b, h, t, t)
	a.y = reuse(a.y, b, t, d)
	for len(a.exps) < workers(b*h) {
		a.exps = append(a.exps, make([]float64, softmaxSpan))
	}
	a.growPacks()
	if a.Drop.dropping(ctx) {
		// The mask is drawn over all the probabilities at once, between
		// the two halves of every job.
		a.each(func(w, j int) { a.probs(w, j) })
		a.pd = a.Drop.Forward(ctx, a.p)
		a.each(func(_, j int) { a.mix(j) })
		return a.y
	}
	if a.Drop != nil {
		a.Drop.Forward(ctx, a.p) // the identity; Backward's will be too
	}
	a.pd = a.p
	a.each(func(w, j int) {
		a.probs(w, j)
		a.mix(j)
	})
	return a.y
}

// probs sets job j's probabilities softmax(q·kᵀ/√hd + causal mask), using
// worker w's scratch.
func (a *CausalAttention) probs(w, j int) {
	t, d := a.t, a.d
	hd := d / a.NHead
	q, k, _ := a.heads(a.qkv.Data, j)
	p := a.p.Data[j*t*t : (j+1)*t*t]
	kt := &a.packs[w]
	kt.Pack(true, hd, t, k, 3*d) // kᵀ
	for r0, r1 := range causalBlocks(t) {
		kernels.SgemmPacked(false, r1-r0, r1, hd, a.scale(), q[r0*3*d:], 3*d, kt, 0, p[r0*t:], t)
	}
	causalSoftmax(p, t, a.exps[w])
}

// mix sets job j's output, its probabilities (after dropout) times v.
// Each block packs its rows of v again (unlike kᵀ in probs): a plain pack
// streams v in order, and read back from a packing of all of v the panels
// came from L3 rather than L2 (kernels' BenchmarkCausalAttention, pv).
func (a *CausalAttention) mix(j int) {
	t, d := a.t, a.d
	_, _, v := a.heads(a.qkv.Data, j)
	pd, y := a.pd.Data[j*t*t:], a.out(a.y.Data, j)
	for r0, r1 := range causalBlocks(t) {
		kernels.Sgemm(false, false, r1-r0, d/a.NHead, r1, 1, pd[r0*t:], t, v, 3*d, 0, y[r0*d:], d)
	}
}

// growPacks gives every worker of each its own PackedB.
func (a *CausalAttention) growPacks() {
	if n := workers(a.b * a.NHead); len(a.packs) < n {
		a.packs = make([]kernels.PackedB, n)
	}
}

// scale is the scores' factor 1/√hd.
func (a *CausalAttention) scale() float32 {
	return float32(1 / math.Sqrt(float64(a.d/a.NHead)))
}

// Backward returns the gradient with respect to the packed projections.
func (a *CausalAttention) Backward(ctx *Context, dy *tensor.Tensor) *tensor.Tensor {
	return a.backward(ctx, dy, nil)
}

// backward is Backward. In the per-sample mode, with next the Linear layer
// whose output gradient it returns (c_attn), it also does next's per-sample
// work on each sample's rows of that gradient as soon as the sample's heads
// are done, while the rows are in cache (Linear.sampleWork): next's
// Backward then only adds the norms.
func (a *CausalAttention) backward(ctx *Context, dy *tensor.Tensor, next *Linear) *tensor.Tensor {
	b, t, d, h := a.b, a.t, a.d, a.NHead
	if !(len(dy.Shape) == 3 && dy.Shape[0] == b && dy.Shape[1] == t && dy.Shape[2] == d) {
		panic(fmt.Sprintf("nn: CausalAttention: gradient %v for output [%d %d %d]", dy, b, t, d))
	}
	a.dp = reuse(a.dp, b, h, t, t)
	a.dqkv = reuse(a.dqkv, b, t, 3*d)
	a.growPacks()
	last := a.each // the pass that completes the samples' rows of dqkv
	if next != nil && ctx.PerSample() {
		next.beginSamples(ctx, a.dqkv)
		last = func(job func(w, j int)) { a.eachSample(job, next) }
	}
	if a.Drop != nil && a.Drop.train {
		a.each(func(w, j int) { a.probsGrad(w, j, dy) })
		dp := a.Drop.Backward(ctx, a.dp)
		last(func(_, j int) { a.scoresGrad(j, dp) })
	} else {
		last(func(w, j int) {
			a.probsGrad(w, j, dy)
			a.scoresGrad(j, a.dp)
		})
	}
	if next != nil && ctx.PerSample() {
		next.early = a.dqkv
	}
	return a.dqkv
}

// eachSample is each with the samples shared out among the workers, a
// sample's heads on one worker, which then does next's per-sample work on
// the sample's rows of dqkv.
func (a *CausalAttention) eachSample(job func(w, j int), next *Linear) {
	parallel(a.b, workers(a.b), func(w, lo, hi int) {
		gy := next.gramScratch()
		for i := lo; i < hi; i++ {
			for j := i * a.NHead; j < (i+1)*a.NHead; j++ {
				job(w, j)
			}
			next.sampleWork(a.dqkv, i, gy)
		}
		putGramScratch(gy)
	})
}

// probsGrad sets job j's gradient of the probabilities (after dropout),
// dy·vᵀ, into a.dp, and that of v, pdᵀ·dy, using worker w's scratch.
func (a *CausalAttention) probsGrad(w, j int, dy *tensor.Tensor) {
	t, d := a.t, a.d
	hd := d / a.NHead
	_, _, v := a.heads(a.qkv.Data, j)
	_, _, dv := a.heads(a.dqkv.Data, j)
	dyj, dp := a.out(dy.Data, j), a.dp.Data[j*t*t:]
	vt := &a.packs[w]
	vt.Pack(true, hd, t, v, 3*d) // vᵀ
	for r0, r1 := range causalBlocks(t) {
		kernels.SgemmPacked(false, r1-r0, r1, hd, 1, dyj[r0*d:], d, vt, 0, dp[r0*t:], t)
	}
	kernels.SgemmUpper(true, false, t, hd, t, 1, a.pd.Data[j*t*t:], t, dyj, d, dv, 3*d)
}

// scoresGrad turns job j's gradient of the probabilities (before dropout),
// dp, into that of the scores times 1/√hd, in a.dp, and sets the gradients
// of q and k from it. The products take the factor from there, each value
// the rounded product that scaling it in the GEMM (alpha) would pack, so
// that the GEMMs read an unscaled operand (in place, where they can). The
// blocks of dq pack their rows of k as mix does those of v.
func (a *CausalAttention) scoresGrad(j int, dp *tensor.Tensor) {
	t, d := a.t, a.d
	hd := d / a.NHead
	q, k, _ := a.heads(a.qkv.Data, j)
	dq, dk, _ := a.heads(a.dqkv.Data, j)
	ds := a.dp.Data[j*t*t : (j+1)*t*t]
	causalSoftmaxBackward(a.p.Data[j*t*t:(j+1)*t*t], dp.Data[j*t*t:(j+1)*t*t], ds, t, a.scale())
	for r0, r1 := range causalBlocks(t) {
		kernels.Sgemm(false, false, r1-r0, hd, r1, 1, ds[r0*t:], t, k, 3*d, 0, dq[r0*3*d:], 3*d)
	}
	kernels.SgemmUpper(true, false, t, hd, t, 1, ds, t, q, 3*d, dk, 3*d)
}

// Params returns nil: the attention core has no parameters.
func (a *CausalAttention) Params() []*Param { return nil }

// causalBlocks yields the blocks [r0, r1) of attnBlock query rows that
// split t positions. The scores and probabilities of rows r0..r1−1 are zero
// (masked) beyond column r1−1, so the products that produce scores or their
// gradients, and those that sum over a row's probabilities or score
// gradients, stop at column r1: about half the flops of the whole t×t
// products for long sequences. Left out are only terms at the end of a sum
// that were exact zeros, so every computed element is unchanged, except
// that a sum with non-finite values beside masked zeros (0·Inf) is no longer
// NaN. The products that sum over a column (dV = Pᵀ·dY, dK = dSᵀ·Q) drop
// the zeros at the start of their sums in whole slices of the GEMM's
// blocking of the sum (kernels.SgemmUpper), with the same exception.
func causalBlocks(t int) iter.Seq2[int, int] {
	return func(yield func(int, int) bool) {
		for r0 := 0; r0 < t; r0 += attnBlock {
			if !yield(r0, min(r0+attnBlock, t)) {
				return
			}
		}
	}
}

// attnBlock is the number of query rows of causalBlocks: at T = 64 (the
// character GPT) one block, the whole product, as a smaller one would cost
// more in calls than it saves.
const attnBlock = 64

// each runs job(w, j) for every (sample, head) pair j = sample·NHead + head,
// in parallel, w being the worker; every job writes only its own blocks.
func (a *CausalAttention) each(job func(w, j int)) {
	n := a.b * a.NHead
	parallel(n, workers(n), func(w, lo, hi int) {
		for j := lo; j < hi; j++ {
			job(w, j)
		}
	})
}

// heads returns the q, k and v blocks of job j = sample·NHead + head inside
// the packed [B, T, 3d] buffer s: each starts at its first element and has
// leading dimension 3d.
func (a *CausalAttention) heads(s []float32, j int) (q, k, v []float32) {
	hd := a.d / a.NHead
	off := (j/a.NHead)*a.t*3*a.d + (j%a.NHead)*hd
	return s[off:], s[off+a.d:], s[off+2*a.d:]
}

// out returns the block of job j inside a [B, T, d] buffer (leading dimension d).
func (a *CausalAttention) out(s []float32, j int) []float32 {
	return s[(j/a.NHead)*a.t*a.d+(j%a.NHead)*(a.d/a.NHead):]
}

// causalSoftmax turns the t×t scores p into row-wise softmax probabilities
// over the columns s ≤ row, and zeroes the masked columns s > row. The
// exponentials of as many consecutive rows as fit the scratch e go to
// kernels.Exp in one call (a row of T = 64 alone would be eight lanes' work
// and a call); a longer row is done in blocks by causalSoftmaxRow.
func causalSoftmax(p []float32, t int, e []float64) {
	for r := 0; r < t; {
		n, end := 0, r
		for ; end < t && n+end+1 <= len(e); end++ {
			row := p[end*t : end*t+end+1]
			m := rowMax(row)
			for s, v := range row {
				e[n+s] = float64(v - m)
			}
			n += end + 1
		}
		if end == r {
			causalSoftmaxRow(p[r*t:(r+1)*t], r)
			r++
			continue
		}
		kernels.Exp(e[:n])
		n = 0
		for ; r < end; r++ {
			row, er := p[r*t:(r+1)*t], e[n:n+r+1]
			var sum float32
			for s, v := range er {
				row[s] = float32(v)
				sum += row[s]
			}
			kernels.Scale(1/sum, row[:r+1])
			clear(row[r+1:])
			n += r + 1
		}
	}
}

// rowMax returns the largest value of row, or NaN if row[0] is NaN. A NaN
// elsewhere is passed over, but it makes the row's sum, and so the whole
// softmax row, NaN as it would have.
func rowMax(row []float32) float32 {
	m := row[0]
	for _, v := range row[1:] {
		if v > m {
			m = v
		}
	}
	return m
}

// softmaxSpan is the length of causalSoftmax's scratch: the number of
// exponentials it gathers for one call of kernels.Exp.
const softmaxSpan = 2048

// causalSoftmaxRow is causalSoftmax for row r alone (columns 0..r live),
// a row too long for the scratch, in blocks of kernels.ExpBlock: the same
// operations in the same order.
func causalSoftmaxRow(row []float32, r int) {
	var e [kernels.ExpBlock]float64
	m := rowMax(row[:r+1])
	var sum float32
	for lo := 0; lo <= r; lo += kernels.ExpBlock {
		rb := row[lo:min(lo+kernels.ExpBlock, r+1)]
		eb := e[:len(rb)]
		for s, v := range rb {
			eb[s] = float64(v - m)
		}
		kernels.Exp(eb)
		for s, v := range eb {
			rb[s] = float32(v)
			sum += rb[s]
		}
	}
	kernels.Scale(1/sum, row[:r+1])
	clear(row[r+1:])
}

// causalSoftmaxBackward sets ds, the gradient of the scores times scale,
// from the probabilities p and their gradient dp: ds = scale·(p⊙(dp −
// Σ_s p·dp)) row by row, the gradient rounded before it is scaled, zero on
// the masked columns. ds may alias dp.
func causalSoftmaxBackward(p, dp, ds []float32, t int, scale float32) {
	for r := range t {
		pr, dpr, dsr := p[r*t:(r+1)*t], dp[r*t:(r+1)*t], ds[r*t:(r+1)*t]
		var dot float32
		for s := range r + 1 {
			dot += pr[s] * dpr[s]
		}
		for s := range r + 1 {
			dsr[s] = scale * float32(pr[s]*(dpr[s]-dot)) // float32: rounded before it is scaled
		}
		clear(dsr[r+1:])
	}
}

// CausalSelfAttention is nanoGPT's CausalSelfAttention: c_attn = Linear(d, 3d)
// produces q, k and v, the CausalAttention core mixes the positions, and
// c_proj = Linear(d, d) projects back, followed by the residual dropout.
// Input and output are [B, T, d]. Its parameters are the two Linear layers'
// (per-sample norms by their own rule), or their LoRA adaptations'; the
// core has none.
type CausalSelfAttention struct {
	CAttn, CProj *Linear
	// AttnLoRA and ProjLoRA, when set, are LoRA adaptations of c_attn and
	// c_proj (their Base is CAttn or CProj), which the layer then uses in
	// their place: Adapt sets them.
	AttnLoRA, ProjLoRA *LoRA
	Core               *CausalAttention
	// ResidDrop is nanoGPT's resid_dropout on the output; nil means none.
	ResidDrop *Dropout
}

// NewCausalSelfAttention returns attention over d features in nHead heads,
// with parameters name+".c_attn.weight" [3d, d] and name+".c_proj.weight"
// [d, d] (and biases with bias), initialised as NewLinear does, and both
// dropouts with probability dropout. It panics unless nHead divides d.
func NewCausalSelfAttention(name string, d, nHead int, dropout float64, bias bool) *CausalSelfAttention {
	if nHead <= 0 || d%nHead != 0 {
		panic(fmt.Sprintf("nn: NewCausalSelfAttention: %d heads do not divide %d features", nHead, d))
	}
	return &CausalSelfAttention{
		CAttn:     NewLinear(name+".c_attn", d, 3*d, bias),
		CProj:     NewLinear(name+".c_proj", d, d, bias),
		Core:      &CausalAttention{NHead: nHead, Drop: NewDropout(dropout)},
		ResidDrop: NewDropout(dropout),
	}
}

// Adapt replaces c_attn (attn) and c_proj (proj), whichever is asked for,
// by their LoRA adaptations at the given rank and α (NewLoRA), which
// freezes their base weights.
func (a *CausalSelfAttention) Adapt(attn, proj bool, rank int, alpha float64) error {
	var err error
	if attn {
		if a.AttnLoRA, err = NewLoRA(a.CAttn, rank, alpha); err != nil {
			return err
		}
	}
	if proj {
		a.ProjLoRA, err = NewLoRA(a.CProj, rank, alpha)
	}
	return err
}

// Merge merges the LoRA adaptations into c_attn's and c_proj's weights
// (LoRA.Merge) and removes them.
func (a *CausalSelfAttention) Merge() {
	if a.AttnLoRA != nil {
		a.CAttn, a.AttnLoRA = a.AttnLoRA.Merge(), nil
	}
	if a.ProjLoRA != nil {
		a.CProj, a.ProjLoRA = a.ProjLoRA.Merge(), nil
	}
}

// attn is c_attn or its adaptation.
func (a *CausalSelfAttention) attn() Layer {
	if a.AttnLoRA != nil {
		return a.AttnLoRA
	}
	return a.CAttn
}

// proj is c_proj or its adaptation.
func (a *CausalSelfAttention) proj() Layer {
	if a.ProjLoRA != nil {
		return a.ProjLoRA
	}
	return a.CProj
}

// Forward computes the attention output.
func (a *CausalSelfAttention) Forward(ctx *Context, x *tensor.Tensor) *tensor.Tensor {
	y := a.proj().Forward(ctx, a.Core.Forward(ctx, a.attn().Forward(ctx, x)))
	if a.ResidDrop != nil {
		y = a.ResidDrop.Forward(ctx, y)
	}
	return y
}

// Backward returns the input gradient; the Linear layers (or their
// adaptations) produce their gradients in the context's mode.
func (a *CausalSelfAttention) Backward(ctx *Context, dy *tensor.Tensor) *tensor.Tensor {
	if a.ResidDrop != nil {
		dy = a.ResidDrop.Backward(ctx, dy)
	}
	return a.attn().Backward(ctx, a.Core.backward(ctx, a.proj().Backward(ctx, dy), a.next()))
}

// BackwardParams produces the gradients of Backward and no input gradient:
// with c_attn (or its adaptation) frozen, only c_proj's backward pass runs.
func (a *CausalSelfAttention) BackwardParams(ctx *Context, dy *tensor.Tensor) {
	if a.ResidDrop != nil {
		dy = a.ResidDrop.Backward(ctx, dy)
	}
	if !trains(a.attn()) {
		BackwardParams(ctx, a.proj(), dy)
		return
	}
	BackwardParams(ctx, a.attn(), a.Core.backward(ctx, a.proj().Backward(ctx, dy), a.next()))
}

// next is the layer whose per-sample work the core's backward pass does
// (CausalAttention.backward): c_attn, unless it has nothing to train or is
// adapted (its adapters do their own).
func (a *CausalSelfAttention) next() *Linear {
	if a.AttnLoRA != nil || !a.CAttn.trains() {
		return nil
	}
	return a.CAttn
}

// Params returns c_attn's parameters, then c_proj's, each followed by its
// adapters' (LoRA.Params).
func (a *CausalSelfAttention) Params() []*Param {
	return append(a.attn().Params(), a.proj().Params()...)
}
