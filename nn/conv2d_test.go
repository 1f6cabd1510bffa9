package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/psclip/psclip/kernels"
	"github.com/psclip/psclip/tensor"
)

var convCases = []struct {
	name                      string
	cin, cout, k, stride, pad int
	h, w                      int
}{
	{"3x3-same", 2, 3, 3, 1, 1, 5, 5},
	{"stride2-pad1", 2, 4, 3, 2, 1, 6, 5},
	{"5x5-pad2", 3, 2, 5, 1, 2, 4, 4},
	{"1x1", 3, 2, 1, 1, 0, 3, 4},
}

func TestConv2dGrad(t *testing.T) {
	for _, tc := range convCases {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			c := NewConv2d("conv", tc.cin, tc.cout, tc.k, tc.stride, tc.pad, true)
			randomize(rng, c, 0.5)
			checkGrad(t, c, randTensor(rng, 2, tc.cin, tc.h, tc.w), gradOpt{})
		})
	}
}

// Both per-sample rules are forced on every geometry, followed by a second
// layer so the rule also sees a propagated gradient.
func TestConv2dPerSample(t *testing.T) {
	for _, tc := range convCases {
		for _, r := range []rule{ruleGhost, ruleMaterialise, ruleAuto} {
			for _, bias := range []bool{true, false} {
				t.Run(tc.name, func(t *testing.T) {
					rng := rand.New(rand.NewPCG(3, 4))
					c := NewConv2d("conv", tc.cin, tc.cout, tc.k, tc.stride, tc.pad, bias)
					c.rule = r
					c2 := NewConv2d("conv2", tc.cout, 2, 1, 1, 0, true)
					c2.rule = r
					m := Sequential{c, &ReLU{}, c2}
					randomize(rng, m, 0.5)
					x := randTensor(rng, 4, tc.cin, tc.h, tc.w)
					y := m.Forward(&Context{}, x)
					checkPerSample(t, m, x, ids(4), squareLoss(randTensor(rng, y.Shape...)), medianClip)
				})
			}
		}
	}
}

// TestConv2dReLU checks the fused ReLU against Conv2d and ReLU one after
// the other (each checked against finite differences on its own), bit for
// bit: output, input gradient, weight gradients and per-sample norms, in
// the plain and the per-sample mode (every rule); and the fused layer's
// per-sample mode against the brute force. (Finite differences of the
// fused layer itself would cross the ReLU's kink wherever an output lies
// within the step of zero.)
func TestConv2dReLU(t *testing.T) {
	for _, tc := range convCases {
		for _, bias := range []bool{true, false} {
			t.Run(tc.name, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(11, 12))
				fused := NewConv2d("conv", tc.cin, tc.cout, tc.k, tc.stride, tc.pad, bias)
				fused.ReLU = true
				randomize(rng, fused, 0.5)
				x := randTensor(rng, 3, tc.cin, tc.h, tc.w)
				y := fused.Forward(&Context{}, x)
				checkPerSample(t, fused, x, ids(3), squareLoss(randTensor(rng, y.Shape...)), medianClip)

				apart := NewConv2d("conv", tc.cin, tc.cout, tc.k, tc.stride, tc.pad, bias)
				for i, p := range apart.Params() {
					copy(p.Value.Data, fused.Params()[i].Value.Data)
				}
				dy := randTensor(rng, y.Shape...)
				for _, r := range []rule{ruleAuto, ruleGhost, ruleMaterialise} {
					for _, perSample := range []bool{false, true} {
						fused.rule, apart.rule = r, r
						var got, want []float32
						for _, m := range []Layer{fused, Sequential{apart, &ReLU{}}} {
							for _, p := range m.Params() {
								p.Grad.Zero()
							}
							ctx := &Context{}
							out := append([]float32(nil), m.Forward(ctx, x).Data...)
							if perSample {
								ctx.BeginPerSample(3)
							}
							dx := m.Backward(ctx, dy).Data
							out = append(out, dx...)
							if perSample {
								for _, sq := range ctx.SqNorms() {
									out = append(out, float32(sq))
								}
								ctx.Finish([]float32{0.5, 0, 2})
								ctx.EndPerSample()
							}
							for _, p := range m.Params() {
								out = append(out, p.Grad.Data...)
							}
							got, want = want, out
						}
						for j := range want {
							if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
								t.Fatalf("rule %v, per-sample %v: value %d fused %g, apart %g", r, perSample, j, got[j], want[j])
							}
						}
					}
				}
			})
		}
	}
}

