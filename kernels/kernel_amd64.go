//go:build !purego

package kernels

//go:generate go run gen_kernels.go

// The amd64 micro-kernels, generated into kernel_amd64.s. The tile sizes use
// the register file: AVX2 keeps a 6×16 tile in 12 of its 16 YMM registers,
// AVX-512 a 12×32 tile in 24 of its 32 ZMM registers. kc·nr floats of B (32
// KiB for AVX-512) stay in L1, mc·kc of A (240 KiB) in L2.
var (
	avx2   = &microKernel{name: "avx2", mr: 6, nr: 16, mc: 144, kc: 256, nc: 4096, tile: tileAVX2, edge: edgeAVX2, transpose: transposeAVX2, maxRows: 8, packRows: packRowsAVX, rowsA: rowsAAVX2}
	avx512 = &microKernel{name: "avx512", mr: 12, nr: 32, mc: 240, kc: 256, nc: 4096, tile: tileAVX512, edge: edgeAVX512, transpose: transposeAVX512, maxRows: 16, packRows: packRowsAVX, rowsA: rowsAAVX512}
)

// asmTile is the signature of the generated micro-kernels, the full ones and
// the partial ones of kernel_partial_amd64.go, which compute a corner of the
// tile (rows, and vectors of 8 or 16 columns) for the edges of C.
type asmTile func(k int, a, b, c *float32, ldc int, beta float32)

//go:noescape
func kernelAVX2(k int, a, b, c *float32, ldc int, beta float32)

//go:noescape
func kernelAVX512(k int, a, b, c *float32, ldc int, beta float32)

//go:noescape
func transpose8(src *float32, ld, k int, dst *float32, dstStride, rows int)

//go:noescape
func transpose16(src *float32, ld, k int, dst *float32, dstStride, rows int)

//go:noescape
func packRows(src *float32, ld, k int, dst *float32, panels, width int, alpha float32)

//go:noescape
func addRowsAVX512(dst *float32, ldd int, src *float32, lds, rows, n int)

//go:noescape
func addRowsAVX2(dst *float32, ldd int, src *float32, lds, rows, n int)

//go:noescape
func sqNormAVX2(x []float32) float64

//go:noescape
func dotAVX2(x, y []float32) float64

//go:noescape
func axpyAVX2(a float32, x, y []float32)

//go:noescape
func axpyZeroAVX2(a float32, x, y []float32)

//go:noescape
func scaleAVX2(a float32, x []float32)

//go:noescape
func sqNormAVX512(x []float32) float64

//go:noescape
func dotAVX512(x, y []float32) float64

//go:noescape
func axpyAVX512(a float32, x, y []float32)

//go:noescape
func axpyZeroAVX512(a float32, x, y []float32)

//go:noescape
func scaleAVX512(a float32, x []float32)

//go:noescape
func axpyManyAVX2(y, x []float32, off []int, c []float32)

//go:noescape
func axpyManyAVX512(y, x []float32, off []int, c []float32)

var (
	vecAVX2   = &vecOps{name: "avx2", sqNorm: sqNormAVX2, dot: dotAVX2, axpy: axpyAVX2, axpyZero: axpyZeroAVX2, scale: scaleAVX2, axpyMany: axpyManyAVX2, addRows: addRows256}
	vecAVX512 = &vecOps{name: "avx512", sqNorm: sqNormAVX512, dot: dotAVX512, axpy: axpyAVX512, axpyZero: axpyZeroAVX512, scale: scaleAVX512, axpyMany: axpyManyAVX512, addRows: addRows512}
)

func cpuid(leaf, sub uint32) (eax, ebx, ecx, edx uint32)
func xgetbv() (eax uint32)

func tileAVX2(k int, a, b, c []float32, ldc int, beta float32) {
	kernelAVX2(k, &a[0], &b[0], &c[0], ldc, beta)
}

func tileAVX512(k int, a, b, c []float32, ldc int, beta float32) {
	kernelAVX512(k, &a[0], &b[0], &c[0], ldc, beta)
}

// rowsATile is the signature of the generated micro-kernels that read A
// in place (gen_kernels.go), for 1 or 2 vectors of columns.
type rowsATile func(k int, a *float32, lda int, b, c *float32, ldc int, beta float32)

func rowsAAVX2(k, cols int, a []float32, lda int, b, c []float32, ldc int, beta float32) {
	v := (cols - 1) / 8
	_, _, _ = a[5*lda+k-1], b[16*k-1], c[5*ldc+8*v+7] // the extent the assembly touches
	kernelAVX2RowsA[v](k, &a[0], lda, &b[0], &c[0], ldc, beta)
}

