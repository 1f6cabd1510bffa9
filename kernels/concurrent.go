package kernels

import (
	"runtime"
	"sync/atomic"
)

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
// does: no product may write what another reads or writes. The last
// product is shared among the goroutines as Sgemm shares one; each of the
// others is computed whole by one goroutine, taken as it starts, before
// it joins the last: with a layer's input gradient and then its weight
// gradient (the same flops) on two cores, one computes the input gradient
// while the other packs the weight gradient's shared operand and starts
// on its chunks, and the first takes the chunks left when it is done. That
// saves the joins and the joint packing of splitting every product, and
// the goroutines still end together. So put the largest product last.
// Where the last product does not split, every product runs whole on its
// own goroutine. Results are bit-identical to calling Sgemm on each in
// turn, for any GOMAXPROCS. It panics as Sgemm does.
func SgemmConcurrent(gemms ...Gemm) {
	for _, g := range gemms {
		checkGemm(g.TransA, g.TransB, g.M, g.N, g.K, g.A, g.LDA, g.B, g.LDB, g.C, g.LDC)
	}
	threads := runtime.GOMAXPROCS(0)
	if threads == 1 || len(gemms) <= 1 {
		for i := range gemms {
			gemms[i].run(threads)
		}
		return
	}
	others, last := gemms[:len(gemms)-1], &gemms[len(gemms)-1]
	var next atomic.Int64
	side := func() {
		for i := int(next.Add(1)) - 1; i < len(others); i = int(next.Add(1)) - 1 {
			others[i].run(1)
		}
	}
	workers := 0
	if last.Alpha != 0 {
		workers = min(threads, last.M*last.N*last.K/minThreadWork)
	}
	if workers > 1 && gemmParallel(best, workers, nil, side, last.TransA, last.TransB, last.M, last.N, last.K, last.Alpha, last.A, last.LDA, last.B, last.LDB, last.Beta, last.C, last.LDC) {
		side() // the products no goroutine took (more than there were goroutines)
		return
	}
	// Every product whole: product i on goroutine i mod n, with the n
	// goroutines' share of the threads (threads/n each, one more for the
	// first threads mod n).
	n := min(len(gemms), threads)
	Parallel(n, func(w int) {
		t := threads / n
		if w < threads%n {
			t++
		}
		for i := w; i < len(gemms); i += n {
			gemms[i].run(t)
		}
	})
}

// run computes g with up to threads goroutines, as Sgemm does.
func (g *Gemm) run(threads int) {
	sgemm(best, threads, g.TransA, g.TransB, g.M, g.N, g.K, g.Alpha, g.A, g.LDA, g.B, g.LDB, g.Beta, g.C, g.LDC)
}
