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
//
// A frozen weight or bias (Param.Frozen) takes no part: no gradient, no
// Gram matrix, no per-sample gradient, no norm term.
type Conv2d struct {
	Weight *Param // [cout,cin,k,k]
	Bias   *Param // [cout]; nil without bias
	// NoInputGrad makes Backward skip the input gradient and return nil: set
	// it on a model's first layer, whose input gradient nobody uses.
	NoInputGrad bool
	// ReLU makes the layer a convolution followed by a ReLU: the output is
	// max(conv(x), 0), computed in the pass that adds the bias, and
	// Backward masks the output gradient in the pass that sums the bias
	// gradient, instead of a ReLU layer's two more passes over the output.
	// The results are those of Conv2d and ReLU one after the other, bit
	// for bit.
	ReLU bool

	cin, cout, k, stride, pad int
	rule                      rule

	x       *tensor.Tensor
	cols    []float32 // [B, cin·k·k, P] unfolded inputs of the latest Forward
	y, dx   *tensor.Tensor
	dpre    *tensor.Tensor // with ReLU: the gradient of the output before the ReLU
	dy      *tensor.Tensor // per-sample mode: the output gradient (before the ReLU), read by Finish
	psW     []float32      // materialised per-sample weight gradients [B,cout,cin·k·k]
	psB     []float32      // per-sample bias gradients [B,cout], formed by Backward's pass over dy
	scratch []float32      `held:"-"` // each goroutine's column gradients (Backward), a chunk's c-scaled output gradients (Finish)
	gram    [][]float32    `held:"-"` // per-worker scratch for imageSqNorm
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
	if ctx.PerSampleMemory > 0 && !c.Weight.Frozen {
		ctx.offer(c.offer(b, h, w, p), c.rule)
	}
	c.x = x
	c.cols = resize(c.cols, b*kk*p)
	c.y = reuse(c.y, b, c.cout, oh, ow)
	img, out := c.cin*h*w, c.cout*p
	// Per image, on one goroutine: unfold it, convolve it while its
	// columns are in cache, then add the bias and apply the ReLU while
	// its output is.
	kernels.SgemmEach(false, false, c.cout, p, kk, 1, c.Weight.Value.Data, kk, p, 0, p, b,
		func(_, i int) ([]float32, []float32) {
			cols := c.cols[i*kk*p : (i+1)*kk*p]
			kernels.Im2col(x.Data[i*img:(i+1)*img], c.cin, h, w, c.k, c.k, c.stride, c.pad, cols)
			return cols, c.y.Data[i*out : (i+1)*out]
		},
		func(_, i int) { c.finishOutput(c.y.Data[i*out:(i+1)*out], p) })
	return c.y
}

// finishOutput adds the bias to one image's output y [cout,p] and applies
// the ReLU, as the layers would one after the other.
func (c *Conv2d) finishOutput(y []float32, p int) {
	if c.Bias == nil && !c.ReLU {
		return
	}
	for co := range c.cout {
		row := y[co*p : (co+1)*p]
		switch {
		case c.Bias == nil:
			reluRow(row, row)
		case c.ReLU:
			kernels.BiasReLU(row, row, c.Bias.Value.Data[co])
		default:
			v := c.Bias.Value.Data[co]
			for j := range row {
				row[j] += v
			}
		}
	}
}

// Backward returns the input gradient and produces the weight gradients as
// Context says. The input gradient is owned by the layer and overwritten by
// its next Backward.
func (c *Conv2d) Backward(ctx *Context, dy *tensor.Tensor) *tensor.Tensor {
	return c.backward(ctx, dy, !c.NoInputGrad)
}

// BackwardParams produces the weight gradients of Backward and no input
// gradient.
func (c *Conv2d) BackwardParams(ctx *Context, dy *tensor.Tensor) { c.backward(ctx, dy, false) }

// biasTrains reports whether the layer has a bias to train.
func (c *Conv2d) biasTrains() bool { return c.Bias != nil && !c.Bias.Frozen }

