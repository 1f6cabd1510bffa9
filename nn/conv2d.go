package nn

import (
	"fmt"
	"runtime"

	"github.com/psclip/psclip/kernels"
	"github.com/psclip/psclip/tensor"
)

// Conv2d is a 2-D convolution of [B,cin,h,w] images with square k×k kernels,
// stride and zero padding: weight [cout,cin,k,k] and bias [cout], as in
// PyTorch. Each image is unfolded (im2col) into U_i [cin·k·k, P], P = oh·ow,
// and convolved as the GEMM W·U_i; the unfolded inputs are kept for the
// backward pass.
//
// Per-sample rule. With dY_i the sample's output gradient [cout,P], its weight
// gradient is g_i = dY_i·U_iᵀ: the Linear rule with the P output positions
// as the sequence (rule.choose decides between the two).
//   - ghost: |g_i|² = ⟨U_iᵀU_i, dY_iᵀdY_i⟩ through the two P×P Gram matrices
//     (kernels.GramDot), and the clipped gradient Σ_i c_i·g_i is formed by the
//     same per-sample GEMMs as the plain weight gradient, on c-scaled dY_i.
//   - materialise: g_i is formed by those GEMMs (so the plain weight
//     gradient's work is not repeated) and the clipped gradient is
//     Σ_i c_i·g_i.
type Conv2d struct {
	Weight *Param // [cout,cin,k,k]
	Bias   *Param // [cout]; nil without bias
	// NoInputGrad makes Backward skip the input gradient and return nil: set
	// it on a model's first layer, whose input gradient nobody uses.
	NoInputGrad bool

	cin, cout, k, stride, pad int
	rule                      rule

	x       *tensor.Tensor
	cols    []float32 // [B, cin·k·k, P] unfolded inputs of the latest Forward
	y, dx   *tensor.Tensor
	dy      *tensor.Tensor // per-sample mode: the output gradient, read by Finish
	psW     []float32      // materialised per-sample weight gradients [B,cout,cin·k·k]
	psB     []float32      // per-sample bias gradients [B,cout]
	scaled  []float32      // Finish: one c-scaled output gradient
	scratch []float32      // a chunk's column gradients
	gram    [][]float32    // per-worker scratch for paddedSqNorm
}

// NewConv2d returns a convolution whose parameters are named prefix+".weight"
// and prefix+".bias", with PyTorch's default initialisation (Init) drawn
// from the package's default source (see Init to choose a seed).
func NewConv2d(prefix string, cin, cout, k, stride, pad int, bias bool) *Conv2d {
	if cin <= 0 || cout <= 0 || k <= 0 || stride <= 0 || pad < 0 {
		panic(fmt.Sprintf("nn: NewConv2d(%q, cin=%d, cout=%d, k=%d, stride=%d, pad=%d): bad geometry", prefix, cin, cout, k, stride, pad))
	}
	c := &Conv2d{Weight: NewParam(prefix+".weight", cout, cin, k, k), cin: cin, cout: cout, k: k, stride: stride, pad: pad}
	if bias {
		c.Bias = NewParam(prefix+".bias", cout)
	}
	initDefault(c)
	return c
}

// Params returns the weight and, if present, the bias.
func (c *Conv2d) Params() []*Param {
	if c.Bias == nil {
		return []*Param{c.Weight}
	}
	return []*Param{c.Weight, c.Bias}
}

// geometry returns the batch, input and output sizes for the input x.
func (c *Conv2d) geometry(x *tensor.Tensor) (b, h, w, oh, ow int) {
	if len(x.Shape) != 4 || x.Shape[1] != c.cin {
		panic(fmt.Sprintf("nn: %s: input %v, want [B,%d,h,w]", c.Weight.Name, x, c.cin))
	}
	b, h, w = x.Shape[0], x.Shape[2], x.Shape[3]
	oh, ow = kernels.ConvOut(h, c.k, c.stride, c.pad), kernels.ConvOut(w, c.k, c.stride, c.pad)
	if oh <= 0 || ow <= 0 {
		panic(fmt.Sprintf("nn: %s: %dx%d kernel does not fit input %v with padding %d", c.Weight.Name, c.k, c.k, x, c.pad))
	}
	return b, h, w, oh, ow
}

// Forward convolves x. The output is owned by the layer and overwritten by
// its next Forward.
func (c *Conv2d) Forward(ctx *Context, x *tensor.Tensor) *tensor.Tensor {
	b, h, w, oh, ow := c.geometry(x)
	kk, p := c.cin*c.k*c.k, oh*ow
	c.x = x
	c.cols = resize(c.cols, b*kk*p)
	c.y = reuse(c.y, b, c.cout, oh, ow)
	img := c.cin * h * w
	parallel(b, workers(b), func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			kernels.Im2col(x.Data[i*img:(i+1)*img], c.cin, h, w, c.k, c.k, c.stride, c.pad, c.cols[i*kk*p:(i+1)*kk*p])
		}
	})
	kernels.SgemmBatched(false, false, c.cout, p, kk, 1, c.Weight.Value.Data, kk, 0, c.cols, p, kk*p, 0, c.y.Data, p, c.cout*p, b)
	if c.Bias != nil {
		bias := c.Bias.Value.Data
		parallel(b, workers(b), func(_, lo, hi int) {
			for i := lo; i < hi; i++ {
				for co, v := range bias {
					row := c.y.Data[(i*c.cout+co)*p : (i*c.cout+co+1)*p]
					for j := range row {
						row[j] += v
					}
				}
			}
		})
	}
	return c.y
}

