//go:build !purego

package kernels

// Exp and GELUTanh in NEON assembly (exp_arm64.s), four values a step in two
// registers of two float64 lanes, or the portable code where PSCLIP_KERNEL
// picks the portable kernel.
var expImpl, geluTanhImpl = func() (func([]float64), func(x, y, d []float32)) {
	if vec == vecNEON {
		return expNEON, geluTanhNEON
	}
	return expGo, geluTanhGo
}()

// expBlockNEON sets v[i] = e^v[i] for i < n, n a multiple of 4, four at a
// time, and returns how many it set: it stops before the first four that
// hold an argument outside ±708 or NaN, which the portable code handles.
//
//go:noescape
func expBlockNEON(v *float64, n int) int

// geluTanhBlockNEON is GELUTanh for the first n elements, n a multiple of
// 4, four at a time; it returns how many it computed, stopping as
// expBlockNEON does.
//
//go:noescape
func geluTanhBlockNEON(x, y, d *float32, n int) int

func expNEON(v []float64)            { expBlocks(v, 4, expBlockNEON) }
func geluTanhNEON(x, y, d []float32) { geluTanhBlocks(x, y, d, 4, geluTanhBlockNEON) }
