//go:build !purego

package kernels

// Exp and GELUTanh in assembly (exp_amd64.s): eight float64 lanes at a time
// with AVX-512, four with AVX2, the portable code where neither runs or
// PSCLIP_KERNEL picks the portable kernel.
var expImpl, geluTanhImpl = func() (func([]float64), func(x, y, d []float32)) {
	switch vec {
	case vecAVX512:
		return expAVX512, geluTanhAVX512
	case vecAVX2:
		return expAVX2, geluTanhAVX2
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

func expAVX512(v []float64)            { expBlocks(v, 8, expBlock8) }
func geluTanhAVX512(x, y, d []float32) { geluTanhBlocks(x, y, d, 8, geluTanhBlock8) }

// expBlock4 and geluTanhBlock4 are expBlock8 and geluTanhBlock8 on AVX2,
// four at a time (n a multiple of 4).
//
//go:noescape
func expBlock4(v *float64, n int) int

//go:noescape
func geluTanhBlock4(x, y, d *float32, n int) int

func expAVX2(v []float64)            { expBlocks(v, 4, expBlock4) }
func geluTanhAVX2(x, y, d []float32) { geluTanhBlocks(x, y, d, 4, geluTanhBlock4) }