// Backward returns the input gradient and produces the weight gradients as
// Context says. The input gradient is owned by the layer and overwritten by
// its next Backward.
func (c *Conv2d) Backward(ctx *Context, dy *tensor.Tensor) *tensor.Tensor {
	x := c.x
	if x == nil {
		panic(fmt.Sprintf("nn: %s: Backward before Forward", c.Weight.Name))
	}
	b, h, w, oh, ow := c.geometry(x)
	kk, p := c.cin*c.k*c.k, oh*ow
	if dy.Len() != b*c.cout*p {
		panic(fmt.Sprintf("nn: %s: Backward with dy %v after Forward of %v", c.Weight.Name, dy, x))
	}
	if ctx.PerSample() {
		c.perSample(ctx, dy, b, h, w, ow)
	} else {
		for i := range b {
			kernels.Sgemm(false, true, c.cout, kk, p, 1, dy.Data[i*c.cout*p:], p, c.cols[i*kk*p:], p, 1, c.Weight.Grad.Data, kk)
		}
		if c.Bias != nil {
			db := c.Bias.Grad.Data
			for i := range b {
				for co := range db {
					db[co] += sum(dy.Data[(i*c.cout+co)*p : (i*c.cout+co+1)*p])
				}
			}
		}
	}
	if c.NoInputGrad {
		return nil
	}
	c.dx = reuse(c.dx, x.Shape...)
	img := c.cin * h * w
	c.chunks(b, kk*p, func(lo, hi int, buf []float32) {
		kernels.SgemmBatched(true, false, kk, p, c.cout, 1, c.Weight.Value.Data, kk, 0, dy.Data[lo*c.cout*p:], p, c.cout*p, 0, buf, p, kk*p, hi-lo)
		parallel(hi-lo, workers(hi-lo), func(_, a, z int) {
			for i := a; i < z; i++ {
				dx := c.dx.Data[(lo+i)*img : (lo+i+1)*img]
				clear(dx)
				kernels.Col2im(buf[i*kk*p:(i+1)*kk*p], c.cin, h, w, c.k, c.k, c.stride, c.pad, dx)
			}
		})
	})
	return c.dx
}

// chunkFloats is the scratch that Backward's column gradients may take. A
// chunk of samples shares one packing of the transposed weight (SgemmBatched
// with strideA 0); on small images (AlexNet's 8×8 layers) that packing costs
// a sizeable part of a sample's product, so chunks of one sample per thread
// spent much of the input gradient packing (profile in README.md).
const chunkFloats = 1 << 22

// chunks runs f over consecutive blocks of samples [lo,hi), each of about
// chunkFloats/per samples and at least as many as there are threads, handing
// it scratch of per elements per sample. It bounds the scratch memory to a
// few samples' while sharing the weight's packing among many.
func (c *Conv2d) chunks(b, per int, f func(lo, hi int, buf []float32)) {
	n := max(1, min(b, max(runtime.GOMAXPROCS(0), chunkFloats/per)))
	c.scratch = resize(c.scratch, n*per)
	for lo := 0; lo < b; lo += n {
		hi := min(lo+n, b)
		f(lo, hi, c.scratch[:(hi-lo)*per])
	}
}

