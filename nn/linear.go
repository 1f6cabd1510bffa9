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
//   - T > 1 and 2T² ≤ in·out: |g_i|² = ⟨A_iA_iᵀ, B_iB_iᵀ⟩ (ghost norm through
//     the two T×T Gram matrices); the clipped gradient Σ_i c_i g_i is then one
//     GEMM over the whole batch with the rows of the narrower of x and dy
//     scaled by c_i, which replaces the plain weight-gradient GEMM.
//   - otherwise g_i is materialised (cheaper than the Grams) and the clipped
//     gradient is the weighted sum of the g_i.
//
// The bias's per-sample gradient Σ_t b_it is always formed: it is small.
type Linear struct {
	Weight *Param // [out,in]
	Bias   *Param // [out]; nil without bias
	// NoInputGrad makes Backward skip the input gradient and return nil: set
	// it on a model's first layer, whose input gradient nobody uses.
	NoInputGrad bool

	in, out int
	rule    rule // forced per-sample rule (tests); ruleAuto in use

	x      *tensor.Tensor // input of the latest Forward
	y, dx  *tensor.Tensor // reused output buffers
	dy     *tensor.Tensor // per-sample mode: the output gradient, read by Finish
	psW    []float32      // materialised per-sample weight gradients [B,out,in]
	psB    []float32      // per-sample bias gradients [B,out]
	scaled []float32      // Finish: c-scaled rows of x or dy
	gram   [][]float32    // per-worker scratch for the two T×T Gram matrices
}

// rule selects how a layer computes per-sample gradient norms.
type rule int

const (
	ruleAuto        rule = iota // the cheaper of the two for the layer's shapes
	ruleGhost                   // ghost norm, no per-sample gradient
	ruleMaterialise             // per-sample gradients formed explicitly
)

