package nn

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/psclip/psclip/kernels"
	"github.com/psclip/psclip/tensor"
)

// Linear is the affine map y = x·Wᵀ + b applied to the last dimension of its
// input: [B,in] → [B,out], or [B,T,in] → [B,T,out] for sequences.
// Weight is [out,in] and Bias [out], as in PyTorch.
//
// Per-sample rule. With A_i the sample's input rows [T,in] and B_i its output
// gradient rows [T,out], the sample's weight gradient is g_i = B_iᵀA_i.
//   - T = 1: |g_i|² = |a_i|²·|b_i|² (ghost norm, O(in+out)).
//   - ghost: |g_i|² = ⟨A_iA_iᵀ, B_iB_iᵀ⟩ through the two T×T Gram matrices
//     (kernels.RowGram, kernels.RowGramDot); the clipped gradient Σ_i c_i g_i
//     is then one GEMM over the whole batch with the rows of the narrower of
//     x and dy scaled by c_i, which replaces the plain weight-gradient GEMM.
//     When the context is in the per-sample mode already in Forward, A_iA_iᵀ
//     is formed there, while x is in cache from the layer that wrote it
//     (formed later in Backward, x has to come back from memory, and the Gram
//     matrices are bound by that at T = 64); B_iB_iᵀ is formed on entry to
//     Backward, where dy is in cache, or, for the c_attn of a
//     CausalSelfAttention, by the attention core's backward pass as it
//     finishes each sample's rows of dy (sampleWork).
//   - materialise: g_i is formed by per-sample GEMMs that replace the plain
//     weight-gradient GEMM, each adding up |g_i|² block by block as it
//     writes them (kernels.SgemmSqNorm, one goroutine a sample), and the
//     clipped gradient is the weighted sum of the g_i.
//
// The automatic choice between the two is a cost model (see rule.choose):
// materialising adds no arithmetic, only passes over B·in·out floats and
// their memory, while the ghost norm adds 2T²(in+out) flops per sample.
//
// The bias's per-sample gradient Σ_t b_it is always formed: it is small.
//
// A frozen weight or bias (Param.Frozen) takes no part: no gradient, no
// Gram matrix, no per-sample gradient, no norm term.
type Linear struct {
	Weight *Param // [out,in]
	Bias   *Param // [out]; nil without bias
	// NoInputGrad makes Backward skip the input gradient and return nil: set
	// it on a model's first layer, whose input gradient nobody uses.
	NoInputGrad bool

	in, out int
	rule    rule // forced per-sample rule (tests); ruleAuto in use
	ghost   bool // the latest per-sample Backward's choice: psW not formed
	noW     bool // the latest per-sample Backward left the (frozen) weight out

	x     *tensor.Tensor // input of the latest Forward
	gx    []float32      // per-sample mode: the Gram matrices A_iA_iᵀ, RowGramLen(T) floats a sample
	gxOK  bool           // gx holds those of the latest Forward's input
	y, dx *tensor.Tensor // reused output buffers
	yt    []float32      // Forward with few rows: W·xᵀ [out,rows]
	dy    *tensor.Tensor // per-sample mode: the output gradient, read by Finish
	early *tensor.Tensor // per-sample mode: the dy whose samples' work is done (sampleWork) ahead of Backward
	norms []float64      // per-sample mode: each sample's squared norm of this layer's gradients, added into SqNorms by Backward
	psW   []float32      // materialised per-sample weight gradients [B,out,in]
	psB   []float32      // per-sample bias gradients [B,out]
}

// rule selects how a layer computes per-sample gradient norms.
type rule int

const (
	ruleAuto        rule = iota // the cost model of choose
	ruleGhost                   // ghost norm, no per-sample gradient
	ruleMaterialise             // per-sample gradients formed explicitly
	ruleMixed                   // the DP literature's rule: ghost when 2T² ≤ in·out
)

// passCost is the cost of one float of a materialised per-sample gradient,
// in flops of the ghost norm's Gram matrices as rule.choose counts them:
// the float is written by the sample's GEMM, read for its norm and again
// for the weighted sum. BenchmarkRuleCost measures it as the ratio of the
// two per-sample modes' extra times at GPT's shapes: 78 is the median of
// its values (README.md). The automatic rule's decisions on the models
// (TestRuleChoose) hold for any value from 23 to 128; a budget's plan
// moves with it.
const passCost = 78