// perSample adds every sample's squared gradient norm into ctx.SqNorms and
// defers the clipped weight gradient.
func (c *Conv2d) perSample(ctx *Context, dy *tensor.Tensor, b, h, w, ow int) {
	kk, p := c.cin*c.k*c.k, dy.Len()/(b*c.cout)
	sq := ctx.SqNorms()
	if len(sq) != b {
		panic(fmt.Sprintf("nn: %s: batch of %d in per-sample mode for %d samples", c.Weight.Name, b, len(sq)))
	}
	cout := c.cout
	// The Gram matrix of the unfolded input costs 2P²·cin·k² flops formed
	// directly, or 2N²·cin + k²P² through the padded image's (N positions):
	// several times less for small images with k > 1.
	hp, wp := h+2*c.pad, w+2*c.pad
	n := hp * wp
	pf, nf := float64(p), float64(n)
	direct := 2 * pf * pf * float64(kk)
	padded := 2*nf*nf*float64(c.cin) + float64(c.k*c.k)*pf*pf
	ghost := c.rule.choose(p, kk, cout, min(direct, padded)+2*pf*pf*float64(cout))
	usePadded := padded < direct
	per := 0 // kernels.GramDot keeps its own scratch
	if usePadded {
		per = c.cin*n + n*n + 2*p*p
	}
	if !ghost {
		c.psW = resize(c.psW, b*cout*kk)
		kernels.SgemmBatched(false, true, cout, kk, p, 1, dy.Data, p, cout*p, c.cols, p, kk*p, 0, c.psW, kk, cout*kk, b)
	}
	if c.Bias != nil {
		c.psB = resize(c.psB, b*cout)
	}
	nw := workers(b)
	for len(c.gram) < nw {
		c.gram = append(c.gram, nil)
	}
	parallel(b, nw, func(wk, lo, hi int) {
		if ghost {
			c.gram[wk] = resize(c.gram[wk], per)
		}
		img := c.cin * h * w
		for i := lo; i < hi; i++ {
			var s float64
			dyi := dy.Data[i*cout*p : (i+1)*cout*p]
			switch {
			case ghost && usePadded:
				s = c.paddedSqNorm(c.x.Data[i*img:(i+1)*img], h, w, ow, dyi, c.gram[wk])
			case ghost:
				s = kernels.GramDot(true, p, c.cols[i*kk*p:(i+1)*kk*p], kk, dyi, cout)
			default:
				s = kernels.SqNorm(c.psW[i*cout*kk : (i+1)*cout*kk])
			}
			if c.Bias != nil {
				pb := c.psB[i*cout : (i+1)*cout]
				for co := range pb {
					pb[co] = sum(dy.Data[(i*cout+co)*p : (i*cout+co+1)*p])
				}
				s += kernels.SqNorm(pb)
			}
			sq[i] += s
		}
	})
	c.dy = dy
	ctx.Defer(func(f []float32) {
		if ghost {
			c.clippedGEMM(f, kk, p)
		} else {
			weightedSum(c.Weight.Grad.Data, c.psW, f)
		}
		if c.Bias != nil {
			weightedSum(c.Bias.Grad.Data, c.psB, f)
		}
		c.dy = nil
	})
}

// paddedSqNorm returns one sample's ghost norm ⟨U_iᵀU_i, dY_iᵀdY_i⟩ without
// the Gram matrix of its unfolded input: column p of U_i is the k×k window
// of the zero-padded image X̃ [cin, hp·wp] at output position p, so
//
//	(U_iᵀU_i)[p,q] = Σ_{ky,kx} G[a_p + ky·wp + kx, a_q + ky·wp + kx],
//
// with G = X̃ᵀX̃ over channels and a_p the window's top-left corner in X̃.
// x is the sample's image [cin,h,w], dy its output gradient [cout,P], and
// scratch holds cin·N + N² + 2P² floats, N = hp·wp.
func (c *Conv2d) paddedSqNorm(x []float32, h, w, ow int, dy []float32, scratch []float32) float64 {
	hp, wp := h+2*c.pad, w+2*c.pad
	n, p := hp*wp, len(dy)/c.cout
	xp, g := scratch[:c.cin*n], scratch[c.cin*n:c.cin*n+n*n]
	gy := scratch[c.cin*n+n*n : c.cin*n+n*n+p*p]
	clear(xp)
	for ch := range c.cin {
		for r := range h {
			copy(xp[ch*n+(r+c.pad)*wp+c.pad:], x[(ch*h+r)*w:(ch*h+r+1)*w])
		}
	}
	kernels.Sgemm(true, false, n, n, c.cin, 1, xp, n, xp, n, 0, g, n)
	kernels.Sgemm(true, false, p, p, c.cout, 1, dy, p, dy, p, 0, gy, p)
	corner := func(q int) int { return (q/ow)*c.stride*wp + (q%ow)*c.stride }
	// Both Gram matrices are symmetric: sum the upper triangle, the
	// off-diagonal entries twice.
	var s float64
	for q1 := range p {
		a1 := corner(q1)
		for q2 := q1; q2 < p; q2++ {
			a2 := corner(q2)
			var u float32
			for ky := range c.k {
				for kx := range c.k {
					off := ky*wp + kx
					u += g[(a1+off)*n+a2+off]
				}
			}
			v := float64(u) * float64(gy[q1*p+q2])
			if q2 != q1 {
				v *= 2
			}
			s += v
		}
	}
	return s
}

// clippedGEMM adds Σ_i f_i·dY_i·U_iᵀ into the weight gradient: the plain
// weight-gradient GEMMs on output gradients scaled by f_i. Samples with
// f_i = 0 are left out.
func (c *Conv2d) clippedGEMM(f []float32, kk, p int) {
	m := c.cout * p
	c.scaled = resize(c.scaled, m)
	for i, fi := range f {
		if fi == 0 {
			continue
		}
		copy(c.scaled, c.dy.Data[i*m:(i+1)*m])
		kernels.Scale(fi, c.scaled)
		kernels.Sgemm(false, true, c.cout, kk, p, 1, c.scaled, p, c.cols[i*kk*p:], p, 1, c.Weight.Grad.Data, kk)
	}
}

// sum is Σ v accumulated in float64.
func sum(v []float32) float32 {
	var s float64
	for _, x := range v {
		s += float64(x)
	}
	return float32(s)
}