// backward is Backward, forming the input gradient only with input.
func (c *Conv2d) backward(ctx *Context, dy *tensor.Tensor, input bool) *tensor.Tensor {
	x := c.x
	if x == nil {
		panic(fmt.Sprintf("nn: %s: Backward before Forward", c.Weight.Name))
	}
	b, h, w, oh, ow := c.geometry(x)
	kk, p := c.cin*c.k*c.k, oh*ow
	if dy.Len() != b*c.cout*p {
		panic(fmt.Sprintf("nn: %s: Backward with dy %v after Forward of %v", c.Weight.Name, dy, x))
	}
	plain, bias := !ctx.PerSample(), c.biasTrains()
	if c.ReLU || bias {
		// One pass over dy: the ReLU's mask (dy becomes the gradient of
		// the output before the ReLU) and the bias gradient, summed over
		// the samples in the plain mode and per sample (psB) in the
		// per-sample mode; channels in parallel, each adding its samples
		// in order.
		in := dy
		if c.ReLU {
			c.dpre = reuse(c.dpre, dy.Shape...)
			dy = c.dpre
		}
		if !plain && bias {
			c.psB = resize(c.psB, b*c.cout)
		}
		parallel(c.cout, workers(b*c.cout*p/passSpan), func(_, lo, hi int) {
			for i := range b {
				rows := dy.Data[(i*c.cout+lo)*p : (i*c.cout+hi)*p]
				if c.ReLU {
					kernels.ReLUGrad(rows, in.Data[(i*c.cout+lo)*p:(i*c.cout+hi)*p], c.y.Data[(i*c.cout+lo)*p:(i*c.cout+hi)*p])
				}
				if bias && plain {
					addRowSums(c.Bias.Grad.Data[lo:hi], rows, p)
				} else if bias {
					pb := c.psB[i*c.cout+lo : i*c.cout+hi]
					clear(pb)
					addRowSums(pb, rows, p)
				}
			}
		})
	}
	switch {
	case c.Weight.Frozen && !bias:
	case !plain:
		c.perSample(ctx, dy, b, h, w, ow)
	case !c.Weight.Frozen:
		// Σ_i dY_i·U_iᵀ, added in sample order (SgemmBatched shares out
		// column blocks of the weight gradient, every sample on each).
		kernels.SgemmBatched(false, true, c.cout, kk, p, 1, dy.Data, p, c.cout*p, c.cols, p, kk*p, 1, c.Weight.Grad.Data, kk, 0, b)
	}
	if !input {
		return nil
	}
	c.dx = reuse(c.dx, x.Shape...)
	// Per image, on one goroutine: its column gradients Wᵀ·dY_i into that
	// goroutine's scratch, folded onto the input gradient while in cache.
	img, out := c.cin*h*w, c.cout*p
	c.scratch = resize(c.scratch, min(runtime.GOMAXPROCS(0), b)*kk*p)
	kernels.SgemmEach(true, false, kk, p, c.cout, 1, c.Weight.Value.Data, kk, p, 0, p, b,
		func(wk, i int) ([]float32, []float32) {
			return dy.Data[i*out : (i+1)*out], c.scratch[wk*kk*p : (wk+1)*kk*p]
		},
		func(wk, i int) {
			dx := c.dx.Data[i*img : (i+1)*img]
			clear(dx)
			kernels.Col2im(c.scratch[wk*kk*p:(wk+1)*kk*p], c.cin, h, w, c.k, c.k, c.stride, c.pad, dx)
		})
	return c.dx
}

// chunkFloats bounds the scratch that Finish's scaled output gradients
// take (clippedGEMM).
const chunkFloats = 1 << 22