// TestConv2dClippedGEMM checks the ghost rule's clipped weight gradient
// against one Sgemm per sample on its f-scaled output gradient, bit for
// bit, with samples of factor 0 (one with a NaN gradient) left out.
func TestConv2dClippedGEMM(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	c := NewConv2d("conv", 3, 5, 3, 1, 1, false)
	c.rule = ruleGhost
	randomize(rng, c, 0.5)
	x := randTensor(rng, 7, 3, 6, 6)
	dy := randTensor(rng, 7, 5, 6, 6)
	f := []float32{0.5, 0, 0.25, 0, 0, 1, 0.125}
	m := 5 * 36
	for i := range m {
		dy.Data[3*m+i] = float32(math.NaN()) // sample 3, dropped
	}
	ctx := &Context{}
	c.Forward(ctx, x)
	ctx.BeginPerSample(7)
	c.Backward(ctx, dy)
	ctx.Finish(f)
	ctx.EndPerSample()
	kk := 3 * 9
	want := make([]float32, 5*kk)
	for i, fi := range f {
		if fi == 0 {
			continue
		}
		scaled := append([]float32(nil), dy.Data[i*m:(i+1)*m]...)
		kernels.Scale(fi, scaled)
		kernels.Sgemm(false, true, 5, kk, 36, 1, scaled, 36, c.cols[i*kk*36:], 36, 1, want, kk)
	}
	for j, w := range want {
		if got := c.Weight.Grad.Data[j]; math.Float32bits(got) != math.Float32bits(w) {
			t.Fatalf("weight gradient %d: %g, want %g", j, got, w)
		}
	}
}

// TestAddRowSums checks the four-row sums against one row at a time, bit
// for bit, for every count of leftover rows.
func TestAddRowSums(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for rows := range 10 {
		for _, n := range []int{0, 1, 7, 64} {
			src := randTensor(rng, max(1, rows*n)).Data[:rows*n]
			dst := randTensor(rng, max(1, rows)).Data[:rows]
			want := append([]float32(nil), dst...)
			for r := range want {
				var s float64
				for _, v := range src[r*n : (r+1)*n] {
					s += float64(v)
				}
				want[r] += float32(s)
			}
			addRowSums(dst, src, n)
			for r := range want {
				if math.Float32bits(dst[r]) != math.Float32bits(want[r]) {
					t.Fatalf("%d rows of %d: row %d sums to %g, want %g", rows, n, r, dst[r], want[r])
				}
			}
		}
	}
}

func TestConv2dRule(t *testing.T) {
	// AlexNet-CIFAR's convolutions: 32×32 and 16×16 outputs materialise,
	// the 8×8 ones use the ghost norm (materialising would take more memory
	// than their activations).
	ctx := &Context{}
	for _, tc := range []struct {
		c     *Conv2d
		x     *tensor.Tensor
		ghost bool
	}{
		{NewConv2d("a", 3, 64, 3, 1, 1, true), tensor.New(1, 3, 32, 32), false},
		{NewConv2d("b", 64, 192, 5, 1, 2, true), tensor.New(1, 64, 16, 16), false},
		{NewConv2d("c", 192, 384, 3, 1, 1, true), tensor.New(1, 192, 8, 8), true},
		{NewConv2d("d", 256, 256, 3, 1, 1, true), tensor.New(1, 256, 8, 8), true},
	} {
		tc.c.Forward(ctx, tc.x)
		ctx.BeginPerSample(1)
		tc.c.Backward(ctx, tensor.New(tc.c.y.Shape...))
		if got := tc.c.psW == nil; got != tc.ghost {
			t.Errorf("%s: ghost = %v, want %v", tc.c.Weight.Name, got, tc.ghost)
		}
		ctx.Finish([]float32{1})
		ctx.EndPerSample()
	}
}

// benchConv times one forward and backward pass of a convolution on a batch
// of 16, in the plain mode or the per-sample mode with the given rule
// (Finish included): AlexNet-CIFAR's second convolution (64→192 channels,
// 5×5, 16×16 maps) or, with small, its fourth (384→256, 3×3, 8×8 maps),
// which always uses the ghost norm.
func benchConv(b *testing.B, small, perSample bool, r rule) {
	rng := rand.New(rand.NewPCG(1, 1))
	cin, cout, k, hw := 64, 192, 5, 16
	if small {
		cin, cout, k, hw = 384, 256, 3, 8
	}
	c := NewConv2d("conv", cin, cout, k, 1, k/2, true)
	c.rule = r
	InitDefault(rng, c.Weight, c.Bias)
	x := randTensor(rng, 16, cin, hw, hw)
	dy := randTensor(rng, 16, cout, hw, hw)
	f := make([]float32, 16)
	for i := range f {
		f[i] = 1
	}
	ctx := &Context{}
	for b.Loop() {
		c.Forward(ctx, x)
		if perSample {
			ctx.BeginPerSample(16)
		}
		c.Backward(ctx, dy)
		if perSample {
			ctx.Finish(f)
			ctx.EndPerSample()
		}
	}
}

