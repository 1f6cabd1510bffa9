// Package kernels holds psclip's float32 compute kernels: GEMM and the
// convolution and pooling building blocks the layers are made of.
//
// All matrices are row-major. A leading dimension (lda, ldb, ldc) is the
// distance in elements between the starts of consecutive rows, so a kernel can
// work on a sub-matrix of a larger buffer.
package kernels

// Sgemm computes C = alpha·op(A)·op(B) + beta·C, where op(X) is X or Xᵀ as
// transA and transB say, op(A) is m×k, op(B) is k×n and C is m×n.
// With beta == 0, C is overwritten and its old contents (even NaN) are ignored.
//
// This first version is the straightforward reference; the blocked, packed
// and parallel implementation replaces it behind the same signature.
func Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float32
			for p := 0; p < k; p++ {
				var av, bv float32
				if transA {
					av = a[p*lda+i]
				} else {
					av = a[i*lda+p]
				}
				if transB {
					bv = b[j*ldb+p]
				} else {
					bv = b[p*ldb+j]
				}
				s += av * bv
			}
			if beta == 0 {
				c[i*ldc+j] = alpha * s
			} else {
				c[i*ldc+j] = alpha*s + beta*c[i*ldc+j]
			}
		}
	}
}

// SgemmBatched runs batch independent Sgemm calls; the i-th uses A, B and C
// starting at i·strideA, i·strideB and i·strideC.
func SgemmBatched(transA, transB bool, m, n, k int, alpha float32, a []float32, lda, strideA int, b []float32, ldb, strideB int, beta float32, c []float32, ldc, strideC int, batch int) {
	for i := 0; i < batch; i++ {
		Sgemm(transA, transB, m, n, k, alpha, a[i*strideA:], lda, b[i*strideB:], ldb, beta, c[i*strideC:], ldc)
	}
}
