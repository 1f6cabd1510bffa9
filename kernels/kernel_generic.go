package kernels

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
	// (the kernel's mr or nr): the plain packs' full panels, a run of width
	// floats from each of k rows into each panel, prefetching rows ahead as
	// prefetch does. It replaces one copy (a call) per run, which costs
	// more than the move.
	packRows func(src []float32, ld, k int, dst []float32, panels, width int, alpha float32)
}

// storeRow stores the four sums of a row of a portable tile into c, plus
// beta·c unless beta is ±0.
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
