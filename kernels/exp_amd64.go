//go:build !purego

package kernels

// Exp and GELUTanh on AVX-512 (exp_amd64.s): eight float64 lanes at a time,
// the portable code elsewhere and when PSCLIP_KERNEL picks a lesser kernel.
var expImpl, geluTanhImpl = func() (func([]float64), func(x, y, d []float32)) {
	if vec == vecAVX512 {
		return expAVX512, geluTanhAVX512
	}
	return expGo, geluTanhGo
}()

// expBlock8 sets v[i] = e^v[i] for i < n, n a multiple of 8, eight at a time,
// and returns how many it set: it stops before the first eight that hold an
// argument outside ±708 or NaN, which the portable code handles.
//
//go:noescape
func expBlock8(v *float64, n int) int

// geluTanhBlock8 is GELUTanh for the first n elements, n a multiple of 8,
// eight at a time; it returns how many it computed, stopping as expBlock8
// does.
//
//go:noescape
func geluTanhBlock8(x, y, d *float32, n int) int

func expAVX512(v []float64) {
	for len(v) >= 8 {
		done := expBlock8(&v[0], len(v)&^7)
		v = v[done:]
		if len(v) >= 8 {
			expGo(v[:8])
			v = v[8:]
		}
	}
	expGo(v)
}

func geluTanhAVX512(x, y, d []float32) {
	for len(x) >= 8 {
		done := geluTanhBlock8(&x[0], &y[0], &d[0], len(x)&^7)
		x, y, d = x[done:], y[done:], d[done:]
		if len(x) >= 8 {
			geluTanhGo(x[:8], y[:8], d[:8])
			x, y, d = x[8:], y[8:], d[8:]
		}
	}
	geluTanhGo(x, y, d)
}
