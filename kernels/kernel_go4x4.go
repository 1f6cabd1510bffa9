//go:build arm64 || loong64 || mips64 || mips64le || ppc64 || ppc64le || riscv64

package kernels

// generic is the portable micro-kernel on architectures with 32
// floating-point registers: a 4×4 tile in sixteen scalar accumulators, which
// with the four values of A and four of B of a step take 24 of them, and
// which the compiler fuses into multiply-adds (except on mips64x). Sixteen
// independent sums keep four FMA pipes with a four-cycle latency busy,
// where the eight of a 2×4 tile fill half of them; and each step loads
// eight floats for sixteen products rather than six for eight.
var generic = &microKernel{name: "go", mr: 4, nr: 4, mc: 128, kc: 256, nc: 2048, tile: kernelGo, packRows: packRowsGo}

func kernelGo(k int, a, b, c []float32, ldc int, beta float32) {
	var (
		c00, c01, c02, c03 float32
		c10, c11, c12, c13 float32
		c20, c21, c22, c23 float32
		c30, c31, c32, c33 float32
	)
	a, b = a[:4*k], b[:4*k]
	// Four steps at a time; the loop conditions let the compiler drop
	// the bounds checks.
	for len(a) >= 16 && len(b) >= 16 {
		a0, a1, a2, a3 := a[0], a[1], a[2], a[3]
		b0, b1, b2, b3 := b[0], b[1], b[2], b[3]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
		c20 += a2 * b0
		c21 += a2 * b1
		c22 += a2 * b2
		c23 += a2 * b3
		c30 += a3 * b0
		c31 += a3 * b1
		c32 += a3 * b2
		c33 += a3 * b3
		a0, a1, a2, a3 = a[4], a[5], a[6], a[7]
		b0, b1, b2, b3 = b[4], b[5], b[6], b[7]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
		c20 += a2 * b0
		c21 += a2 * b1
		c22 += a2 * b2
		c23 += a2 * b3
		c30 += a3 * b0
		c31 += a3 * b1
		c32 += a3 * b2
		c33 += a3 * b3
		a0, a1, a2, a3 = a[8], a[9], a[10], a[11]
		b0, b1, b2, b3 = b[8], b[9], b[10], b[11]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
		c20 += a2 * b0
		c21 += a2 * b1
		c22 += a2 * b2
		c23 += a2 * b3
		c30 += a3 * b0
		c31 += a3 * b1
		c32 += a3 * b2
		c33 += a3 * b3
		a0, a1, a2, a3 = a[12], a[13], a[14], a[15]
		b0, b1, b2, b3 = b[12], b[13], b[14], b[15]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
		c20 += a2 * b0
		c21 += a2 * b1
		c22 += a2 * b2
		c23 += a2 * b3
		c30 += a3 * b0
		c31 += a3 * b1
		c32 += a3 * b2
		c33 += a3 * b3
		a, b = a[16:], b[16:]
	}
	for len(a) >= 4 && len(b) >= 4 {
		a0, a1, a2, a3 := a[0], a[1], a[2], a[3]
		b0, b1, b2, b3 := b[0], b[1], b[2], b[3]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
		c20 += a2 * b0
		c21 += a2 * b1
		c22 += a2 * b2
		c23 += a2 * b3
		c30 += a3 * b0
		c31 += a3 * b1
		c32 += a3 * b2
		c33 += a3 * b3
		a, b = a[4:], b[4:]
	}
	storeRow(c[0*ldc:0*ldc+4], beta, c00, c01, c02, c03)
	storeRow(c[1*ldc:1*ldc+4], beta, c10, c11, c12, c13)
	storeRow(c[2*ldc:2*ldc+4], beta, c20, c21, c22, c23)
	storeRow(c[3*ldc:3*ldc+4], beta, c30, c31, c32, c33)
}
