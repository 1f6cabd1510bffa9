package nn

import (
	"fmt"
	"math"

	"github.com/psclip/psclip/kernels"
	"github.com/psclip/psclip/tensor"
)

// LayerNorm normalises every row of its input over the last dimension, as
// torch.nn.LayerNorm(d) with eps 1e-5: y = (x−mean)/√(var+eps)·weight + bias,
// with the biased variance. Without a bias (nanoGPT's bias=false) only the
// weight is learnt. The input is [B, …, d]; every sample's rows share the
// parameters.
//
// Per-sample rule: a sample's gradient is tiny (Σ_t dy_t⊙x̂_t for the weight,
// Σ_t dy_t for the bias, over the sample's rows t), so it is always
// materialised; its squared norm is exact and the clipped sum Σ_i c_i·g_i is
// formed from the kept per-sample gradients.
type LayerNorm struct {
	Weight *Param
	Bias   *Param // nil without a bias

	x      *tensor.Tensor // latest input's shape, for the input gradient
	xhat   []float32      // normalised input of the latest Forward
	rstd   []float32      // 1/√(var+eps) per row
	y, dx  *tensor.Tensor
	sample []float32 // per-sample weight (and bias) gradients, [B, d] each
}

// layerNormEps is torch.nn.LayerNorm's default eps.
const layerNormEps = 1e-5

// NewLayerNorm returns a layer norm over d features with weight 1 and bias 0,
// torch's initialisation. Its parameters are name+".weight" and, with bias,
// name+".bias".
func NewLayerNorm(name string, d int, bias bool) *LayerNorm {
	l := &LayerNorm{Weight: NewParam(name+".weight", d)}
	for i := range l.Weight.Value.Data {
		l.Weight.Value.Data[i] = 1
	}
	if bias {
		l.Bias = NewParam(name+".bias", d)
	}
	return l
}

// Params returns the weight and, when present, the bias.
func (l *LayerNorm) Params() []*Param {
	if l.Bias == nil {
		return []*Param{l.Weight}
	}
	return []*Param{l.Weight, l.Bias}
}

// Forward normalises x over its last dimension.
func (l *LayerNorm) Forward(ctx *Context, x *tensor.Tensor) *tensor.Tensor {
	d := l.Weight.Value.Len()
	if x.Dim(-1) != d {
		panic(fmt.Sprintf("nn: LayerNorm(%d): input %v", d, x))
	}
	l.x = x
	l.y = reuse(l.y, x.Shape...)
	l.xhat = resize(l.xhat, x.Len())
	l.rstd = resize(l.rstd, x.Rows())
	w := l.Weight.Value.Data
	rows := len(l.rstd)
	parallel(rows, workers(rows), func(_, lo, hi int) {
		r := lo
		for ; r+8 <= hi; r += 8 {
			var xs [8][]float32
			for i := range xs {
				xs[i] = x.Data[(r+i)*d : (r+i+1)*d]
			}
			mean, rstd := rowStats8(xs)
			for i, xr := range xs {
				l.normalise(r+i, xr, w, mean[i], rstd[i])
			}
		}
		for ; r < hi; r++ {
			xr := x.Data[r*d : (r+1)*d]
			mean, rstd := rowStats(xr)
			l.normalise(r, xr, w, mean, rstd)
		}
	})
	return l.y
}

// rowStats returns the mean of xr and 1/√(var+eps), summed in float64 in
// order.
func rowStats(xr []float32) (mean, rstd float64) {
	var sum float64
	for _, v := range xr {
		sum += float64(v)
	}
	mean = sum / float64(len(xr))
	var ss float64
	for _, v := range xr {
		e := float64(v) - mean
		ss += e * e
	}
	return mean, 1 / math.Sqrt(ss/float64(len(xr))+layerNormEps)
}

