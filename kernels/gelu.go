package kernels

// GELUTanh sets y[i] to GPT-2's tanh approximation of the Gaussian error
// linear unit at x[i] and d[i] to its derivative:
//
//	gelu(x) = ½·x·(1 + tanh(u)) = x·σ(2u),  u = √(2/π)·(x + 0.044715·x³),
//	gelu'(x) = σ(2u) + 2x·σ(2u)·(1 − σ(2u))·u'(x),
//
// with the logistic σ(z) = 1/(1+e^(−z)), which keeps full relative
// precision where 1 + tanh(u) cancels (large negative x). Both are computed
// in float64 on Exp and rounded to float32 once. y and d must be as long as
// x. The assembly (AVX-512, AVX2, NEON) evaluates the same operations in the
// same order, so its results are bit-identical to the portable code's
// (TestGELUTanhAssembly).
func GELUTanh(x, y, d []float32) {
	if len(y) != len(x) || len(d) != len(x) {
		panic("kernels: GELUTanh: slices of different lengths")
	}
	geluTanhImpl(x, y, d)
}

const geluC = 0.7978845608028654 // √(2/π)

// geluTanhGo is GELUTanh in portable Go, a block of ExpBlock at a time for
// Exp.
func geluTanhGo(x, y, d []float32) {
	var e [ExpBlock]float64
	for lo := 0; lo < len(x); lo += ExpBlock {
		xb := x[lo:min(lo+ExpBlock, len(x))]
		eb, yb, db := e[:len(xb)], y[lo:lo+len(xb)], d[lo:lo+len(xb)]
		for i, v := range xb {
			x := float64(v)
			eb[i] = -2 * geluC * (x + float64(0.044715*x*x*x)) // −2u
		}
		expGo(eb)
		for i, v := range xb {
			x := float64(v)
			du := geluC * (1 + float64(3*0.044715*x*x)) // u'(x)
			s := 1 / (1 + eb[i])
			// gelu' = ½(1+tanh u) + ½x(1−tanh²u)·u' = σ + 2x·σ(1−σ)·u'.
			yb[i], db[i] = float32(x*s), float32(s+float64(2*x*s*(1-s)*du))
		}
	}
}
