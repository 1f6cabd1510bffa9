//go:build !purego && (amd64 || arm64)

package kernels

// expBlocks sets v[i] = e^v[i] with an assembly block function that takes
// whole groups of width values and stops before the first group holding an
// argument outside ±708 or NaN: the portable code does that group and the
// tail, so every value is the portable code's.
func expBlocks(v []float64, width int, block func(v *float64, n int) int) {
	for len(v) >= width {
		done := block(&v[0], len(v)/width*width)
		v = v[done:]
		if len(v) >= width {
			expGo(v[:width])
			v = v[width:]
		}
	}
	expGo(v)
}

// geluTanhBlocks is GELUTanh with an assembly block function, as expBlocks
// is Exp.
func geluTanhBlocks(x, y, d []float32, width int, block func(x, y, d *float32, n int) int) {
	for len(x) >= width {
		done := block(&x[0], &y[0], &d[0], len(x)/width*width)
		x, y, d = x[done:], y[done:], d[done:]
		if len(x) >= width {
			geluTanhGo(x[:width], y[:width], d[:width])
			x, y, d = x[width:], y[width:], d[width:]
		}
	}
	geluTanhGo(x, y, d)
}
