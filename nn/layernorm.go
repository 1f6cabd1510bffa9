package nn

import (
	"fmt"

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
// formed from the kept per-sample gradients. A frozen weight or bias
// (Param.Frozen) takes no part in either.
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
		var mean, rstd [statRows]float64
		for r := lo; r < hi; r += statRows {
			n := min(statRows, hi-r)
			kernels.RowStats(x.Data[r*d:(r+n)*d], d, layerNormEps, mean[:n], rstd[:n])
			for i := range n {
				l.normalise(r+i, x.Data[(r+i)*d:(r+i+1)*d], w, mean[i], rstd[i])
			}
		}
	})
	return l.y
}

// statRows is how many rows a layer norm's statistics and gradient sums
// are taken for at once (kernels.RowStats, kernels.GradSums: sixteen rows
// a call in assembly).
const statRows = 32

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
	gw, gb := l.grads()
	nr, nc := workers(rows), 0
	if !ctx.PerSample() && (gw != nil || gb != nil) {
		nc = workers(min(d/16, dy.Len()/passSpan))
	}
	kernels.Parallel(max(nr, nc), func(w int) {
		if w < nr {
			l.inputGrads(dy, w*rows/nr, (w+1)*rows/nr)
		}
		if w < nc {
			lo, hi := w*d/nc, (w+1)*d/nc
			l.accumulate(dy, 0, dy.Rows(), lo, hi-lo, part(gw, lo, hi), part(gb, lo, hi))
		}
	})
	if ctx.PerSample() {
		l.perSample(ctx, dy)
	}
	return l.dx
}

// inputGrads sets rows [lo, hi) of the input gradient from dy: a row's is
// dx = rstd·(ĝ − mean(ĝ) − x̂·mean(ĝ⊙x̂)) with ĝ = dy⊙weight.
func (l *LayerNorm) inputGrads(dy *tensor.Tensor, lo, hi int) {
	d := l.Weight.Value.Len()
	w := l.Weight.Value.Data
	var sg, sgx [statRows]float32
	for r := lo; r < hi; r += statRows {
		n := min(statRows, hi-r)
		kernels.GradSums(dy.Data[r*d:(r+n)*d], l.xhat[r*d:(r+n)*d], w, sg[:n], sgx[:n])
		for i := range n {
			row := (r + i) * d
			kernels.NormalizeGrad(l.dx.Data[row:row+d], dy.Data[row:row+d], l.xhat[row:row+d], w, l.rstd[r+i], sg[i], sgx[i])
		}
	}
}

// grads returns the gradients of the weight and the bias, nil for one
// that is frozen or absent.
func (l *LayerNorm) grads() (gw, gb []float32) {
	if !l.Weight.Frozen {
		gw = l.Weight.Grad.Data
	}
	if l.Bias != nil && !l.Bias.Frozen {
		gb = l.Bias.Grad.Data
	}
	return gw, gb
}

// part is g[lo:hi], nil for a nil g.
func part(g []float32, lo, hi int) []float32 {
	if g == nil {
		return nil
	}
	return g[lo:hi]
}

// accumulate adds Σ_r dy_r⊙x̂_r into gw and Σ_r dy_r into gb (each if not
// nil) over the rows [lo, hi), n of the rows' columns from c on.
func (l *LayerNorm) accumulate(dy *tensor.Tensor, lo, hi, c, n int, gw, gb []float32) {
	d := l.Weight.Value.Len()
	for r := lo; r < hi; r++ {
		off := r*d + c
		dyr := dy.Data[off : off+n]
		if gw != nil {
			kernels.AddMul(gw, dyr, l.xhat[off:off+n])
		}
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
	gw, gb := l.grads()
	per := 0 // per-sample gradient length: weight, then bias, those trained
	if gw != nil {
		per += d
	}
	if gb != nil {
		per += d
	}
	if per == 0 {
		return
	}
	// split cuts a sample's gradient g into its weight's and its bias's.
	split := func(g []float32) (w, b []float32) {
		if gw != nil {
			w, g = g[:d], g[d:]
		}
		if gb != nil {
			b = g[:d]
		}
		return w, b
	}
	l.sample = resize(l.sample, n*per)
	clear(l.sample)
	sq := ctx.SqNorms()
	parallel(n, workers(n), func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			g := l.sample[i*per : (i+1)*per]
			w, b := split(g)
			l.accumulate(dy, i*rows, (i+1)*rows, 0, d, w, b)
			sq[i] += kernels.SqNorm(g)
		}
	})
	ctx.Defer(func(c []float32) {
		for i, ci := range c {
			if ci == 0 {
				continue
			}
			w, b := split(l.sample[i*per : (i+1)*per])
			if w != nil {
				kernels.Axpy(ci, w, gw)
			}
			if b != nil {
				kernels.Axpy(ci, b, gb)
			}
		}
	})
}
