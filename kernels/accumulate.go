package kernels

import "sync/atomic"

// accumulateBatched is SgemmBatched for a batch of products that all add
// into one C (strideC 0; a convolution's weight gradient summed over the
// images) on several goroutines. C is cut into one column block per
// goroutine, on micro-tile boundaries, and each goroutine runs every
// product of the batch, in order, on its block. Every element thus sees the
// products in batch order, each computed by the same operations as by the
// whole product (same tiles, same K slices), so the result is bit-identical
// to batch sequential Sgemm calls at any GOMAXPROCS, with one fork and join
// per batch instead of two per K slice of every product. The price is that
// every goroutine packs all of each product's A (for a weight gradient, the
// short output gradient dY_i).
//
// It reports false, doing nothing, on one goroutine and where blocks would
// change how a product is computed (products small enough for sgemmSmall,
// or too narrow for two tiles' width per block).
func accumulateBatched(threads int, pre []float32, transA, transB bool, m, n, k int, alpha float32, a []float32, lda, strideA int, b []float32, ldb, strideB int, beta float32, c []float32, ldc int, batch int) bool {
	kern := best
	tiles := ceilDiv(n, kern.nr)
	workers := min(threads, tiles/2)
	if workers <= 1 || m*kern.nr*k <= smallWork || alpha == 0 || k == 0 {
		return false
	}
	var slot atomic.Int64
	parallelFor(workers, func(_, _ int) {
		w := int(slot.Add(1)) - 1
		j0, j1 := w*tiles/workers*kern.nr, min(n, (w+1)*tiles/workers*kern.nr)
		for i := range batch {
			sgemmPre(kern, 1, pre, transA, transB, m, j1-j0, k, alpha, a[i*strideA:], lda, b[i*strideB+offset(!transB, j0, ldb):], ldb, beta, c[j0:], ldc)
		}
	})
	return true
}
