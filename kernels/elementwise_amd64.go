//go:build !purego

package kernels

// elem is the implementation of the elementwise passes in use: AVX-512
// (elementwise_amd64.s) on the whole multiples of 16 elements, the portable
// code on the rest, or the portable code alone where PSCLIP_KERNEL picks a
// lesser kernel.
var elem = func() *elemOps {
	if vec == vecAVX512 {
		return elemAVX512
	}
	return elemGo
}()

var elemAVX512 = &elemOps{
	add: func(z, x, y []float32) {
		n := len(z) &^ 15
		if n > 0 {
			addAVX512(&z[0], &x[0], &y[0], n)
		}
		addGo(z[n:], x[n:], y[n:])
	},
	mul: func(z, x, y []float32) {
		n := len(z) &^ 15
		if n > 0 {
			mulAVX512(&z[0], &x[0], &y[0], n)
		}
		mulGo(z[n:], x[n:], y[n:])
	},
	addMul: func(z, x, y []float32) {
		n := len(z) &^ 15
		if n > 0 {
			addMulAVX512(&z[0], &x[0], &y[0], n)
		}
		addMulGo(z[n:], x[n:], y[n:])
	},
	normalize: func(y, h, x, w []float32, mean, rstd float64) {
		n := len(y) &^ 15
		if n > 0 {
			normalizeAVX512(&y[0], &h[0], &x[0], &w[0], n, mean, rstd)
		}
		normalizeGo(y[n:], h[n:], x[n:], w[n:], mean, rstd)
	},
	normalizeGrad: func(dx, dy, h, w []float32, rstd, sg, sgx float32) {
		n := len(dx) &^ 15
		if n > 0 {
			normalizeGradAVX512(&dx[0], &dy[0], &h[0], &w[0], n, rstd, sg, sgx)
		}
		normalizeGradGo(dx[n:], dy[n:], h[n:], w[n:], rstd, sg, sgx)
	},
}

// The assembly handles n elements, n a positive multiple of 16.

//go:noescape
func addAVX512(z, x, y *float32, n int)

//go:noescape
func mulAVX512(z, x, y *float32, n int)

//go:noescape
func addMulAVX512(z, x, y *float32, n int)

//go:noescape
func normalizeAVX512(y, h, x, w *float32, n int, mean, rstd float64)

//go:noescape
func normalizeGradAVX512(dx, dy, h, w *float32, n int, rstd, sg, sgx float32)
