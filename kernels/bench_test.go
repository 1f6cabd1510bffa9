package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// A gemmShape is one GEMM a model layer performs. Convolutions run as one
// im2col GEMM per image, weight [Cout, Cin·k·k] × cols [Cin·k·k, oh·ow],
// batched over the 64 images with the weight shared (strideA 0). Linear
// weights are [out, in] as in PyTorch: forward X·Wᵀ (transB), input gradient
// dY·W, weight gradient dYᵀ·X (transA).
type gemmShape struct {
	name           string
	transA, transB bool
	m, n, k        int
	batch          int // products in one SgemmBatched call; 1 for a plain Sgemm
	sharedA        bool
}

// modelShapes: AlexNet-CIFAR (torchvision AlexNet, first conv 3×3 s1 p1,
// 2×2 max-pools: convolutions at 32², 16², 8², 8², 8², batch 64) and GPT in the
// nanoGPT layout (character-level Shakespeare: n_embd 128, block 64, batch 12;
// small: n_embd 384, 6 heads, block 256, batch 12; GPT-2: n_embd 768, block
// 1024, one sequence).
var modelShapes = []gemmShape{
	{name: "alexnet/conv1.fwd", m: 64, n: 1024, k: 27, batch: 64, sharedA: true},
	{name: "alexnet/conv2.fwd", m: 192, n: 256, k: 1600, batch: 64, sharedA: true},
	{name: "alexnet/conv3.fwd", m: 384, n: 64, k: 1728, batch: 64, sharedA: true},
	{name: "alexnet/conv4.fwd", m: 256, n: 64, k: 3456, batch: 64, sharedA: true},
	{name: "alexnet/conv5.fwd", m: 256, n: 64, k: 2304, batch: 64, sharedA: true},
	{name: "alexnet/conv2.dcols", transA: true, m: 1600, n: 256, k: 192, batch: 64, sharedA: true},
	{name: "alexnet/conv4.dcols", transA: true, m: 3456, n: 64, k: 256, batch: 64, sharedA: true},
	{name: "alexnet/conv2.dW", transB: true, m: 192, n: 1600, k: 256, batch: 1},
	{name: "alexnet/fc1.fwd", transB: true, m: 64, n: 4096, k: 9216, batch: 1},
	{name: "alexnet/fc1.dX", m: 64, n: 9216, k: 4096, batch: 1},
	{name: "alexnet/fc1.dW", transA: true, m: 4096, n: 9216, k: 64, batch: 1},
	{name: "alexnet/fc2.fwd", transB: true, m: 64, n: 4096, k: 4096, batch: 1},
	{name: "alexnet/fc3.fwd", transB: true, m: 64, n: 100, k: 4096, batch: 1},
	{name: "gpt128/qkv.fwd", transB: true, m: 768, n: 384, k: 128, batch: 1},
	{name: "gpt128/mlp.fc.fwd", transB: true, m: 768, n: 512, k: 128, batch: 1},
	{name: "gpt128/lm_head.fwd", transB: true, m: 768, n: 65, k: 128, batch: 1},
	{name: "gpt128/attn.proj.fwd", transB: true, m: 768, n: 128, k: 128, batch: 1},
	{name: "gpt128/mlp.proj.dW", transA: true, m: 128, n: 512, k: 768, batch: 1},
	{name: "gpt384/qkv.fwd", transB: true, m: 3072, n: 1152, k: 384, batch: 1},
	{name: "gpt384/mlp.proj.fwd", transB: true, m: 3072, n: 384, k: 1536, batch: 1},
	{name: "gpt384/mlp.proj.dX", m: 3072, n: 1536, k: 384, batch: 1},
	{name: "gpt384/mlp.proj.dW", transA: true, m: 384, n: 1536, k: 3072, batch: 1},
	{name: "gpt384/attn.qk", transB: true, m: 256, n: 256, k: 64, batch: 72},
	{name: "gpt384/attn.av", m: 256, n: 64, k: 256, batch: 72},
	{name: "gpt768/qkv.fwd", transB: true, m: 1024, n: 2304, k: 768, batch: 1},
	{name: "gpt768/mlp.proj.fwd", transB: true, m: 1024, n: 768, k: 3072, batch: 1},
	{name: "square/1024", m: 1024, n: 1024, k: 1024, batch: 1},
	{name: "square/1024.nt", transB: true, m: 1024, n: 1024, k: 1024, batch: 1},
	{name: "square/1024.tn", transA: true, m: 1024, n: 1024, k: 1024, batch: 1},
}

// sgemmFunc has Sgemm's signature, so that other implementations can be
// timed on the same shapes.
type sgemmFunc func(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int)

// setup allocates random operands for s and returns two ways to compute the
// product: ours runs SgemmBatched, with runs f once per product.
func (s gemmShape) setup() (ours func(), with func(f sgemmFunc)) {
	r := rand.New(rand.NewPCG(1, 1))
	lda, ldb := s.k, s.n
	if s.transA {
		lda = s.m
	}
	if s.transB {
		ldb = s.k
	}
	strideA := s.m * s.k
	if s.sharedA {
		strideA = 0
	}
	strideB, strideC := s.k*s.n, s.m*s.n
	a := randSlice(r, max(strideA*s.batch, s.m*s.k))
	b := randSlice(r, strideB*s.batch)
	c := make([]float32, strideC*s.batch)
	ours = func() {
		SgemmBatched(s.transA, s.transB, s.m, s.n, s.k, 1, a, lda, strideA, b, ldb, strideB, 0, c, s.n, strideC, s.batch)
	}
	with = func(f sgemmFunc) {
		for i := range s.batch {
			f(s.transA, s.transB, s.m, s.n, s.k, 1, a[i*strideA:], lda, b[i*strideB:], ldb, 0, c[i*strideC:], s.n)
		}
	}
	return ours, with
}

