//go:build openblas && cgo

// Package openblas calls OpenBLAS's cblas_sgemm so that psclip's GEMM can
// be compared with it: by the kernels package's benchmarks and by
// `psclip bench gemm --against openblas`. It needs cgo and libopenblas-dev
// and is built only with -tags openblas; nothing in the default build uses
// it.
package openblas

// #cgo LDFLAGS: -lopenblas
// #include <cblas.h>
// char* openblas_get_corename(void);
// char* openblas_get_config(void);
import "C"

import "unsafe"

// Sgemm calls cblas_sgemm with row-major operands; the arguments
// have the meaning they have for kernels.Sgemm.
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

// Core is the name of the CPU core OpenBLAS selected its kernels for
// ("SkylakeX", "Haswell", ...; OPENBLAS_CORETYPE overrides it in a
// DYNAMIC_ARCH build): it decides the vector width of the kernel that ran.
func Core() string { return C.GoString(C.openblas_get_corename()) }

// Config is OpenBLAS's build configuration line (version, threading).
func Config() string { return C.GoString(C.openblas_get_config()) }
