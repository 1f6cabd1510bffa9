package kernels

import "runtime"

// A Gemm holds the arguments of one Sgemm call:
// C = Alpha·op(A)·op(B) + Beta·C.
type Gemm struct {
	TransA, TransB bool
	M, N, K        int
	Alpha          float32
	A              []float32
	LDA            int
	B              []float32
	LDB            int
	Beta           float32
	C              []float32
	LDC            int
}

// SgemmConcurrent computes independent products at once, each as Sgemm
// does: no product may write what another reads or writes. The goroutines
// are shared out among the products, so that with as many products as
// goroutines each product runs on one goroutine, without joint packing and
// without the joins of splitting it (a layer's weight and input gradients,
// which take the same flops, on two cores). Results are bit-identical to
// calling Sgemm on each in turn, for any GOMAXPROCS. It panics as Sgemm
// does.
func SgemmConcurrent(gemms ...Gemm) {
	for _, g := range gemms {
		checkGemm(g.TransA, g.TransB, g.M, g.N, g.K, g.A, g.LDA, g.B, g.LDB, g.C, g.LDC)
	}
	threads := runtime.GOMAXPROCS(0)
	n := min(len(gemms), threads)
	// Product i is computed by goroutine i mod n, with the n goroutines'
	// share of the threads: threads/n each, one more for the first
	// threads mod n.
	run := func(w int) {
		t := threads / n
		if w < threads%n {
			t++
		}
		for i := w; i < len(gemms); i += n {
			g := &gemms[i]
			sgemm(best, t, g.TransA, g.TransB, g.M, g.N, g.K, g.Alpha, g.A, g.LDA, g.B, g.LDB, g.Beta, g.C, g.LDC)
		}
	}
	Parallel(n, run)
}