// chunks runs f over consecutive blocks of samples [lo,hi), each of about
// chunkFloats/per samples and at least as many as there are threads, handing
// it scratch of per elements per sample. It bounds the scratch memory to a
// few samples' while letting one call handle many.
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
	cout, noW := c.cout, c.Weight.Frozen
	ghost := noW || ctx.choose(c.offer(b, h, w, p), c.rule)
	direct, image := c.inputGram(h, w, p)
	useImage := image < direct
	// add adds sample i's squared norm, its weight's s and its bias's.
	add := func(i int, s float64) {
		if c.biasTrains() { // psB: from Backward's pass over dy
			s += kernels.SqNorm(c.psB[i*cout : (i+1)*cout])
		}
		sq[i] += s
	}
	switch {
	case noW:
		for i := range b {
			add(i, 0)
		}
	case !ghost:
		// g_i = dY_i·U_iᵀ, its norm taken on the core that formed it while
		// it is in cache.
		c.psW = resize(c.psW, b*cout*kk)
		gi := func(i int) []float32 { return c.psW[i*cout*kk : (i+1)*cout*kk] }
		kernels.SgemmEachOwn(false, true, cout, kk, p, 1, p, p, 0, kk, b,
			func(_, i int) ([]float32, []float32, []float32) {
				return dy.Data[i*cout*p : (i+1)*cout*p], c.cols[i*kk*p : (i+1)*kk*p], gi(i)
			},
			func(_, i int) { add(i, kernels.SqNorm(gi(i))) })
	default:
		nw := workers(b)
		for len(c.gram) < nw {
			c.gram = append(c.gram, nil)
		}
		parallel(b, nw, func(wk, lo, hi int) {
			if useImage { // kernels.GramDot keeps its own scratch
				c.gram[wk] = resize(c.gram[wk], c.imageScratch(h*w, p))
			}
			img := c.cin * h * w
			for i := lo; i < hi; i++ {
				dyi := dy.Data[i*cout*p : (i+1)*cout*p]
				if useImage {
					add(i, c.imageSqNorm(c.x.Data[i*img:(i+1)*img], h, w, ow, dyi, c.gram[wk]))
				} else {
					add(i, kernels.GramDot(true, p, c.cols[i*kk*p:(i+1)*kk*p], kk, dyi, cout))
				}
			}
		})
	}
	c.dy = dy
	ctx.Defer(func(f []float32) {
		switch {
		case noW:
		case ghost:
			c.clippedGEMM(f, kk, p)
		default:
			weightedSum(c.Weight.Grad.Data, c.psW, f)
		}
		if c.biasTrains() {
			weightedSum(c.Bias.Grad.Data, c.psB, f)
		}
		c.dy = nil
	})
}

// offer is the layer as the per-sample plan sees it for b images of h×w
// pixels and p output positions: its ghost norm costs the Gram matrix of
// the unfolded input, the cheaper way (inputGram), and 2P²·cout flops for
// the output gradient's.
func (c *Conv2d) offer(b, h, w, p int) offer {
	direct, image := c.inputGram(h, w, p)
	pf := float64(p)
	return offer{key: c, n: b, t: p, in: c.cin * c.k * c.k, out: c.cout, gram: min(direct, image) + 2*pf*pf*float64(c.cout)}
}

// inputGram returns the flops of the unfolded input's Gram matrix U_iᵀU_i
// formed directly, 2P²·cin·k², and through the image's channel Gram
// matrix, 2N²·cin + k²P² (N = h·w positions): several times less for small
// images with k > 1.
func (c *Conv2d) inputGram(h, w, p int) (direct, image float64) {
	pf, nf := float64(p), float64(h*w)
	return 2 * pf * pf * float64(c.cin*c.k*c.k), 2*nf*nf*float64(c.cin) + float64(c.k*c.k)*pf*pf
}

