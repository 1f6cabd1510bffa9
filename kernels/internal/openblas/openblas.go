//go:build openblas && cgo

// Package openblas calls OpenBLAS's cblas_sgemm so that the kernels benchmarks can
// compare against it. It needs cgo and libopenblas-dev and is built only with
// -tags openblas; nothing in the default build uses it.
package openblas

// #cgo LDFLAGS: -lopenblas
// #include <cblas.h>
import "C"

import "unsafe"

// Sgemm calls cblas_sgemm with row-major operands; the arguments
// have the meaning they have for Sgemm.
func Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	var ta, tb uint32 = C.CblasNoTrans, C.CblasNoTrans
	if transA {
		ta = C.CblasTrans
	}
	if transB {
		tb = C.CblasTrans
	}
	C.cblas_sgemm(C.CblasRowMajor, ta, tb, C.blasint(m), C.blasint(n), C.blasint(k), C.float(alpha),
		(*C.float)(unsafe.Pointer(&a[0])), C.blasint(lda), (*C.float)(unsafe.Pointer(&b[0])), C.blasint(ldb),
		C.float(beta), (*C.float)(unsafe.Pointer(&c[0])), C.blasint(ldc))
}

// SetThreads sets the number of threads OpenBLAS uses.
func SetThreads(n int) { C.openblas_set_num_threads(C.int(n)) }
