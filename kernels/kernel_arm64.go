//go:build !purego

package kernels

// The arm64 micro-kernel and vector passes, generated into kernel_arm64.s.
// An 8×12 tile fills 24 of the 32 NEON registers; kc·nr floats of B (12
// KiB) stay in L1, mc·kc of A (128 KiB) in L2. NEON (Advanced SIMD) is part
// of the ARMv8-A base architecture, so every arm64 CPU runs it; the portable
// kernels stay available for PSCLIP_KERNEL=go and the tests.
var neon = &microKernel{name: "neon", mr: neonMR, nr: neonNR, mc: 128, kc: 256, nc: 3072, tile: tileNEON}

// The tile of the generated kernel (gen_kernels.go).
const neonMR, neonNR = 8, 12

//go:noescape
func kernelNEON(k int, a, b, c *float32, ldc int, beta float32)

//go:noescape
func sqNormNEON(x []float32) float64

//go:noescape
func dotNEON(x, y []float32) float64

//go:noescape
func axpyNEON(a float32, x, y []float32)

//go:noescape
func axpyZeroNEON(a float32, x, y []float32)

//go:noescape
func scaleNEON(a float32, x []float32)

// axpyManyNEON is axpyMany as len(c) calls of axpyNEON.
func axpyManyNEON(y, x []float32, off []int, c []float32) {
	for k, ck := range c {
		axpyNEON(ck, x[off[k]:off[k]+len(y)], y)
	}
}

func tileNEON(k int, a, b, c []float32, ldc int, beta float32) {
	kernelNEON(k, &a[0], &b[0], &c[0], ldc, beta)
}

var vecNEON = &vecOps{name: "neon", sqNorm: sqNormNEON, dot: dotNEON, axpy: axpyNEON, axpyZero: axpyZeroNEON, scale: scaleNEON, axpyMany: axpyManyNEON, addRows: addRowsGo}

// available lists the micro-kernels this build can run, best first; best is
// the one Sgemm uses.
var (
	available = selectKernels([]*microKernel{neon, generic})
	best      = available[0]
)

// vecAvailable lists the implementations of the vector passes, best first;
// vec is the one in use. They follow the micro-kernel's choice.
var (
	vecAvailable = vecFor(available)
	vec          = vecAvailable[0]
)

func vecFor(ks []*microKernel) []*vecOps {
	if ks[0] == neon {
		return []*vecOps{vecNEON, vecGo}
	}
	return []*vecOps{vecGo}
}
