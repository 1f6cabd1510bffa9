package kernels

import "math"

// Tanh sets y[i] = tanh(x[i]), evaluated in float64 and rounded to float32
// once, by Cephes' method as Go's math.Tanh: for |x| > 0.625,
//
//	tanh|x| = 1 − 2/(e^(2|x|) + 1)
//
// (no cancellation: the result is above 0.55), with e^(2|x|) from Exp; for
// |x| ≤ 0.625 the rational approximation x + x·s·P(s)/Q(s), s = x², which
// keeps full relative precision near 0. Every product is rounded by an
// explicit conversion, which no compiler may fuse into a multiply-add, and
// Exp is bit-identical on every build, so Tanh is too (math.Tanh is not:
// arm64 fuses its polynomial). ±0 stays ±0, ±Inf gives ±1, NaN stays NaN.
// y must be as long as x.
func Tanh(x, y []float32) {
	if len(y) != len(x) {
		panic("kernels: Tanh: slices of different lengths")
	}
	var e [ExpBlock]float64
	for lo := 0; lo < len(x); lo += ExpBlock {
		xb := x[lo:min(lo+ExpBlock, len(x))]
		eb, yb := e[:len(xb)], y[lo:lo+len(xb)]
		for i, v := range xb {
			eb[i] = 2 * math.Abs(float64(v)) // exact
		}
		Exp(eb)
		for i, v := range xb {
			x := float64(v)
			z := math.Abs(x)
			switch {
			case z > 0.625 || z != z:
				z = 1 - 2/(eb[i]+1)
				if x < 0 {
					z = -z
				}
			case x == 0:
				z = x // keeps the sign of zero
			default:
				s := float64(x * x)
				p := float64(float64(float64(tanhP0*s)+tanhP1)*s) + tanhP2
				q := float64(float64(float64(float64(s+tanhQ0)*s)+tanhQ1)*s) + tanhQ2
				z = x + float64(float64(x*s)*(p/q))
			}
			yb[i] = float32(z)
		}
	}
}

// Cephes' tanh coefficients (math.Tanh's): tanh x ≈ x + x·s·P(s)/Q(s),
// s = x², for |x| ≤ 0.625.
const (
	tanhP0 = -9.64399179425052238628e-1
	tanhP1 = -9.92877231001918586564e1
	tanhP2 = -1.61468768441708447952e3
	tanhQ0 = 1.12811678491632931402e2
	tanhQ1 = 2.23548839060100448583e3
	tanhQ2 = 4.84406305325125486048e3
)

// TanhGrad sets dx[i] = dy[i]·(1 − y[i]²), the gradient through y = tanh(x)
// (torch's tanh_backward): 1 − y² in float64, where y² is exact, rounded to
// float32, then one float32 product. dy and y must be as long as dx.
func TanhGrad(dx, dy, y []float32) {
	if len(dy) != len(dx) || len(y) != len(dx) {
		panic("kernels: TanhGrad: slices of different lengths")
	}
	for i, g := range dy {
		v := float64(y[i])
		dx[i] = g * float32(1-v*v)
	}
}
