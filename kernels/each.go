package kernels

import (
	"runtime"
	"sync/atomic"
)

// SgemmEach computes batch products C_i = alpha·op(A)·op(B_i) + beta·C_i
// sharing one A, as SgemmBatched with strideA 0 does, but takes each
// product's B_i and C_i from operands(w, i), called on the goroutine w that
// computes product i just before it, and calls done(w, i) on that goroutine
// just after it. Whatever operands writes into B_i (an unfolded image) is
// thus still in that core's cache when the product reads it, and done finds
// C_i there (to fold it back onto an image, or to add a bias): one pass over
// memory where separate passes over the batch would take three. w is below
// min(GOMAXPROCS at the call, batch), so per-goroutine scratch can be
// indexed by it.
//
// A is packed once for the whole batch. The products are shared out whole
// among the goroutines, each taking the next one not yet taken, where
// SgemmBatched would share them out (enough products per goroutine);
// otherwise they run one after another on the calling goroutine
// (w = 0), each split among the goroutines. Either way every C_i is
// bit-identical to a lone Sgemm's, at any GOMAXPROCS. operands and done for
// different i may run concurrently and must not share what they write.
func SgemmEach(transA, transB bool, m, n, k int, alpha float32, a []float32, lda, ldb int, beta float32, ldc int, batch int, operands func(w, i int) (b, c []float32), done func(w, i int)) {
	if m < 0 || n < 0 || k < 0 {
		checkGemm(transA, transB, m, n, k, a, lda, nil, ldb, nil, ldc) // panics
	}
	if batch <= 0 {
		return
	}
	threads := runtime.GOMAXPROCS(0)
	var pre []float32
	if batch > 1 && m*n*k > smallWork {
		checkMatrix("A", transA, m, k, a, lda)
		buf := getPrepacked(roundUp(m, best.mr) * k)
		defer prepacked.Put(buf)
		pre = *buf
		best.prepackA(transA, a, lda, m, k, alpha, pre)
	}
	one := func(w, i, threads int) {
		b, c := operands(w, i)
		checkGemm(transA, transB, m, n, k, a, lda, b, ldb, c, ldc)
		sgemmPre(best, threads, pre, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		done(w, i)
	}
	if threads == 1 || batch == 1 || (m*n*k >= batchSplitWork && batch < batchShare*threads) {
		for i := range batch {
			one(0, i, threads)
		}
		return
	}
	// Each goroutine w takes the next product not yet taken, so one slowed
	// down by another job on its core takes fewer.
	var next atomic.Int64
	Parallel(min(threads, batch), func(w int) {
		for i := int(next.Add(1)) - 1; i < batch; i = int(next.Add(1)) - 1 {
			one(w, i, 1)
		}
	})
}