func rowsAAVX512(k, cols int, a []float32, lda int, b, c []float32, ldc int, beta float32) {
	v := (cols - 1) / 16
	_, _, _ = a[11*lda+k-1], b[32*k-1], c[11*ldc+16*v+15] // the extent the assembly touches
	kernelAVX512RowsA[v](k, &a[0], lda, &b[0], &c[0], ldc, beta)
}

func edgeAVX2(k, rows, cols int, a, b, c []float32, ldc int, beta float32) {
	kernelAVX2Partial[rows-1][(cols-1)/8](k, &a[0], &b[0], &c[0], ldc, beta)
}

func edgeAVX512(k, rows, cols int, a, b, c []float32, ldc int, beta float32) {
	kernelAVX512Partial[rows-1][(cols-1)/16](k, &a[0], &b[0], &c[0], ldc, beta)
}

func transposeAVX512(src []float32, ld, k int, dst []float32, stride, rows int) {
	_, _ = src[(rows-1)*ld+k-1], dst[(k-1)*stride+rows-1] // the extent the assembly touches
	transpose16(&src[0], ld, k, &dst[0], stride, rows)
}

func transposeAVX2(src []float32, ld, k int, dst []float32, stride, rows int) {
	_, _ = src[(rows-1)*ld+k-1], dst[(k-1)*stride+rows-1] // the extent the assembly touches
	k8 := k &^ 7
	if k8 > 0 {
		transpose8(&src[0], ld, k8, &dst[0], stride, rows)
	}
	for p := k8; p < k; p++ {
		for j := range rows {
			dst[p*stride+j] = src[j*ld+p]
		}
	}
}

func packRowsAVX(src []float32, ld, k int, dst []float32, panels, width int, alpha float32) {
	if width%2 != 0 {
		panic("kernels: packRows: odd panel width")
	}
	_, _ = src[(k-1)*ld+panels*width-1], dst[panels*k*width-1] // the extent the assembly touches
	packRows(&src[0], ld, k, &dst[0], panels, width, alpha)
}

func addRows512(dst []float32, ldd int, src []float32, lds, rows, n int) {
	if checkAddRows(dst, ldd, src, lds, rows, n) {
		addRowsAVX512(&dst[0], ldd, &src[0], lds, rows, n)
	}
}

func addRows256(dst []float32, ldd int, src []float32, lds, rows, n int) {
	if checkAddRows(dst, ldd, src, lds, rows, n) {
		addRowsAVX2(&dst[0], ldd, &src[0], lds, rows, n)
	}
}

// checkAddRows reports whether there is anything to add, after checking the
// extent the assembly touches.
func checkAddRows(dst []float32, ldd int, src []float32, lds, rows, n int) bool {
	if rows <= 0 || n <= 0 {
		return false
	}
	_, _ = dst[(rows-1)*ldd+n-1], src[(rows-1)*lds+n-1]
	return true
}

// available lists the micro-kernels this CPU and OS can run, best first.
var available = selectKernels(detect())

// best is the micro-kernel Sgemm uses.
var best = available[0]

// vecAvailable lists the implementations of the vector passes this CPU and
// OS can run, best first; vec is the one in use.
var (
	vecAvailable = detectVec()
	vec          = vecAvailable[0]
)

func detectVec() []*vecOps {
	var vs []*vecOps
	for _, k := range available {
		switch k {
		case avx512:
			vs = append(vs, vecAVX512)
		case avx2:
			vs = append(vs, vecAVX2)
		}
	}
	return append(vs, vecGo)
}

func detect() []*microKernel {
	ks := []*microKernel{generic}
	_, _, ecx1, _ := cpuid(1, 0)
	const fma, osxsave, avx = 1 << 12, 1 << 27, 1 << 28
	if ecx1&(fma|osxsave|avx) != fma|osxsave|avx {
		return ks
	}
	xcr0 := xgetbv()
	_, ebx7, _, _ := cpuid(7, 0)
	const avx2Bit, avx512f = 1 << 5, 1 << 16
	if xcr0&0x6 == 0x6 && ebx7&avx2Bit != 0 { // OS saves XMM and YMM state
		ks = append([]*microKernel{avx2}, ks...)
	}
	if xcr0&0xe6 == 0xe6 && ebx7&avx512f != 0 { // and opmask and ZMM state
		ks = append([]*microKernel{avx512}, ks...)
	}
	return ks
}