// choose resolves r for a layer whose per-sample gradient is the product of
// t positions (rows of a sequence, output pixels of a convolution) of in
// inputs and out outputs, its ghost norm costing gram flops a sample, and
// returns whether that is the ghost norm.
//
// The literature's mixed rule (ghost when 2T² ≤ in·out) assumes that
// materialising is work on top of the weight-gradient GEMM. Here the
// per-sample GEMMs replace that GEMM, so materialising costs only the passes
// over the per-sample gradients and their memory, while the ghost norm's
// Gram matrices cost 2T²(in+out) flops on top. The automatic rule compares
// the two, and materialises only while the per-sample gradients (in·out
// floats a sample) take no more memory than the activations the layer holds
// anyway (its input and output, T·(in+out) a sample), which bounds the extra
// memory of a per-sample step by that of the plain step's activations.
func (r rule) choose(t, in, out int, gram float64) (ghost bool) {
	switch r {
	case ruleGhost:
		return true
	case ruleMaterialise:
		return false
	case ruleMixed:
		return 2*float64(t)*float64(t) <= float64(in)*float64(out)
	}
	if t == 1 {
		return true
	}
	tf, g := float64(t), float64(in)*float64(out)
	if g > tf*float64(in+out) {
		return true
	}
	return gram < passCost*g
}

// NewLinear returns a Linear layer from in to out features whose parameters
// are named prefix+".weight" and prefix+".bias", with PyTorch's default
// initialisation (Init) drawn from the package's default source (see Init
// to choose a seed).
func NewLinear(prefix string, in, out int, bias bool) *Linear {
	if in <= 0 || out <= 0 {
		panic(fmt.Sprintf("nn: NewLinear(%q, %d, %d): sizes must be positive", prefix, in, out))
	}
	l := &Linear{Weight: NewParam(prefix+".weight", out, in), in: in, out: out}
	if bias {
		l.Bias = NewParam(prefix+".bias", out)
	}
	initDefault(l)
	return l
}

// Params returns the weight and, if present, the bias.
func (l *Linear) Params() []*Param {
	if l.Bias == nil {
		return []*Param{l.Weight}
	}
	return []*Param{l.Weight, l.Bias}
}

// Forward computes x·Wᵀ + b over the last dimension of x. The output is owned
// by the layer and overwritten by its next Forward.
func (l *Linear) Forward(ctx *Context, x *tensor.Tensor) *tensor.Tensor {
	if (len(x.Shape) != 2 && len(x.Shape) != 3) || x.Dim(-1) != l.in {
		panic(fmt.Sprintf("nn: %s: input %v, want [B,%d] or [B,T,%d]", l.Weight.Name, x, l.in, l.in))
	}
	l.x = x
	l.gxOK = false
	l.early = nil
	if len(x.Shape) == 3 && !l.Weight.Frozen && (ctx.PerSample() || ctx.PerSampleMemory > 0) {
		if ghost := ctx.offer(l.offer(x.Dim(0), x.Dim(1)), l.rule); ghost && ctx.PerSample() {
			l.inputGrams(x)
		}
	}
	shape := append(append([]int(nil), x.Shape[:len(x.Shape)-1]...), l.out)
	l.y = reuse(l.y, shape...)
	rows := x.Rows()
	if rows < l.out {
		l.forwardT(rows)
		return l.y
	}
	kernels.Sgemm(false, true, rows, l.out, l.in, 1, x.Data, l.in, l.Weight.Value.Data, l.in, 0, l.y.Data, l.out)
	if l.Bias != nil {
		b := l.Bias.Value.Data
		for r := 0; r < rows; r++ {
			row := l.y.Data[r*l.out : (r+1)*l.out]
			for j := range row {
				row[j] += b[j]
			}
		}
	}
	return l.y
}

