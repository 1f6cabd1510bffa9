package kernels

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
)

// TestAccumulateBatched checks that products sharing C (strideC 0) run
// in order, as a weight gradient summed over a batch needs: bit-identical to
// sequential Sgemm calls at any GOMAXPROCS, whether C is cut into column
// blocks (accumulateBatched) or not.
func TestAccumulateBatched(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for _, g := range []gemmCase{
		{transB: true, m: 8, n: 9, k: 10, alpha: 1, beta: 1}, // too small to cut
		// A convolution's weight gradient dY·Uᵀ (conv3 of AlexNet at a
		// quarter width).
		{transB: true, m: 96, n: 432, k: 64, alpha: 1, beta: 1},
		{transB: true, m: 300, n: 1000, k: 70, alpha: 1, beta: 1, pad: 3},
		// Several K slices and row blocks, odd edges, other scalars.
		{m: 250, n: 97, k: 600, alpha: 0.5, beta: 0.75},
		{transA: true, transB: true, m: 13, n: 1200, k: 300, alpha: 2, beta: 1, pad: 1},
		{transA: true, m: 40, n: 65, k: 33, alpha: 1, beta: 0},
		// Too few column tiles: row blocks (the first convolution's
		// weight gradient, 64×27×1024 a product; a transposed A).
		{transB: true, m: 64, n: 27, k: 1024, alpha: 1, beta: 1},
		{transA: true, m: 77, n: 9, k: 50, alpha: 0.5, beta: 1, pad: 2},
	} {
		const batch = 5
		a, lda, _, ldb, c, ldc := g.operands(r)
		as, sa := randSlice(r, batch*len(a)), len(a)
		_, _, b, _, _, _ := g.operands(r)
		bs, sb := randSlice(r, batch*len(b)), len(b)
		for _, shared := range []bool{false, true} {
			if shared {
				sa = 0
			}
			want := append([]float32(nil), c...)
			for i := range batch {
				Sgemm(g.transA, g.transB, g.m, g.n, g.k, g.alpha, as[i*sa:], lda, bs[i*sb:], ldb, g.beta, want, ldc)
			}
			for _, procs := range []int{1, 2, 3} {
				got := append([]float32(nil), c...)
				func() {
					defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
					SgemmBatched(g.transA, g.transB, g.m, g.n, g.k, g.alpha, as, lda, sa, bs, ldb, sb, g.beta, got, ldc, 0, batch)
				}()
				if !bitsEqual(got, want) {
					t.Errorf("%v, shared A %v, GOMAXPROCS %d: accumulated batch differs from sequential calls", g, shared, procs)
				}
			}
		}
	}
}

// BenchmarkAccumulate times AlexNet's convolution weight gradients, Σ_i
// dY_i·U_iᵀ over 64 images into one C: "sequential" is one Sgemm per image
// (each split among the goroutines), "blocked" is SgemmBatched with
// strideC 0 (C cut into a column block per goroutine, every image on
// each block).
func BenchmarkAccumulate(b *testing.B) {
	for _, s := range []struct {
		name    string
		m, n, k int
	}{
		{"conv1", 64, 27, 1024},
		{"conv2", 192, 1600, 256},
		{"conv3", 384, 1728, 64},
		{"conv4", 256, 3456, 64},
		{"conv5", 256, 2304, 64},
	} {
		const batch = 64
		r := rand.New(rand.NewPCG(1, 1))
		a, bb, c := randSlice(r, batch*s.m*s.k), randSlice(r, batch*s.n*s.k), make([]float32, s.m*s.n)
		flops := 2 * float64(s.m*s.n*s.k*batch)
		for _, blocked := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/blocked=%v", s.name, blocked), func(b *testing.B) {
				for b.Loop() {
					if blocked {
						SgemmBatched(false, true, s.m, s.n, s.k, 1, a, s.k, s.m*s.k, bb, s.k, s.n*s.k, 1, c, s.n, 0, batch)
						continue
					}
					for i := range batch {
						Sgemm(false, true, s.m, s.n, s.k, 1, a[i*s.m*s.k:], s.k, bb[i*s.n*s.k:], s.k, 1, c, s.n)
					}
				}
				reportGFLOPs(b, flops)
			})
		}
	}
}