func (s gemmShape) flops() float64 {
	return 2 * float64(s.m) * float64(s.n) * float64(s.k) * float64(s.batch)
}

func reportGFLOPs(b *testing.B, flops float64) {
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

func BenchmarkSgemm(b *testing.B) {
	for _, s := range modelShapes {
		b.Run(s.name, func(b *testing.B) {
			ours, _ := s.setup()
			for b.Loop() {
				ours()
			}
			reportGFLOPs(b, s.flops())
		})
	}
}

// BenchmarkMicroKernel times each micro-kernel on one packed block, serially,
// to compare the kernels themselves, and (name/L1) one tile of kc steps on
// panels that stay in L1: the kernel's own speed, its bound on the rest.
func BenchmarkMicroKernel(b *testing.B) {
	s := gemmShape{m: 480, n: 512, k: 512, batch: 1}
	r := rand.New(rand.NewPCG(1, 1))
	a, bb, c := randSlice(r, s.m*s.k), randSlice(r, s.k*s.n), make([]float32, s.m*s.n)
	for _, kern := range available {
		b.Run(kern.name, func(b *testing.B) {
			for b.Loop() {
				sgemm(kern, 1, false, false, s.m, s.n, s.k, 1, a, s.k, bb, s.n, 0, c, s.n)
			}
			reportGFLOPs(b, s.flops())
		})
		b.Run(kern.name+"/L1", func(b *testing.B) {
			for b.Loop() {
				kern.tile(kern.kc, a, bb, c, kern.nr, 0)
			}
			reportGFLOPs(b, 2*float64(kern.mr*kern.nr*kern.kc))
		})
	}
}

// convLayers are AlexNet-CIFAR's convolutions on one image.
var convLayers = []struct {
	name                  string
	c, h, w, k, stride, p int
}{
	{"conv1", 3, 32, 32, 3, 1, 1},
	{"conv2", 64, 16, 16, 5, 1, 2},
	{"conv3", 192, 8, 8, 3, 1, 1},
	{"conv4", 384, 8, 8, 3, 1, 1},
	{"conv5", 256, 8, 8, 3, 1, 1},
}

func BenchmarkIm2col(b *testing.B) {
	for _, l := range convLayers {
		oh, ow := ConvOut(l.h, l.k, l.stride, l.p), ConvOut(l.w, l.k, l.stride, l.p)
		x := randSlice(rand.New(rand.NewPCG(1, 1)), l.c*l.h*l.w)
		cols := make([]float32, l.c*l.k*l.k*oh*ow)
		b.Run(l.name, func(b *testing.B) {
			for b.Loop() {
				Im2col(x, l.c, l.h, l.w, l.k, l.k, l.stride, l.p, cols)
			}
			b.SetBytes(int64(4 * len(cols)))
		})
		b.Run(l.name+".col2im", func(b *testing.B) {
			for b.Loop() {
				Col2im(cols, l.c, l.h, l.w, l.k, l.k, l.stride, l.p, x)
			}
			b.SetBytes(int64(4 * len(cols)))
		})
	}
}

// BenchmarkPool times AlexNet-CIFAR's pooling layers on a batch of 64 images.
func BenchmarkPool(b *testing.B) {
	const batch = 64
	r := rand.New(rand.NewPCG(1, 1))
	for _, l := range []struct{ c, h int }{{64, 32}, {192, 16}, {256, 8}} {
		c := batch * l.c // images and channels pool alike
		x := randSlice(r, c*l.h*l.h)
		oh := l.h / 2
		y, idx := make([]float32, c*oh*oh), make([]int32, c*oh*oh)
		b.Run(fmt.Sprintf("maxpool/%dx%d", l.c, l.h), func(b *testing.B) {
			for b.Loop() {
				MaxPool2d(x, c, l.h, l.h, 2, 2, y, idx)
			}
			b.SetBytes(int64(4 * len(x)))
		})
		b.Run(fmt.Sprintf("maxpool.backward/%dx%d", l.c, l.h), func(b *testing.B) {
			for b.Loop() {
				MaxPool2dBackward(y, idx, c, l.h, l.h, oh, oh, x)
			}
			b.SetBytes(int64(4 * len(x)))
		})
	}
	x := randSlice(r, batch*256*4*4)
	y := make([]float32, batch*256*6*6)
	b.Run("avgpool/256x4->6", func(b *testing.B) {
		for b.Loop() {
			AdaptiveAvgPool2d(x, batch*256, 4, 4, 6, 6, y)
		}
		b.SetBytes(int64(4 * len(y)))
	})
	b.Run("avgpool.backward/256x4->6", func(b *testing.B) {
		for b.Loop() {
			AdaptiveAvgPool2dBackward(y, batch*256, 4, 4, 6, 6, x)
		}
		b.SetBytes(int64(4 * len(y)))
	})
}