// forwardT computes y = x·Wᵀ + b for an input of fewer rows than outputs
// (the batch-64 classifier) as (W·xᵀ)ᵀ: the GEMM then reads the weight in
// place as its A operand and packs only the small x, where x·Wᵀ packs the
// whole weight, transposing it, on every call. Each output is the same dot
// product accumulated in the same order (the GEMM's operations per element
// do not depend on which operand is A), and the bias is added after it as
// in Forward, so y is bit-identical.
func (l *Linear) forwardT(rows int) {
	n := rows * l.out
	yt := resize(l.yt, n)
	l.yt = yt
	kernels.Sgemm(false, true, l.out, rows, l.in, 1, l.Weight.Value.Data, l.in, l.x.Data, l.in, 0, yt, rows)
	var b []float32
	if l.Bias != nil {
		b = l.Bias.Value.Data
	}
	transposeAdd(l.y.Data, yt, rows, l.out, b)
}

// offer is the layer as the per-sample plan sees it for n samples of t
// positions: its ghost norm's two Gram matrices cost 2T²(in+out) flops a
// sample as full products.
func (l *Linear) offer(n, t int) offer {
	return offer{key: l, n: n, t: t, in: l.in, out: l.out, gram: 2 * float64(t) * float64(t) * float64(l.in+l.out)}
}

// inputGrams forms the Gram matrix A_iA_iᵀ [T,T] of every sample's input
// rows x_i [T,in] into gx, for the ghost norm of the next Backward.
func (l *Linear) inputGrams(x *tensor.Tensor) {
	n, t := x.Dim(0), x.Dim(1)
	m := kernels.RowGramLen(t)
	l.gx = resize(l.gx, n*m)
	parallel(n, workers(n), func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			kernels.RowGram(t, x.Data[i*t*l.in:(i+1)*t*l.in], l.in, l.gx[i*m:(i+1)*m])
		}
	})
	l.gxOK = true
}

// Backward returns dy·W and produces the weight gradients as Context says.
// The input gradient is owned by the layer and overwritten by its next
// Backward.
func (l *Linear) Backward(ctx *Context, dy *tensor.Tensor) *tensor.Tensor {
	return l.backward(ctx, dy, !l.NoInputGrad)
}

// BackwardParams produces the weight gradients of Backward and no input
// gradient.
func (l *Linear) BackwardParams(ctx *Context, dy *tensor.Tensor) { l.backward(ctx, dy, false) }

// biasTrains reports whether the layer has a bias to train.
func (l *Linear) biasTrains() bool { return l.Bias != nil && !l.Bias.Frozen }

// trains reports whether the layer has a parameter to train.
func (l *Linear) trains() bool { return !l.Weight.Frozen || l.biasTrains() }

// backward is Backward, forming the input gradient only with input.
func (l *Linear) backward(ctx *Context, dy *tensor.Tensor, input bool) *tensor.Tensor {
	x := l.x
	if x == nil || dy.Len() != x.Rows()*l.out {
		panic(fmt.Sprintf("nn: %s: Backward with dy %v after Forward of %v", l.Weight.Name, dy, x))
	}
	rows := x.Rows()
	// The input gradient dx = dy·W ([rows,out]·[out,in]) and the weight
	// gradient dW += dyᵀ·x ([out,rows]·[rows,in]) take the same flops and
	// are independent: one goroutine computes dx whole while the others
	// start on dW, which it then joins (kernels.SgemmConcurrent).
	gemms := make([]kernels.Gemm, 0, 2)
	if input {
		l.dx = reuse(l.dx, x.Shape...)
		gemms = append(gemms, kernels.Gemm{M: rows, N: l.in, K: l.out, Alpha: 1, A: dy.Data, LDA: l.out, B: l.Weight.Value.Data, LDB: l.in, C: l.dx.Data, LDC: l.in})
	}
	switch {
	case !l.trains():
	case ctx.PerSample():
		l.perSample(ctx, dy)
	default:
		if !l.Weight.Frozen {
			gemms = append(gemms, kernels.Gemm{TransA: true, M: l.out, N: l.in, K: rows, Alpha: 1, A: dy.Data, LDA: l.out, B: x.Data, LDB: l.in, Beta: 1, C: l.Weight.Grad.Data, LDC: l.in})
		}
		if l.biasTrains() {
			db := l.Bias.Grad.Data
			for r := 0; r < rows; r++ {
				kernels.Axpy(1, dy.Data[r*l.out:(r+1)*l.out], db)
			}
		}
	}
	kernels.SgemmConcurrent(gemms...)
	if !input {
		return nil
	}
	return l.dx
}

