//go:build 386

package kernels

// generic is the portable micro-kernel on 386, where Go allocates 8
// floating-point registers: a 1×4 tile in four scalar accumulators, each
// product reading its value of B from memory, so that with the step's value
// of A and a product in flight it fits them (the 2×4 tile spills there),
// unrolled by four steps.
var generic = &microKernel{name: "go", mr: 1, nr: 4, mc: 128, kc: 256, nc: 2048, tile: kernelGo, packRows: packRowsGo}

func kernelGo(k int, a, b, c []float32, ldc int, beta float32) {
	var c0, c1, c2, c3 float32
	a, b = a[:k], b[:4*k]
	// Four steps at a time; the loop conditions let the compiler drop
	// the bounds checks.
	for len(a) >= 4 && len(b) >= 16 {
		a0 := a[0]
		c0 += a0 * b[0]
		c1 += a0 * b[1]
		c2 += a0 * b[2]
		c3 += a0 * b[3]
		a0 = a[1]
		c0 += a0 * b[4]
		c1 += a0 * b[5]
		c2 += a0 * b[6]
		c3 += a0 * b[7]
		a0 = a[2]
		c0 += a0 * b[8]
		c1 += a0 * b[9]
		c2 += a0 * b[10]
		c3 += a0 * b[11]
		a0 = a[3]
		c0 += a0 * b[12]
		c1 += a0 * b[13]
		c2 += a0 * b[14]
		c3 += a0 * b[15]
		a, b = a[4:], b[16:]
	}
	for len(a) >= 1 && len(b) >= 4 {
		a0 := a[0]
		c0 += a0 * b[0]
		c1 += a0 * b[1]
		c2 += a0 * b[2]
		c3 += a0 * b[3]
		a, b = a[1:], b[4:]
	}
	storeRow(c, beta, c0, c1, c2, c3)
}
