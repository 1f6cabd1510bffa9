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
	var pre []float32
	if batch > 1 && m*n*k > smallWork {
		checkMatrix("A", transA, m, k, a, lda)
		buf := getPrepacked(roundUp(m, best.mr) * k)
		defer prepacked.Put(buf)
		pre = *buf
		best.prepackA(transA, a, lda, m, k, alpha, pre)
	}
	eachProduct(batch, m*n*k, func(w, i, threads int) {
		b, c := operands(w, i)
		checkGemm(transA, transB, m, n, k, a, lda, b, ldb, c, ldc)
		sgemmPre(best, threads, pre, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		done(w, i)
	})
}

// SgemmEachOwn is SgemmEach for products that share no operand: operands(w,
// i) returns product i's A_i as well as its B_i and C_i, and nothing is
// packed once for the batch. The products are shared out, and operands and
// done called, as SgemmEach does, so done(w, i) finds C_i in the cache of
// the core that formed it (a per-sample weight gradient whose norm is taken
// there). Every C_i is bit-identical to a lone Sgemm's, at any GOMAXPROCS.
func SgemmEachOwn(transA, transB bool, m, n, k int, alpha float32, lda, ldb int, beta float32, ldc int, batch int, operands func(w, i int) (a, b, c []float32), done func(w, i int)) {
	if m < 0 || n < 0 || k < 0 {
		checkGemm(transA, transB, m, n, k, nil, lda, nil, ldb, nil, ldc) // panics
	}
	if batch <= 0 {
		return
	}
	eachProduct(batch, m*n*k, func(w, i, threads int) {
		a, b, c := operands(w, i)
		checkGemm(transA, transB, m, n, k, a, lda, b, ldb, c, ldc)
		sgemmPre(best, threads, nil, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		done(w, i)
	})
}

// eachProduct runs one(w, i, threads) for the batch products of work
// multiply-adds each, as SgemmBatched shares out separate products: whole
// ones among the goroutines, each taking the next one not yet taken (so
// one slowed down by another job on its core takes fewer), where there
// are enough of them; otherwise one after another on the calling goroutine
// (w = 0), each split among threads goroutines.
func eachProduct(batch, work int, one func(w, i, threads int)) {
	threads := runtime.GOMAXPROCS(0)
	if threads == 1 || batch == 1 || (work >= batchSplitWork && batch < batchShare*threads) {
		for i := range batch {
			one(0, i, threads)
		}
		return
	}
	var next atomic.Int64
	Parallel(min(threads, batch), func(w int) {
		for i := int(next.Add(1)) - 1; i < batch; i = int(next.Add(1)) - 1 {
			one(w, i, 1)
		}
	})
}
