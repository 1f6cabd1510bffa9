//go:build !purego

package kernels

// elem is the implementation of the elementwise passes in use: NEON
// (elementwise_arm64.s), or the portable code where PSCLIP_KERNEL picks the
// portable kernel.
var elem = func() *elemOps {
	if vec == vecNEON {
		return elemNEON
	}
	return elemGo
}()

var elemNEON = &elemOps{add: addNEON, mul: mulNEON, addMul: addMulNEON, reluGrad: reluGradNEON, biasReLU: biasReLUNEON, normalize: normalizeNEON, normalizeGrad: normalizeGradNEON}

// The assembly takes the length of the first slice; the others are at
// least as long (checked by the exported functions).

//go:noescape
func addNEON(z, x, y []float32)

//go:noescape
func mulNEON(z, x, y []float32)

//go:noescape
func addMulNEON(z, x, y []float32)

//go:noescape
func reluGradNEON(dx, dy, y []float32)

//go:noescape
func biasReLUNEON(z, x []float32, b float32)

//go:noescape
func normalizeNEON(y, h, x, w []float32, mean, rstd float64)

//go:noescape
func normalizeGradNEON(dx, dy, h, w []float32, rstd, sg, sgx float32)
