package nn

import (
	"fmt"
	"math"

	"github.com/psclip/psclip/kernels"
	"github.com/psclip/psclip/tensor"
)

// GroupNorm normalises every sample's channels in G groups, as
// torch.nn.GroupNorm(G, C) with eps 1e-5: the input [B, C, …] (a
// convolution's [B, C, H, W], or [B, C]) is split per sample into G groups
// of C/G channels, each group's values normalised by their own mean and
// biased variance, then scaled and shifted per channel:
//
//	y[b,c,s] = (x[b,c,s] − μ[b,g]) / √(σ²[b,g] + eps) · weight[c] + bias[c],  g = c / (C/G)
//
// Its statistics are a sample's own, so no sample's output depends on
// another's: under DP-SGD it leaks nothing across samples (batch
// normalisation does), which is why Tramèr & Boneh's ScatterNet models
// use it.
//
// Without affine parameters (PyTorch's affine=False, Tramèr & Boneh's
// choice) y is the normalised input and the layer has no parameters.
//
// Per-sample rule: a sample's gradient is tiny (Σ_s dy⊙x̂ for the weight,
// Σ_s dy for the bias, per channel, over the sample's S spatial values),
// so it is always materialised; its squared norm is exact and the clipped
// sum Σ_i c_i·g_i is formed from the kept per-sample gradients. A frozen
// weight or bias (Param.Frozen) takes no part in either.
type GroupNorm struct {
	Groups   int
	Channels int
	Weight   *Param // [C]; nil without affine parameters
	Bias     *Param // [C]; nil without affine parameters

	x      *tensor.Tensor // latest input, for its shape
	xhat   []float32      // normalised input, as x
	rstd   []float32      // 1/√(σ²+eps), [B, G]
	y, dx  *tensor.Tensor
	sample []float32 // per-sample gradients, [B, 2C]: weight, then bias
	name   string
}

// NewGroupNorm returns a group norm of c channels in groups groups; groups
// must divide c. With affine, it has the parameters name+".weight" (1) and
// name+".bias" (0), torch's initialisation.
func NewGroupNorm(name string, groups, c int, affine bool) (*GroupNorm, error) {
	if groups < 1 || c < 1 || c%groups != 0 {
		return nil, fmt.Errorf("nn: GroupNorm %s: %d groups of %d channels, want a positive number that divides the channels", name, groups, c)
	}
	l := &GroupNorm{Groups: groups, Channels: c, name: name}
	if affine {
		l.Weight, l.Bias = NewParam(name+".weight", c), NewParam(name+".bias", c)
		for i := range l.Weight.Value.Data {
			l.Weight.Value.Data[i] = 1
		}
	}
	return l, nil
}

// Params returns the weight and the bias, or none without affine
// parameters.
func (l *GroupNorm) Params() []*Param {
	if l.Weight == nil {
		return nil
	}
	return []*Param{l.Weight, l.Bias}
}

// OutShape is the input's shape, [B, C, …].
func (l *GroupNorm) OutShape(in []int) ([]int, error) {
	if len(in) < 2 || in[1] != l.Channels {
		return nil, wrongInput("GroupNorm "+l.name, in, "[B,%d,…]", l.Channels)
	}
	return append([]int(nil), in...), nil
}

// dims returns the batch, the values of a group (C/G channels of s
// spatial values) and the spatial values s of a channel.
func (l *GroupNorm) dims(x *tensor.Tensor) (b, group, s int) {
	b = x.Dim(0)
	s = x.Len() / max(b, 1) / l.Channels
	return b, l.Channels / l.Groups * s, s
}

// Forward normalises x [B, C, …] per sample and group.
func (l *GroupNorm) Forward(ctx *Context, x *tensor.Tensor) *tensor.Tensor {
	if _, err := l.OutShape(x.Shape); err != nil {
		panic(err.Error())
	}
	b, n, s := l.dims(x)
	l.x = x
	l.y = reuse(l.y, x.Shape...)
	l.xhat = resize(l.xhat, x.Len())
	l.rstd = resize(l.rstd, b*l.Groups)
	cg := l.Channels / l.Groups
	parallel(b*l.Groups, workers(b*l.Groups), func(_, lo, hi int) {
		for bg := lo; bg < hi; bg++ {
			xs := x.Data[bg*n : (bg+1)*n]
			var sum, sq float64
			for _, v := range xs {
				sum += float64(v)
			}
			mean := sum / float64(n)
			for _, v := range xs {
				sq += (float64(v) - mean) * (float64(v) - mean)
			}
			rstd := 1 / math.Sqrt(sq/float64(n)+layerNormEps)
			l.rstd[bg] = float32(rstd)
			c0 := bg % l.Groups * cg
			for k, v := range xs {
				c := c0 + k/s
				h := float32((float64(v) - mean) * rstd)
				l.xhat[bg*n+k] = h
				if l.Weight != nil {
					h = h*l.Weight.Value.Data[c] + l.Bias.Value.Data[c]
				}
				l.y.Data[bg*n+k] = h
			}
		}
	})
	return l.y
}

