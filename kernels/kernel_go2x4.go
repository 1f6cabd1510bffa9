//go:build !(386 || arm64 || loong64 || mips64 || mips64le || ppc64 || ppc64le || riscv64)

package kernels

// generic is the portable micro-kernel on the architectures the other
// kernel_go files leave out, amd64 and s390x among them with 16
// floating-point registers: a 2×4 tile in eight scalar accumulators (a 4×4
// tile spills there), unrolled by four steps. Each step loads its two values
// of A and then one value of B at a time, used for both rows before the
// next is loaded: with a destructive two-operand multiply (SSE) a step then
// needs eight accumulators, three operands and one copy, which fit the 15
// registers Go allocates on amd64, where holding all four values of B made
// the compiler spill some of them in every unrolled step. Built for amd64
// below GOAMD64=v3, each product is a multiply and an add (Go fuses them
// only from v3 on), and the kernel runs them about as fast as the
// floating-point ports take them. Each element of C still adds its products
// one by one in the order of K.
var generic = &microKernel{name: "go", mr: 2, nr: 4, mc: 128, kc: 256, nc: 2048, tile: kernelGo, packRows: packRowsGo}

func kernelGo(k int, a, b, c []float32, ldc int, beta float32) {
	var c00, c01, c02, c03, c10, c11, c12, c13 float32
	var a0, a1, b0 float32
	a, b = a[:2*k], b[:4*k]
	// Four steps at a time; the loop conditions let the compiler drop
	// the bounds checks.
	for len(a) >= 8 && len(b) >= 16 {
		a0, a1 = a[0], a[1]
		b0 = b[0]
		c00 += a0 * b0
		c10 += a1 * b0
		b0 = b[1]
		c01 += a0 * b0
		c11 += a1 * b0
		b0 = b[2]
		c02 += a0 * b0
		c12 += a1 * b0
		b0 = b[3]
		c03 += a0 * b0
		c13 += a1 * b0
		a0, a1 = a[2], a[3]
		b0 = b[4]
		c00 += a0 * b0
		c10 += a1 * b0
		b0 = b[5]
		c01 += a0 * b0
		c11 += a1 * b0
		b0 = b[6]
		c02 += a0 * b0
		c12 += a1 * b0
		b0 = b[7]
		c03 += a0 * b0
		c13 += a1 * b0
		a0, a1 = a[4], a[5]
		b0 = b[8]
		c00 += a0 * b0
		c10 += a1 * b0
		b0 = b[9]
		c01 += a0 * b0
		c11 += a1 * b0
		b0 = b[10]
		c02 += a0 * b0
		c12 += a1 * b0
		b0 = b[11]
		c03 += a0 * b0
		c13 += a1 * b0
		a0, a1 = a[6], a[7]
		b0 = b[12]
		c00 += a0 * b0
		c10 += a1 * b0
		b0 = b[13]
		c01 += a0 * b0
		c11 += a1 * b0
		b0 = b[14]
		c02 += a0 * b0
		c12 += a1 * b0
		b0 = b[15]
		c03 += a0 * b0
		c13 += a1 * b0
		a, b = a[8:], b[16:]
	}
	for len(a) >= 2 && len(b) >= 4 {
		a0, a1 = a[0], a[1]
		b0 = b[0]
		c00 += a0 * b0
		c10 += a1 * b0
		b0 = b[1]
		c01 += a0 * b0
		c11 += a1 * b0
		b0 = b[2]
		c02 += a0 * b0
		c12 += a1 * b0
		b0 = b[3]
		c03 += a0 * b0
		c13 += a1 * b0
		a, b = a[2:], b[4:]
	}
	storeRow(c[0*ldc:0*ldc+4], beta, c00, c01, c02, c03)
	storeRow(c[1*ldc:1*ldc+4], beta, c10, c11, c12, c13)
}