// NewLinear returns a Linear layer from in to out features whose parameters
// are named prefix+".weight" and prefix+".bias". The parameters are zero: see
// InitDefault.
func NewLinear(prefix string, in, out int, bias bool) *Linear {
	if in <= 0 || out <= 0 {
		panic(fmt.Sprintf("nn: NewLinear(%q, %d, %d): sizes must be positive", prefix, in, out))
	}
	l := &Linear{Weight: NewParam(prefix+".weight", out, in), in: in, out: out}
	if bias {
		l.Bias = NewParam(prefix+".bias", out)
	}
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
	shape := append(append([]int(nil), x.Shape[:len(x.Shape)-1]...), l.out)
	l.y = reuse(l.y, shape...)
	rows := x.Rows()
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

// Backward returns dy·W and produces the weight gradients as Context says.
// The input gradient is owned by the layer and overwritten by its next
// Backward.
func (l *Linear) Backward(ctx *Context, dy *tensor.Tensor) *tensor.Tensor {
	x := l.x
	if x == nil || dy.Len() != x.Rows()*l.out {
		panic(fmt.Sprintf("nn: %s: Backward with dy %v after Forward of %v", l.Weight.Name, dy, x))
	}
	rows := x.Rows()
	if ctx.PerSample() {
		l.perSample(ctx, dy)
	} else {
		kernels.Sgemm(true, false, l.out, l.in, rows, 1, dy.Data, l.out, x.Data, l.in, 1, l.Weight.Grad.Data, l.in)
		if l.Bias != nil {
			db := l.Bias.Grad.Data
			for r := 0; r < rows; r++ {
				for j, v := range dy.Data[r*l.out : (r+1)*l.out] {
					db[j] += v
				}
			}
		}
	}
	if l.NoInputGrad {
		return nil
	}
	l.dx = reuse(l.dx, x.Shape...)
	kernels.Sgemm(false, false, rows, l.in, l.out, 1, dy.Data, l.out, l.Weight.Value.Data, l.in, 0, l.dx.Data, l.in)
	return l.dx
}

// perSample adds every sample's squared gradient norm into ctx.SqNorms and
// defers the clipped weight gradient.
func (l *Linear) perSample(ctx *Context, dy *tensor.Tensor) {
	n := len(ctx.SqNorms())
	x := l.x
	if x.Dim(0) != n {
		panic(fmt.Sprintf("nn: %s: batch of %d in per-sample mode for %d samples", l.Weight.Name, x.Dim(0), n))
	}
	t := x.Rows() / n
	sq := ctx.SqNorms()
	in, out := l.in, l.out
	ghost := l.rule == ruleGhost || (l.rule == ruleAuto && 2*t*t <= in*out)
	if l.Bias != nil {
		l.psB = resize(l.psB, n*out)
		clear(l.psB)
	}
	if !ghost {
		l.psW = resize(l.psW, n*out*in)
	}
	nw := workers(n)
	if ghost && t > 1 {
		for len(l.gram) < nw {
			l.gram = append(l.gram, nil)
		}
	}
	parallel(n, nw, func(w, lo, hi int) {
		var ga, gb []float32
		if ghost && t > 1 {
			l.gram[w] = resize(l.gram[w], 2*t*t)
			ga, gb = l.gram[w][:t*t], l.gram[w][t*t:]
		}
		for i := lo; i < hi; i++ {
			a := x.Data[i*t*in : (i+1)*t*in]
			b := dy.Data[i*t*out : (i+1)*t*out]
			var s float64
			switch {
			case !ghost:
				g := l.psW[i*out*in : (i+1)*out*in]
				kernels.Sgemm(true, false, out, in, t, 1, b, out, a, in, 0, g, in)
				s = sqNorm(g)
			case t == 1:
				s = sqNorm(a) * sqNorm(b)
			default:
				kernels.Sgemm(false, true, t, t, in, 1, a, in, a, in, 0, ga, t)
				kernels.Sgemm(false, true, t, t, out, 1, b, out, b, out, 0, gb, t)
				s = dot(ga, gb)
			}
			if l.Bias != nil {
				pb := l.psB[i*out : (i+1)*out]
				for r := 0; r < t; r++ {
					for j, v := range b[r*out : (r+1)*out] {
						pb[j] += v
					}
				}
				s += sqNorm(pb)
			}
			sq[i] += s
		}
	})
	l.dy = dy
	ctx.Defer(func(c []float32) {
		if ghost {
			l.clippedGEMM(c, t)
		} else {
			weightedSum(l.Weight.Grad.Data, l.psW, c)
		}
		if l.Bias != nil {
			weightedSum(l.Bias.Grad.Data, l.psB, c)
		}
		l.dy = nil
	})
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
	l.scaled = resize(l.scaled, len(c)*t*width)
	src := dy
	if scaleX {
		src = x
	}
	for i, ci := range c {
		d := l.scaled[i*t*width : (i+1)*t*width]
		for j, v := range src[i*t*width : (i+1)*t*width] {
			d[j] = ci * v
		}
	}
	a, b := l.scaled, x // A = C·dy, B = x
	if scaleX {
		a, b = dy, l.scaled
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

// weightedSum adds Σ_i c_i·g_i into dst, where g holds len(c) vectors of
// len(dst) elements. Samples with c_i = 0 are skipped. Each element is summed
// over i in order by one goroutine, so the result does not depend on
// GOMAXPROCS.
func weightedSum(dst, g []float32, c []float32) {
	m := len(dst)
	const chunk = 4096
	parallel((m+chunk-1)/chunk, workers((m+chunk-1)/chunk), func(_, lo, hi int) {
		lo, hi = lo*chunk, min(hi*chunk, m)
		d := dst[lo:hi]
		for i, ci := range c {
			if ci == 0 {
				continue
			}
			for j, v := range g[i*m+lo : i*m+hi] {
				d[j] += ci * v
			}
		}
	})
}

// dot is Σ a_j·b_j accumulated in float64.
func dot(a, b []float32) float64 {
	var s float64
	for j, x := range a {
		s += float64(x) * float64(b[j])
	}
	return s
}

// workers is the number of goroutines worth using for n independent items.
func workers(n int) int { return max(1, min(n, runtime.GOMAXPROCS(0))) }

// parallel splits [0,n) into nw contiguous blocks and runs f(w, lo, hi) for
// block w on its own goroutine (inline when nw is 1). Which items a block
// holds depends on nw, so f must compute every item independently of the
// others for results not to depend on GOMAXPROCS.
func parallel(n, nw int, f func(w, lo, hi int)) {
	if nw <= 1 {
		f(0, 0, n)
		return
	}
	var wg sync.WaitGroup
	for w := range nw {
		lo, hi := w*n/nw, (w+1)*n/nw
		wg.Go(func() { f(w, lo, hi) })
	}
	wg.Wait()
}