func BenchmarkConv2dPlain(b *testing.B)       { benchConv(b, false, false, ruleAuto) }
func BenchmarkConv2dGhost(b *testing.B)       { benchConv(b, false, true, ruleGhost) }
func BenchmarkConv2dMaterialise(b *testing.B) { benchConv(b, false, true, ruleMaterialise) }
func BenchmarkConv2d8x8Plain(b *testing.B)    { benchConv(b, true, false, ruleAuto) }
func BenchmarkConv2d8x8Ghost(b *testing.B)    { benchConv(b, true, true, ruleGhost) }

// TestImageSqNorm checks the ghost norm through the image's Gram matrix
// against |dY_i·U_iᵀ|² formed in float64 from the unfolded columns,
// on geometries the models' rule never sends it (strides, rectangles, more
// than one tile of positions, padding past the kernel's reach) as well as
// AlexNet's 8×8 shape.
func TestImageSqNorm(t *testing.T) {
	for _, tc := range []struct{ cin, cout, k, stride, pad, h, w int }{
		{3, 4, 3, 1, 1, 5, 5}, {2, 3, 3, 2, 1, 7, 6}, {4, 5, 5, 1, 2, 9, 4},
		{2, 2, 3, 3, 0, 10, 11}, {16, 8, 3, 1, 1, 8, 8}, {3, 2, 2, 2, 1, 12, 12},
		{2, 3, 1, 1, 1, 4, 5}, {2, 2, 3, 2, 3, 5, 5},
	} {
		rng := rand.New(rand.NewPCG(5, 6))
		c := NewConv2d("conv", tc.cin, tc.cout, tc.k, tc.stride, tc.pad, false)
		oh, ow := kernels.ConvOut(tc.h, tc.k, tc.stride, tc.pad), kernels.ConvOut(tc.w, tc.k, tc.stride, tc.pad)
		x := randTensor(rng, tc.cin, tc.h, tc.w)
		dy := randTensor(rng, tc.cout, oh, ow)
		kk, p := tc.cin*tc.k*tc.k, oh*ow
		cols := make([]float32, kk*p)
		kernels.Im2col(x.Data, tc.cin, tc.h, tc.w, tc.k, tc.k, tc.stride, tc.pad, cols)
		var want, mag float64
		for o := range tc.cout {
			for r := range kk {
				var g, m float64
				for q := range p {
					v := float64(dy.Data[o*p+q]) * float64(cols[r*p+q])
					g += v
					m += math.Abs(v)
				}
				want += g * g
				mag += m * m
			}
		}
		got := c.imageSqNorm(x.Data, tc.h, tc.w, ow, dy.Data, make([]float32, c.imageScratch(tc.h*tc.w, p)))
		if math.Abs(got-want) > 1e-5*mag {
			t.Errorf("%+v: %.9g, want %.9g", tc, got, want)
		}
	}
}

// BenchmarkImageSqNorm times one sample's ghost norm through the image's
// Gram matrix (imageSqNorm) on AlexNet-CIFAR's convolutions that the rule
// could send it: the 5×5 one on 16×16 maps and the three 3×3 ones on 8×8.
func BenchmarkImageSqNorm(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, s := range []struct {
		name            string
		cin, cout, k, n int
	}{{"features.3", 64, 192, 5, 16}, {"features.6", 192, 384, 3, 8}, {"features.8", 384, 256, 3, 8}, {"features.10", 256, 256, 3, 8}} {
		c := NewConv2d("conv", s.cin, s.cout, s.k, 1, s.k/2, true)
		x := randTensor(rng, 1, s.cin, s.n, s.n)
		dy := randTensor(rng, 1, s.cout, s.n, s.n)
		scratch := make([]float32, c.imageScratch(s.n*s.n, s.n*s.n))
		b.Run(s.name, func(b *testing.B) {
			for b.Loop() {
				c.imageSqNorm(x.Data, s.n, s.n, s.n, dy.Data, scratch)
			}
		})
	}
}