// perSample adds every sample's squared gradient norm into ctx.SqNorms and
// defers the clipped weight gradient. A layer before this one in the
// backward pass may have done the samples' work already, each while its rows
// of dy were in cache (beginSamples, sampleWork): then only the norms are
// added, in the same order.
func (l *Linear) perSample(ctx *Context, dy *tensor.Tensor) {
	if l.early != dy {
		l.beginSamples(ctx, dy)
		n := len(ctx.SqNorms())
		parallel(n, workers(n), func(_, lo, hi int) {
			gy := l.gramScratch()
			for i := lo; i < hi; i++ {
				l.sampleWork(dy, i, gy)
			}
			putGramScratch(gy)
		})
	}
	l.early = nil
	sq := ctx.SqNorms()
	for i, s := range l.norms {
		sq[i] += s
	}
	t, ghost, noW := l.x.Rows()/len(sq), l.ghost, l.noW
	l.dy = dy
	ctx.Defer(func(c []float32) {
		switch {
		case noW:
		case ghost:
			l.clippedGEMM(c, t)
		default:
			weightedSum(l.Weight.Grad.Data, l.psW, c)
		}
		if l.biasTrains() {
			weightedSum(l.Bias.Grad.Data, l.psB, c)
		}
		l.dy = nil
	})
}

// beginSamples prepares the per-sample work of a Backward with output
// gradient dy (sampleWork): it picks the rule, forms the input's Gram
// matrices if Forward did not, and sizes the per-sample buffers.
func (l *Linear) beginSamples(ctx *Context, dy *tensor.Tensor) {
	n := len(ctx.SqNorms())
	x := l.x
	if x == nil || x.Dim(0) != n || dy.Len() != x.Rows()*l.out {
		panic(fmt.Sprintf("nn: %s: per-sample Backward with dy %v after Forward of %v for %d samples", l.Weight.Name, dy, x, n))
	}
	t := x.Rows() / n
	l.noW = l.Weight.Frozen
	l.ghost = l.noW || ctx.choose(l.offer(n, t), l.rule)
	if !l.noW && l.ghost && t > 1 && !l.gxOK { // BeginPerSample came after Forward
		l.inputGrams(x)
	}
	if l.biasTrains() {
		l.psB = resize(l.psB, n*l.out)
		clear(l.psB)
	}
	if !l.ghost {
		l.psW = resize(l.psW, n*l.out*l.in)
		// Forward formed the input's Gram matrices before the plan said
		// otherwise (a first step): a materialising layer holds none.
		l.gx, l.gxOK = nil, false
	}
	l.norms = resize(l.norms, n)
}

// sampleWork sets sample i's squared gradient norm in l.norms[i] and forms
// what Finish needs of it (its bias gradient, and its weight gradient when
// materialised), from its rows of dy; gy is gramScratch's buffer. Samples
// are independent, so any goroutine may do any sample once beginSamples has
// run.
func (l *Linear) sampleWork(dy *tensor.Tensor, i int, gy *[]float32) {
	in, out := l.in, l.out
	t := l.x.Rows() / len(l.norms)
	a := l.x.Data[i*t*in : (i+1)*t*in]
	b := dy.Data[i*t*out : (i+1)*t*out]
	var s float64
	switch {
	case l.noW:
	case !l.ghost:
		g := l.psW[i*out*in : (i+1)*out*in]
		s = kernels.SgemmSqNorm(true, false, out, in, t, 1, b, out, a, in, g, in)
	case t == 1:
		s = kernels.SqNorm(a) * kernels.SqNorm(b)
	default:
		m := kernels.RowGramLen(t)
		kernels.RowGram(t, b, out, *gy)
		s = kernels.RowGramDot(t, l.gx[i*m:(i+1)*m], *gy)
	}
	if l.biasTrains() {
		pb := l.psB[i*out : (i+1)*out]
		for r := 0; r < t; r++ {
			kernels.Axpy(1, b[r*out:(r+1)*out], pb)
		}
		s += kernels.SqNorm(pb)
	}
	l.norms[i] = s
}