// imageSqNorm returns one sample's ghost norm ⟨U_iᵀU_i, dY_iᵀdY_i⟩ without
// the Gram matrix of its unfolded input: column q of U_i holds the image
// X [cin, h·w] at the positions pos(q, t) of the window's taps t that fall
// inside the image (the padding's zeros elsewhere), so
//
//	(U_iᵀU_i)[q,r] = Σ_t G[pos(q,t), pos(r,t)], over the taps inside the image for both,
//
// with G = XᵀX over channels. x is the sample's image [cin,h,w], dy its
// output gradient [cout,P], and scratch holds imageScratch(h·w, P) floats.
func (c *Conv2d) imageSqNorm(x []float32, h, w, ow int, dy []float32, scratch []float32) float64 {
	n, p := h*w, len(dy)/c.cout
	g, gy, utu := scratch[:n*n], scratch[n*n:n*n+p*p], scratch[n*n+p*p:n*n+2*p*p]
	kernels.GramCols(n, x, c.cin, n, g)
	kernels.GramCols(p, dy, c.cout, p, gy)
	// GramCols forms the upper triangles, and only those are read: for
	// q < r, a tap inside the image at q lies at or before the same tap
	// at r (their rows differ by a multiple of stride·w ≥ w, their
	// columns by less than w).
	//
	// utu[q,r] (r ≥ q) = Σ_t G[pos(q,t), pos(r,t)], tap by tap in the
	// unfolding's order: for a tap, each pair of output rows (oy1 ≤ oy2)
	// whose taps fall inside the image adds a block of G, the output
	// columns inside the image as rows and columns; with stride 1 one
	// kernels.AddRows call. (Blocks on the diagonal also fill entries
	// below it, from G's unformed lower triangle: never read.)
	oh, st := p/ow, c.stride
	clear(utu)
	for ky := range c.k {
		y0, y1 := kernels.ValidRange(oh, h, ky, st, c.pad)
		for kx := range c.k {
			lo, hi := kernels.ValidRange(ow, w, kx, st, c.pad)
			if lo >= hi {
				continue
			}
			for oy1 := y0; oy1 < y1; oy1++ {
				at1 := (oy1*st-c.pad+ky)*w + lo*st - c.pad + kx // pos of (oy1, lo)
				for oy2 := oy1; oy2 < y1; oy2++ {
					at2 := (oy2*st-c.pad+ky)*w + lo*st - c.pad + kx
					dst, src := utu[(oy1*ow+lo)*p+oy2*ow+lo:], g[at1*n+at2:]
					if st == 1 {
						kernels.AddRows(dst, p, src, n, hi-lo, hi-lo)
						continue
					}
					for a := range hi - lo {
						d, s := dst[a*p:a*p+hi-lo], src[a*st*n:]
						for b := range d {
							d[b] += s[b*st]
						}
					}
				}
			}
		}
	}
	// Both matrices are symmetric: the upper triangle, the off-diagonal
	// entries twice.
	var s float64
	for q1 := range p {
		u, gyr := utu[q1*p:(q1+1)*p], gy[q1*p:(q1+1)*p]
		s += float64(u[q1]) * float64(gyr[q1])
		for q2 := q1 + 1; q2 < p; q2++ {
			s += 2 * (float64(u[q2]) * float64(gyr[q2]))
		}
	}
	return s
}

// imageScratch is the scratch imageSqNorm takes for an image of n
// positions and P output positions.
func (c *Conv2d) imageScratch(n, p int) int { return n*n + 2*p*p }

// clippedGEMM adds Σ_i f_i·dY_i·U_iᵀ into the weight gradient: the plain
// weight-gradient GEMMs on output gradients scaled by f_i, a chunk of
// samples at a time (in Backward's scratch, free by then), each run of
// samples with f_i ≠ 0 as one accumulating SgemmBatched. Samples with
// f_i = 0 are left out; the others are added in sample order, as one Sgemm
// each would.
func (c *Conv2d) clippedGEMM(f []float32, kk, p int) {
	m := c.cout * p
	c.chunks(len(f), m, func(lo, hi int, buf []float32) {
		parallel(hi-lo, workers(hi-lo), func(_, a, z int) {
			for i := a; i < z; i++ {
				if fi := f[lo+i]; fi != 0 {
					copy(buf[i*m:(i+1)*m], c.dy.Data[(lo+i)*m:(lo+i+1)*m])
					kernels.Scale(fi, buf[i*m:(i+1)*m])
				}
			}
		})
		for i := lo; i < hi; {
			j := i
			for j < hi && f[j] != 0 {
				j++
			}
			if j > i {
				kernels.SgemmBatched(false, true, c.cout, kk, p, 1, buf[(i-lo)*m:], p, m, c.cols[i*kk*p:], p, kk*p, 1, c.Weight.Grad.Data, kk, 0, j-i)
			}
			i = j + 1
		}
	})
}

// addRowSums adds to dst[r] the sum of row r of src (rows of n floats),
// each accumulated in float64 in order and rounded once. Four rows run
// side by side: one chain of dependent additions runs at the adder's
// latency, four overlap, and each row's sum is the same as alone.
func addRowSums(dst, src []float32, n int) {
	r := 0
	for ; r+4 <= len(dst); r += 4 {
		a, b := src[r*n:(r+1)*n], src[(r+1)*n:(r+2)*n]
		c, d := src[(r+2)*n:(r+3)*n], src[(r+3)*n:(r+4)*n]
		var s0, s1, s2, s3 float64
		for j, v := range a {
			s0 += float64(v)
			s1 += float64(b[j])
			s2 += float64(c[j])
			s3 += float64(d[j])
		}
		dst[r] += float32(s0)
		dst[r+1] += float32(s1)
		dst[r+2] += float32(s2)
		dst[r+3] += float32(s3)
	}
	for ; r < len(dst); r++ {
		var s float64
		for _, v := range src[r*n : (r+1)*n] {
			s += float64(v)
		}
		dst[r] += float32(s)
	}
}