// rowStats8 is rowStats of eight rows of equal length at once: each row's
// sums take the same steps in the same order, and the eight chains of
// dependent additions overlap (four left the loop bound by the latency of
// the additions).
func rowStats8(xs [8][]float32) (mean, rstd [8]float64) {
	d := len(xs[0])
	x0, x1, x2, x3 := xs[0], xs[1][:d], xs[2][:d], xs[3][:d]
	x4, x5, x6, x7 := xs[4][:d], xs[5][:d], xs[6][:d], xs[7][:d]
	var s0, s1, s2, s3, s4, s5, s6, s7 float64
	for j, v := range x0 {
		s0 += float64(v)
		s1 += float64(x1[j])
		s2 += float64(x2[j])
		s3 += float64(x3[j])
		s4 += float64(x4[j])
		s5 += float64(x5[j])
		s6 += float64(x6[j])
		s7 += float64(x7[j])
	}
	n := float64(d)
	m0, m1, m2, m3, m4, m5, m6, m7 := s0/n, s1/n, s2/n, s3/n, s4/n, s5/n, s6/n, s7/n
	var q0, q1, q2, q3, q4, q5, q6, q7 float64
	for j, v := range x0 {
		e0, e1, e2, e3 := float64(v)-m0, float64(x1[j])-m1, float64(x2[j])-m2, float64(x3[j])-m3
		e4, e5, e6, e7 := float64(x4[j])-m4, float64(x5[j])-m5, float64(x6[j])-m6, float64(x7[j])-m7
		q0 += e0 * e0
		q1 += e1 * e1
		q2 += e2 * e2
		q3 += e3 * e3
		q4 += e4 * e4
		q5 += e5 * e5
		q6 += e6 * e6
		q7 += e7 * e7
	}
	mean = [8]float64{m0, m1, m2, m3, m4, m5, m6, m7}
	for i, q := range [8]float64{q0, q1, q2, q3, q4, q5, q6, q7} {
		rstd[i] = 1 / math.Sqrt(q/n+layerNormEps)
	}
	return mean, rstd
}

// normalise computes row r of x̂, rstd and y from its input xr and its
// statistics.
func (l *LayerNorm) normalise(r int, xr, w []float32, mean, rstd float64) {
	d := len(xr)
	l.rstd[r] = float32(rstd)
	yr := l.y.Data[r*d : (r+1)*d]
	kernels.Normalize(yr, l.xhat[r*d:(r+1)*d], xr, w, mean, rstd)
	if l.Bias != nil {
		kernels.Add(yr, yr, l.Bias.Value.Data)
	}
}

// Backward returns the input gradient and produces the parameter gradients
// in the context's mode.
func (l *LayerNorm) Backward(ctx *Context, dy *tensor.Tensor) *tensor.Tensor {
	if !dy.SameShape(l.x) {
		panic(fmt.Sprintf("nn: LayerNorm: gradient %v for input %v", dy, l.x))
	}
	d := l.Weight.Value.Len()
	l.dx = reuse(l.dx, dy.Shape...)
	rows := len(l.rstd)
	// One parallel region for the input gradient, split by rows, and the
	// weight gradients, split by columns: they read the same dy and x̂ and
	// write different outputs. Each column sums all the rows, in order.
	nr, nc := workers(rows), 0
	if !ctx.PerSample() {
		nc = workers(min(d/16, dy.Len()/passSpan))
	}
	gw, gb := l.Weight.Grad.Data, l.biasGrad()
	kernels.Parallel(max(nr, nc), func(w int) {
		if w < nr {
			l.inputGrads(dy, w*rows/nr, (w+1)*rows/nr)
		}
		if w < nc {
			lo, hi := w*d/nc, (w+1)*d/nc
			var b []float32
			if gb != nil {
				b = gb[lo:hi]
			}
			l.accumulate(dy, 0, dy.Rows(), lo, gw[lo:hi], b)
		}
	})
	if ctx.PerSample() {
		l.perSample(ctx, dy)
	}
	return l.dx
}

// inputGrads sets rows [lo, hi) of the input gradient from dy.
func (l *LayerNorm) inputGrads(dy *tensor.Tensor, lo, hi int) {
	d := l.Weight.Value.Len()
	w := l.Weight.Value.Data
	r := lo
	for ; r+4 <= hi; r += 4 {
		var dys, xhs [4][]float32
		for i := range dys {
			dys[i], xhs[i] = dy.Data[(r+i)*d:(r+i+1)*d], l.xhat[(r+i)*d:(r+i+1)*d]
		}
		sg, sgx := gradSums4(dys, xhs, w)
		for i := range dys {
			l.inputGrad(r+i, dys[i], xhs[i], w, sg[i], sgx[i])
		}
	}
	for ; r < hi; r++ {
		dyr, xh := dy.Data[r*d:(r+1)*d], l.xhat[r*d:(r+1)*d]
		sg, sgx := gradSums(dyr, xh, w)
		l.inputGrad(r, dyr, xh, w, sg, sgx)
	}
}