// gramScratch returns a buffer for sampleWork's Gram matrix B_iB_iᵀ (nil
// when it forms none); putGramScratch gives it back.
func (l *Linear) gramScratch() *[]float32 {
	t := l.x.Rows() / len(l.norms)
	if !l.ghost || t == 1 || l.noW {
		return nil
	}
	return getScratch(&gramPool, kernels.RowGramLen(t))
}

func putGramScratch(gy *[]float32) {
	if gy != nil {
		gramPool.Put(gy)
	}
}

// clippedGEMM adds Σ_i c_i B_iᵀA_i into the weight gradient as (C·dy)ᵀx or
// dyᵀ(C·x), scaling whichever of the two is narrower. Samples with c_i = 0
// are left out, not multiplied by 0, so their NaNs stay out; every maximal
// run of included samples is one GEMM (the whole batch, normally).
func (l *Linear) clippedGEMM(c []float32, t int) {
	x, dy := l.x.Data, l.dy.Data
	in, out := l.in, l.out
	scaleX := in < out
	width := out
	if scaleX {
		width = in
	}
	buf := getScratch(&scratchPool, len(c)*t*width)
	defer scratchPool.Put(buf)
	scaled := *buf
	src := dy
	if scaleX {
		src = x
	}
	parallel(len(c), workers(len(c)), func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			d := scaled[i*t*width : (i+1)*t*width]
			copy(d, src[i*t*width:(i+1)*t*width])
			kernels.Scale(c[i], d)
		}
	})
	a, b := scaled, x // A = C·dy, B = x
	if scaleX {
		a, b = dy, scaled
	}
	for lo := 0; lo < len(c); {
		if c[lo] == 0 {
			lo++
			continue
		}
		hi := lo + 1
		for hi < len(c) && c[hi] != 0 {
			hi++
		}
		kernels.Sgemm(true, false, out, in, (hi-lo)*t, 1, a[lo*t*out:], out, b[lo*t*in:], in, 1, l.Weight.Grad.Data, in)
		lo = hi
	}
}

// scratchPool holds the buffers of c-scaled activations that Finish needs
// only while it runs: one buffer serves every layer in turn, where a buffer
// per layer would add the size of all those activations to a per-sample
// step's memory. gramPool holds the Gram matrices of output gradients that
// a Backward needs while it runs (one a goroutine), apart, so that
// the two sizes do not take each other's buffers.
var scratchPool, gramPool sync.Pool

// getScratch returns a buffer of n floats from pool.
func getScratch(pool *sync.Pool, n int) *[]float32 {
	p, _ := pool.Get().(*[]float32)
	if p == nil {
		p = new([]float32)
	}
	*p = resize(*p, n)
	return p
}

// weightedSum adds Σ_i c_i·g_i into dst, where g holds len(c) vectors of
// len(dst) elements. Samples with c_i = 0 are skipped. Each element is summed
// over i in order (kernels.AxpyMany: dst read and written once, the g_i
// streamed past it), by one goroutine, so the result does not depend on
// GOMAXPROCS.
func weightedSum(dst, g []float32, c []float32) {
	m := len(dst)
	spans(m, 1<<14, func(lo, hi int) { kernels.AxpyMany(dst[lo:hi], c, g[lo:], m) })
}

// workers is the number of goroutines worth using for n independent items.
func workers(n int) int { return max(1, min(n, runtime.GOMAXPROCS(0))) }

// parallel splits [0,n) into nw contiguous blocks and runs f(w, lo, hi) for
// block w on its own goroutine (kernels.Parallel; inline when nw is 1). Which items a block
// holds depends on nw, so f must compute every item independently of the
// others for results not to depend on GOMAXPROCS.
func parallel(n, nw int, f func(w, lo, hi int)) {
	if nw <= 1 {
		f(0, 0, n)
		return
	}
	kernels.Parallel(nw, func(w int) { f(w, w*n/nw, (w+1)*n/nw) })
}

// spans runs f over [0,n) split into contiguous spans, one per goroutine,
// using no more goroutines than spans of at least min elements: for
// elementwise passes, whose results cannot depend on the split.
func spans(n, min int, f func(lo, hi int)) {
	parallel(n, workers(n/min), func(_, lo, hi int) { f(lo, hi) })
}