// Backward returns the input gradient and produces the parameter gradients
// in the context's mode. Per group, with ĝ = dy⊙weight, the input gradient
// is rstd·(ĝ − mean(ĝ) − x̂·mean(ĝ⊙x̂)).
func (l *GroupNorm) Backward(ctx *Context, dy *tensor.Tensor) *tensor.Tensor {
	if !dy.SameShape(l.x) {
		panic(fmt.Sprintf("nn: GroupNorm: gradient %v for input %v", dy, l.x))
	}
	b, n, s := l.dims(dy)
	c, cg := l.Channels, l.Channels/l.Groups
	l.dx = reuse(l.dx, dy.Shape...)
	weight := func(ch int) float64 { return 1 }
	trainW, trainB := l.Weight != nil && !l.Weight.Frozen, l.Bias != nil && !l.Bias.Frozen
	if l.Weight != nil {
		weight = func(ch int) float64 { return float64(l.Weight.Value.Data[ch]) }
	}
	if trainW || trainB {
		// Each sample's weight and bias gradients, [B, 2C]: what the
		// per-sample rule keeps, and what the plain sum adds in sample
		// order.
		l.sample = resize(l.sample, b*2*c)
	}
	parallel(b, workers(b), func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			if trainW || trainB {
				g := l.sample[i*2*c : (i+1)*2*c]
				for ch := range c {
					var gw, gb float64
					for k := ch * s; k < (ch+1)*s; k++ {
						gw += float64(dy.Data[i*c*s+k]) * float64(l.xhat[i*c*s+k])
						gb += float64(dy.Data[i*c*s+k])
					}
					g[ch], g[c+ch] = float32(gw), float32(gb)
				}
			}
			for gi := range l.Groups {
				bg := i*l.Groups + gi
				var mg, mgx float64
				for k := bg * n; k < (bg+1)*n; k++ {
					gh := float64(dy.Data[k]) * weight(gi*cg+(k-bg*n)/s)
					mg += gh
					mgx += gh * float64(l.xhat[k])
				}
				mg /= float64(n)
				mgx /= float64(n)
				rstd := float64(l.rstd[bg])
				for k := bg * n; k < (bg+1)*n; k++ {
					gh := float64(dy.Data[k]) * weight(gi*cg+(k-bg*n)/s)
					l.dx.Data[k] = float32(rstd * (gh - mg - float64(l.xhat[k])*mgx))
				}
			}
		}
	})
	// trained is the part of a sample's gradient g that is trained.
	trained := func(g []float32) []float32 {
		switch {
		case !trainW:
			return g[c:]
		case !trainB:
			return g[:c]
		}
		return g
	}
	switch {
	case !trainW && !trainB:
		return l.dx
	case !ctx.PerSample():
		for i := range b {
			g := l.sample[i*2*c : (i+1)*2*c]
			if trainW {
				kernels.Add(l.Weight.Grad.Data, l.Weight.Grad.Data, g[:c])
			}
			if trainB {
				kernels.Add(l.Bias.Grad.Data, l.Bias.Grad.Data, g[c:])
			}
		}
		return l.dx
	}
	sq := ctx.SqNorms()
	if len(sq) != b {
		panic(fmt.Sprintf("nn: GroupNorm: gradient %v for a batch of %d", dy, len(sq)))
	}
	for i := range b {
		sq[i] += kernels.SqNorm(trained(l.sample[i*2*c : (i+1)*2*c]))
	}
	ctx.Defer(func(f []float32) {
		for i, ci := range f {
			if ci == 0 {
				continue
			}
			g := l.sample[i*2*c : (i+1)*2*c]
			if trainW {
				kernels.Axpy(ci, g[:c], l.Weight.Grad.Data)
			}
			if trainB {
				kernels.Axpy(ci, g[c:], l.Bias.Grad.Data)
			}
		}
	})
	return l.dx
}