// The input gradient of a row is dx = rstd·(ĝ − mean(ĝ) − x̂·mean(ĝ⊙x̂))
// with ĝ = dy⊙weight.

// gradSums returns mean(ĝ) and mean(ĝ⊙x̂) of one row, summed in float32 in
// order.
func gradSums(dyr, xh, w []float32) (sg, sgx float32) {
	xh, w = xh[:len(dyr)], w[:len(dyr)]
	for j, g := range dyr {
		gh := g * w[j]
		sg += gh
		sgx += gh * xh[j]
	}
	return sg / float32(len(dyr)), sgx / float32(len(dyr))
}

// gradSums4 is gradSums of four rows at once, each summed as gradSums
// does, the four rows' chains of additions overlapping.
func gradSums4(dys, xhs [4][]float32, w []float32) (sg, sgx [4]float32) {
	d := len(dys[0])
	g0, g1, g2, g3 := dys[0], dys[1][:d], dys[2][:d], dys[3][:d]
	h0, h1, h2, h3 := xhs[0][:d], xhs[1][:d], xhs[2][:d], xhs[3][:d]
	w = w[:d]
	var a0, a1, a2, a3, b0, b1, b2, b3 float32
	for j, g := range g0 {
		wj := w[j]
		e0, e1, e2, e3 := g*wj, g1[j]*wj, g2[j]*wj, g3[j]*wj
		a0 += e0
		b0 += e0 * h0[j]
		a1 += e1
		b1 += e1 * h1[j]
		a2 += e2
		b2 += e2 * h2[j]
		a3 += e3
		b3 += e3 * h3[j]
	}
	n := float32(d)
	return [4]float32{a0 / n, a1 / n, a2 / n, a3 / n}, [4]float32{b0 / n, b1 / n, b2 / n, b3 / n}
}

// inputGrad sets row r of the input gradient from its output gradient dyr,
// x̂ row xh and sums.
func (l *LayerNorm) inputGrad(r int, dyr, xh, w []float32, sg, sgx float32) {
	d := len(dyr)
	kernels.NormalizeGrad(l.dx.Data[r*d:(r+1)*d], dyr, xh, w, l.rstd[r], sg, sgx)
}

func (l *LayerNorm) biasGrad() []float32 {
	if l.Bias == nil {
		return nil
	}
	return l.Bias.Grad.Data
}

// accumulate adds Σ_r dy_r⊙x̂_r into gw and Σ_r dy_r into gb (if not nil)
// over the rows [lo, hi), the rows' columns from c on: gw and gb hold as
// many columns as they are long.
func (l *LayerNorm) accumulate(dy *tensor.Tensor, lo, hi, c int, gw, gb []float32) {
	d := l.Weight.Value.Len()
	for r := lo; r < hi; r++ {
		off := r*d + c
		dyr := dy.Data[off : off+len(gw)]
		kernels.AddMul(gw, dyr, l.xhat[off:off+len(gw)])
		if gb != nil {
			kernels.Add(gb, gb, dyr)
		}
	}
}

func (l *LayerNorm) perSample(ctx *Context, dy *tensor.Tensor) {
	d := l.Weight.Value.Len()
	n := len(ctx.SqNorms())
	rows := dy.Rows() / n
	if rows*n != dy.Rows() || dy.Dim(0) != n {
		panic(fmt.Sprintf("nn: LayerNorm: gradient %v for a batch of %d", dy, n))
	}
	per := d // per-sample gradient length: weight, then bias
	if l.Bias != nil {
		per = 2 * d
	}
	l.sample = resize(l.sample, n*per)
	clear(l.sample)
	sq := ctx.SqNorms()
	parallel(n, workers(n), func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			g := l.sample[i*per : (i+1)*per]
			var gb []float32
			if l.Bias != nil {
				gb = g[d:]
			}
			l.accumulate(dy, i*rows, (i+1)*rows, 0, g[:d], gb)
			sq[i] += kernels.SqNorm(g)
		}
	})
	ctx.Defer(func(c []float32) {
		gw, gb := l.Weight.Grad.Data, l.biasGrad()
		for i, ci := range c {
			if ci == 0 {
				continue
			}
			g := l.sample[i*per : (i+1)*per]
			kernels.Axpy(ci, g[:d], gw)
			if gb != nil {
				kernels.Axpy(ci, g[d:], gb)
			}
		}
	})
}
