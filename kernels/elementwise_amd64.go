//go:build !purego

package kernels

// elem is the implementation of the elementwise passes in use: AVX-512 or
// AVX2 (elementwise_amd64.s) on the whole multiples of 16 elements and the
// portable code on the rest, or the portable code alone where neither runs
// or PSCLIP_KERNEL picks the portable kernel.
var elem = func() *elemOps {
	switch vec {
	case vecAVX512:
		return elemAVX512
	case vecAVX2:
		return elemAVX2
	}
	return elemGo
}()

var elemAVX512 = elemWith(addAVX512, mulAVX512, addMulAVX512, reluGradAVX512, biasReLUAVX512, normalizeAVX512, normalizeGradAVX512)

var elemAVX2 = elemWith(addAVX2, mulAVX2, addMulAVX2, reluGradAVX2, biasReLUAVX2, normalizeAVX2, normalizeGradAVX2)

// elemWith returns the elementwise passes that run the given assembly on
// the whole multiples of 16 elements and the portable code on the rest.
func elemWith(add, mul, addMul, reluGrad func(z, x, y *float32, n int),
	biasReLU func(z, x *float32, n int, b float32),
	normalize func(y, h, x, w *float32, n int, mean, rstd float64),
	normalizeGrad func(dx, dy, h, w *float32, n int, rstd, sg, sgx float32)) *elemOps {
	return &elemOps{
		add: func(z, x, y []float32) {
			n := len(z) &^ 15
			if n > 0 {
				add(&z[0], &x[0], &y[0], n)
			}
			addGo(z[n:], x[n:], y[n:])
		},
		mul: func(z, x, y []float32) {
			n := len(z) &^ 15
			if n > 0 {
				mul(&z[0], &x[0], &y[0], n)
			}
			mulGo(z[n:], x[n:], y[n:])
		},
		addMul: func(z, x, y []float32) {
			n := len(z) &^ 15
			if n > 0 {
				addMul(&z[0], &x[0], &y[0], n)
			}
			addMulGo(z[n:], x[n:], y[n:])
		},
		reluGrad: func(dx, dy, y []float32) {
			n := len(dx) &^ 15
			if n > 0 {
				reluGrad(&dx[0], &dy[0], &y[0], n)
			}
			reluGradGo(dx[n:], dy[n:], y[n:])
		},
		biasReLU: func(z, x []float32, b float32) {
			n := len(z) &^ 15
			if n > 0 {
				biasReLU(&z[0], &x[0], n, b)
			}
			biasReLUGo(z[n:], x[n:], b)
		},
		normalize: func(y, h, x, w []float32, mean, rstd float64) {
			n := len(y) &^ 15
			if n > 0 {
				normalize(&y[0], &h[0], &x[0], &w[0], n, mean, rstd)
			}
			normalizeGo(y[n:], h[n:], x[n:], w[n:], mean, rstd)
		},
		normalizeGrad: func(dx, dy, h, w []float32, rstd, sg, sgx float32) {
			n := len(dx) &^ 15
			if n > 0 {
				normalizeGrad(&dx[0], &dy[0], &h[0], &w[0], n, rstd, sg, sgx)
			}
			normalizeGradGo(dx[n:], dy[n:], h[n:], w[n:], rstd, sg, sgx)
		},
	}
}

// The assembly handles n elements, n a positive multiple of 16.

//go:noescape
func addAVX512(z, x, y *float32, n int)

//go:noescape
func mulAVX512(z, x, y *float32, n int)

//go:noescape
func addMulAVX512(z, x, y *float32, n int)

//go:noescape
func reluGradAVX512(dx, dy, y *float32, n int)

//go:noescape
func biasReLUAVX512(z, x *float32, n int, b float32)

//go:noescape
func normalizeAVX512(y, h, x, w *float32, n int, mean, rstd float64)

//go:noescape
func normalizeGradAVX512(dx, dy, h, w *float32, n int, rstd, sg, sgx float32)

//go:noescape
func addAVX2(z, x, y *float32, n int)

//go:noescape
func mulAVX2(z, x, y *float32, n int)

//go:noescape
func addMulAVX2(z, x, y *float32, n int)

//go:noescape
func reluGradAVX2(dx, dy, y *float32, n int)

//go:noescape
func biasReLUAVX2(z, x *float32, n int, b float32)

//go:noescape
func normalizeAVX2(y, h, x, w *float32, n int, mean, rstd float64)

//go:noescape
func normalizeGradAVX2(dx, dy, h, w *float32, n int, rstd, sg, sgx float32)
