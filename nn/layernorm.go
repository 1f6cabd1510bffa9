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
		for r := lo; r < hi; r++ {
			l.normalise(r, x.Data[r*d:(r+1)*d], w)
		}
	})
	return l.y
}

// normalise computes row r of x̂, rstd and y from its input xr.
func (l *LayerNorm) normalise(r int, xr, w []float32) {
	d := len(xr)
	var sum float64
	for _, v := range xr {
		sum += float64(v)
	}
	mean := sum / float64(d)
	var ss float64
	for _, v := range xr {
		e := float64(v) - mean
		ss += e * e
	}
	rstd := 1 / math.Sqrt(ss/float64(d)+layerNormEps)
	l.rstd[r] = float32(rstd)
	xh, yr := l.xhat[r*d:(r+1)*d], l.y.Data[r*d:(r+1)*d]
	for j, v := range xr {
		h := float32((float64(v) - mean) * rstd)
		xh[j] = h
		yr[j] = h * w[j]
	}
	if l.Bias != nil {
		for j, b := range l.Bias.Value.Data {
			yr[j] += b
		}
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
	w := l.Weight.Value.Data
	rows := len(l.rstd)
	parallel(rows, workers(rows), func(_, lo, hi int) {
		for r := lo; r < hi; r++ {
			dyr, xh, dxr := dy.Data[r*d:(r+1)*d], l.xhat[r*d:(r+1)*d], l.dx.Data[r*d:(r+1)*d]
			// dx = rstd·(ĝ − mean(ĝ) − x̂·mean(ĝ⊙x̂)) with ĝ = dy⊙weight.
			var sg, sgx float32
			for j, g := range dyr {
				gh := g * w[j]
				sg += gh
				sgx += gh * xh[j]
			}
			sg /= float32(d)
			sgx /= float32(d)
			rstd := l.rstd[r]
			for j, g := range dyr {
				dxr[j] = rstd * (g*w[j] - sg - xh[j]*sgx)
			}
		}
	})
	if ctx.PerSample() {
		l.perSample(ctx, dy)
	} else {
		l.accumulate(dy, 0, dy.Rows(), 1, l.Weight.Grad.Data, l.biasGrad())
	}
	return l.dx
}

func (l *LayerNorm) biasGrad() []float32 {
	if l.Bias == nil {
		return nil
	}
	return l.Bias.Grad.Data
}

// accumulate adds s·Σ_r dy_r⊙x̂_r into gw and s·Σ_r dy_r into gb (if not nil)
// over the rows [lo, hi).
func (l *LayerNorm) accumulate(dy *tensor.Tensor, lo, hi int, s float32, gw, gb []float32) {
	d := len(gw)
	for r := lo; r < hi; r++ {
		dyr, xh := dy.Data[r*d:(r+1)*d], l.xhat[r*d:(r+1)*d]
		for j, g := range dyr {
			gw[j] += s * g * xh[j]
		}
		if gb != nil {
			for j, g := range dyr {
				gb[j] += s * g
			}
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
			l.accumulate(dy, i*rows, (i+1)*rows, 1, g[:d], gb)
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
