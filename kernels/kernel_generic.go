package kernels

// generic is the portable micro-kernel: a 4×4 tile in sixteen scalar
// accumulators, small enough to stay in registers on arm64 (32 FP registers)
// and nearly so on amd64.
var generic = &microKernel{name: "go", mr: 4, nr: 4, mc: 128, kc: 256, nc: 2048, tile: kernelGo}

// A microKernel computes one mr×nr tile of C from packed panels of A (kc
// steps of mr values) and B (kc steps of nr values):
// C = Σ_p a[p·mr+i]·b[p·nr+j] + beta·C, or just the sum when beta is ±0.
// mc, kc and nc are the cache-blocking sizes gemmSerial uses with it; mc is a
// multiple of mr and nc of nr.
type microKernel struct {
	name       string
	mr, nr     int
	mc, kc, nc int
	tile       func(k int, a, b, c []float32, ldc int, beta float32)
	// transpose, where the CPU has a fast way, copies rows 0..rows-1 (at
	// most maxRows) of src, k elements each with leading dimension ld,
	// into dst transposed: element p of row j goes to dst[p·stride+j].
	// Packing a transposed B or an untransposed A is such a copy, and the
	// scalar loop is several times slower than a plain copy.
	transpose func(src []float32, ld, k int, dst []float32, stride, rows int)
	maxRows   int
}

func kernelGo(k int, a, b, c []float32, ldc int, beta float32) {
	var (
		c00, c01, c02, c03 float32
		c10, c11, c12, c13 float32
		c20, c21, c22, c23 float32
		c30, c31, c32, c33 float32
	)
	a, b = a[:4*k], b[:4*k]
	for p := 0; p < len(a); p += 4 {
		ap, bp := a[p:p+4:p+4], b[p:p+4:p+4]
		a0, a1, a2, a3 := ap[0], ap[1], ap[2], ap[3]
		b0, b1, b2, b3 := bp[0], bp[1], bp[2], bp[3]
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
	}
	storeRow(c[0*ldc:0*ldc+4], beta, c00, c01, c02, c03)
	storeRow(c[1*ldc:1*ldc+4], beta, c10, c11, c12, c13)
	storeRow(c[2*ldc:2*ldc+4], beta, c20, c21, c22, c23)
	storeRow(c[3*ldc:3*ldc+4], beta, c30, c31, c32, c33)
}

func storeRow(c []float32, beta float32, s0, s1, s2, s3 float32) {
	c = c[:4]
	if beta == 0 {
		c[0], c[1], c[2], c[3] = s0, s1, s2, s3
		return
	}
	c[0] = s0 + beta*c[0]
	c[1] = s1 + beta*c[1]
	c[2] = s2 + beta*c[2]
	c[3] = s3 + beta*c[3]
}
