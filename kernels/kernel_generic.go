package kernels

// generic is the portable micro-kernel: a 2×4 tile in eight scalar
// accumulators, which with the two values of A and four of B of a step fit
// the 15 floating-point registers Go allocates on amd64 (a 4×4 tile spills
// there), unrolled by four steps.
var generic = &microKernel{name: "go", mr: 2, nr: 4, mc: 128, kc: 256, nc: 2048, tile: kernelGo, packRows: packRowsGo}

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
	// edge, if not nil, computes the rows×cols corner of a tile (and
	// perhaps a little more of it) as tile would, with fewer operations.
	edge func(k, rows, cols int, a, b, c []float32, ldc int, beta float32)
	// transpose, where the CPU has a fast way, copies rows 0..rows-1 (at
	// most maxRows) of src, k elements each with leading dimension ld,
	// into dst transposed: element p of row j goes to dst[p·stride+j].
	// Packing a transposed B or an untransposed A is such a copy, and the
	// scalar loop is several times slower than a plain copy.
	transpose func(src []float32, ld, k int, dst []float32, stride, rows int)
	maxRows   int
	// packRows, where the CPU has one, stores alpha·src[p·ld + j·width + c]
	// at dst[j·k·width + p·width + c] for p < k, j < panels, c < width
	// (even): the plain packs' full panels, a run of width floats from each
	// of k rows into each panel, prefetching rows ahead as prefetch does.
	// It replaces one copy (a call) per run, which costs more than the move.
	packRows func(src []float32, ld, k int, dst []float32, panels, width int, alpha float32)
	// rowsA, where the CPU has one, is tile for all mr rows and the first
	// cols columns reading A in place, neither packed nor scaled: step p
	// of row i at a[i·lda+p] (an untransposed A, alpha 1). It performs
	// tile's operations on the same values.
	rowsA func(k, cols int, a []float32, lda int, b, c []float32, ldc int, beta float32)
}

func kernelGo(k int, a, b, c []float32, ldc int, beta float32) {
	var c00, c01, c02, c03, c10, c11, c12, c13 float32
	var a0, a1, b0, b1, b2, b3 float32
	a, b = a[:2*k], b[:4*k]
	// Four steps at a time; the loop conditions let the compiler drop
	// the bounds checks.
	for len(a) >= 8 && len(b) >= 16 {
		a0, a1 = a[0], a[1]
		b0, b1, b2, b3 = b[0], b[1], b[2], b[3]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
		a0, a1 = a[2], a[3]
		b0, b1, b2, b3 = b[4], b[5], b[6], b[7]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
		a0, a1 = a[4], a[5]
		b0, b1, b2, b3 = b[8], b[9], b[10], b[11]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
		a0, a1 = a[6], a[7]
		b0, b1, b2, b3 = b[12], b[13], b[14], b[15]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
		a, b = a[8:], b[16:]
	}
	for len(a) >= 2 && len(b) >= 4 {
		a0, a1 = a[0], a[1]
		b0, b1, b2, b3 = b[0], b[1], b[2], b[3]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
		a, b = a[2:], b[4:]
	}
	storeRow(c[0*ldc:0*ldc+4], beta, c00, c01, c02, c03)
	storeRow(c[1*ldc:1*ldc+4], beta, c10, c11, c12, c13)
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

// packRowsGo is packRows for the portable kernel: its runs of 2 or 4
// floats are moved one by one, as a copy per run spent more in the call to
// memmove than in the move.
func packRowsGo(src []float32, ld, k int, dst []float32, panels, width int, alpha float32) {
	for p := range k {
		row := src[p*ld : p*ld+panels*width]
		for j := range panels {
			d, s := dst[(j*k+p)*width:][:width], row[j*width:][:width]
			if alpha == 1 {
				for c, v := range s {
					d[c] = v
				}
				continue
			}
			for c, v := range s {
				d[c] = alpha * v
			}
		}
	}
}
