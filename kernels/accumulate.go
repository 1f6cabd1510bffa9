package kernels

// accumulateBatched is SgemmBatched for a batch of products that all add
// into one C (strideC 0; a convolution's weight gradient summed over the
// images) on several goroutines. C is cut into one column block per
// goroutine, on micro-tile boundaries (or into row blocks, where C has too
// few column tiles: the first convolution's 27 columns), and each goroutine
// runs every product of the batch, in order, on its block. Every element
// thus sees the products in batch order, each computed by the same
// operations as by the whole product (same tiles, same K slices), so the
// result is bit-identical to batch sequential Sgemm calls at any
// GOMAXPROCS, with one fork and join per batch instead of two per K slice
// of every product. The price is that every goroutine packs all of each
// product's A (column blocks; for a weight gradient, the short output
// gradient dY_i) or of its B (row blocks).
//
// It reports false, doing nothing, on one goroutine and where blocks would
// change how a product is computed (products small enough for sgemmSmall,
// or too narrow for two tiles per block).
func accumulateBatched(threads int, pre []float32, transA, transB bool, m, n, k int, alpha float32, a []float32, lda, strideA int, b []float32, ldb, strideB int, beta float32, c []float32, ldc int, batch int) bool {
	kern := best
	if alpha == 0 || k == 0 {
		return false
	}
	colTiles, rowTiles := ceilDiv(n, kern.nr), ceilDiv(m, kern.mr)
	if workers := min(threads, colTiles/2); workers > 1 && m*kern.nr*k > smallWork {
		Parallel(workers, func(w int) {
			j0, j1 := w*colTiles/workers*kern.nr, min(n, (w+1)*colTiles/workers*kern.nr)
			for i := range batch {
				sgemmPre(kern, 1, pre, transA, transB, m, j1-j0, k, alpha, a[i*strideA:], lda, b[i*strideB+offset(!transB, j0, ldb):], ldb, beta, c[j0:], ldc)
			}
		})
		return true
	}
	// Row blocks take rows of the unpacked A: not with a prepacked one.
	if workers := min(threads, rowTiles/2); workers > 1 && pre == nil && kern.mr*n*k > smallWork {
		Parallel(workers, func(w int) {
			i0, i1 := w*rowTiles/workers*kern.mr, min(m, (w+1)*rowTiles/workers*kern.mr)
			for i := range batch {
				sgemmPre(kern, 1, nil, transA, transB, i1-i0, n, k, alpha, a[i*strideA+offset(transA, i0, lda):], lda, b[i*strideB:], ldb, beta, c[i0*ldc:], ldc)
			}
		})
		return true
	}
	return false
}
