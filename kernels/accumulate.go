package kernels

// accumulateFloats bounds the block of C that accumulateBatched keeps in a
// core's L2 cache (1 MiB: half the L2 of this project's Xeon and of most
// recent cores) while every product of a batch is added into it.
const accumulateFloats = 1 << 18

// accumulateBatched is SgemmBatched for a batch of products that all add
// into one C (strideC 0; a convolution's weight gradient summed over the
// images). C is cut into column blocks on micro-tile boundaries, at most
// accumulateFloats each and at least one per goroutine; each goroutine
// takes whole blocks and runs every product of the batch, in order, on its
// block. Every element thus sees the products in batch order, each computed
// by the same operations as by the whole product (same tiles, same K
// slices), so the result is bit-identical to batch sequential Sgemm calls at
// any GOMAXPROCS; and C, which for AlexNet's layers is larger than L2, is
// read and written from L2 rather than memory batch times.
//
// It reports false, doing nothing, where blocks would change how a product
// is computed (products small enough for sgemmSmall, or too narrow for two
// tiles' width per block) or gain nothing (one block on one goroutine).
func accumulateBatched(threads int, pre []float32, transA, transB bool, m, n, k int, alpha float32, a []float32, lda, strideA int, b []float32, ldb, strideB int, beta float32, c []float32, ldc int, batch int) bool {
	kern := best
	tiles := ceilDiv(n, kern.nr)
	blocks := min(tiles/2, max(threads, ceilDiv(m*n, accumulateFloats)))
	if threads > 1 {
		blocks = roundUp(blocks, threads) // whole blocks, shared out evenly
	}
	blocks = min(blocks, tiles/2)
	if blocks <= 1 || m*kern.nr*k <= smallWork || alpha == 0 || k == 0 {
		return false
	}
	workers := min(threads, blocks)
	parallelFor(workers, func(w, workers int) {
		for bl := w * blocks / workers; bl < (w+1)*blocks/workers; bl++ {
			j0, j1 := bl*tiles/blocks*kern.nr, min(n, (bl+1)*tiles/blocks*kern.nr)
			for i := range batch {
				sgemmPre(kern, 1, pre, transA, transB, m, j1-j0, k, alpha, a[i*strideA:], lda, b[i*strideB+offset(!transB, j0, ldb):], ldb, beta, c[j0:], ldc)
			}
		}
	})
	return true
}
