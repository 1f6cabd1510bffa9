package kernels

import (
	"math/rand/v2"
	"runtime"
	"testing"
)

// TestSgemmConcurrent checks every product against a lone Sgemm, bit for
// bit, at several GOMAXPROCS: none, one, a layer's input and weight
// gradients (the last split, the first whole), a last product too small to
// split or with alpha 0, and more products than goroutines.
func TestSgemmConcurrent(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	dW := gemmCase{transA: true, m: 96, n: 200, k: 300, alpha: 1, beta: 1}
	dX := gemmCase{m: 300, n: 200, k: 96, alpha: 1}
	for _, cases := range [][]gemmCase{
		nil,
		{dX},
		{dX, dW},
		{dW, dX},
		{dW, {m: 5, n: 7, k: 3, alpha: 2, beta: 0.5, pad: 2}},
		{dX, {transB: true, m: 130, n: 70, k: 50, alpha: 0, beta: 0.5}},
		{dW, {m: 5, n: 7, k: 3, alpha: 2, beta: 0.5, pad: 2}, dX, {transB: true, m: 130, n: 70, k: 50, alpha: 1, pad: 1}, dW},
	} {
		gemms := make([]Gemm, len(cases))
		c0 := make([][]float32, len(cases))
		want := make([][]float32, len(cases))
		for i, g := range cases {
			a, lda, b, ldb, c, ldc := g.operands(r)
			gemms[i] = Gemm{TransA: g.transA, TransB: g.transB, M: g.m, N: g.n, K: g.k, Alpha: g.alpha, A: a, LDA: lda, B: b, LDB: ldb, Beta: g.beta, C: c, LDC: ldc}
			c0[i] = append([]float32(nil), c...)
			want[i] = append([]float32(nil), c...)
			Sgemm(g.transA, g.transB, g.m, g.n, g.k, g.alpha, a, lda, b, ldb, g.beta, want[i], ldc)
		}
		for _, procs := range []int{1, 2, 3} {
			func() {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				for i := range gemms {
					copy(gemms[i].C, c0[i])
				}
				SgemmConcurrent(gemms...)
				for i, g := range cases {
					if !bitsEqual(gemms[i].C, want[i]) {
						t.Errorf("%v of %d products, GOMAXPROCS %d: differs from a lone Sgemm", g, len(cases), procs)
					}
				}
			}()
		}
	}
}

// BenchmarkSgemmConcurrent times a Linear layer's backward products, dX =
// dY·W then dW += dYᵀ·X, for the char GPT's four Linear shapes (768 rows):
// at once (SgemmConcurrent) and one after the other (Sgemm each).
func BenchmarkSgemmConcurrent(b *testing.B) {
	r := rand.New(rand.NewPCG(33, 34))
	const rows = 768
	for _, s := range []struct {
		name    string
		in, out int
	}{{"qkv", 128, 384}, {"attn.proj", 128, 128}, {"mlp.fc", 128, 512}, {"mlp.proj", 512, 128}} {
		dy, x, w := randSlice(r, rows*s.out), randSlice(r, rows*s.in), randSlice(r, s.out*s.in)
		dx, dw := make([]float32, rows*s.in), make([]float32, s.out*s.in)
		gemms := []Gemm{
			{M: rows, N: s.in, K: s.out, Alpha: 1, A: dy, LDA: s.out, B: w, LDB: s.in, C: dx, LDC: s.in},
			{TransA: true, M: s.out, N: s.in, K: rows, Alpha: 1, A: dy, LDA: s.out, B: x, LDB: s.in, Beta: 1, C: dw, LDC: s.in},
		}
		flops := 4 * float64(rows*s.in*s.out)
		b.Run(s.name+"/concurrent", func(b *testing.B) {
			for b.Loop() {
				SgemmConcurrent(gemms...)
			}
			reportGFLOPs(b, flops)
		})
		b.Run(s.name+"/sequential", func(b *testing.B) {
			for b.Loop() {
				for i := range gemms {
					gemms[i].run(runtime.GOMAXPROCS(0))
				}
			}
			reportGFLOPs(b, flops)
		})
	}
}
