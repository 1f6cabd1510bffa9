package quadratic

import "math"

// The two reductions of a simulation step over the batch's noise ξ, n×d
// row-major (ξ_k is row k). Both sum in a fixed order, over coordinates in
// sampleNorms and over samples in weightedSums, whichever path computes
// them (the AVX-512 kernels vectorise across the other index), so that the
// experiments' results do not depend on the CPU.
//
// roundProducts: wherever the experiments add a product, it is converted
// to float64 first, which rounds it. Go's spec lets a compiler fuse x*y + z
// into one rounding otherwise (GOAMD64=v3 and arm64 do), and the results
// would then depend on the build and the architecture and differ from the
// assembly's, which rounds every product. Products that are exact (by a
// power of two) are left as they are: fusing them changes nothing.

// sampleNorms sets norms[k] = |x + ξ_k|, the per-sample gradient norms, for
// the n = len(norms) rows of noise, which have d = len(x) columns.
func sampleNorms(x, noise, norms []float64) {
	d := len(x)
	k := 0
	if useAVX512 {
		// Eight samples at a time, one per lane.
		if k = len(norms) &^ 7; k > 0 {
			sampleNormsAVX512(&x[0], &noise[0], k, d, &norms[0])
		}
	}
	for ; k < len(norms); k++ {
		var sq float64
		for j, v := range noise[k*d : (k+1)*d] {
			y := x[j] + v
			sq += float64(y * y)
		}
		norms[k] = math.Sqrt(sq)
	}
}

// weightedSums sets sums[i][j] = Σ_k ws[i][k]·ξ_kj and sw[i] = Σ_k ws[i][k]
// for the n = len(ws[i]) rows of noise, which have d = len(sums[i])
// columns. With AVX-512 the sums are formed two at a time: each is a chain
// of dependent additions over k, and two chains at once take the time of
// one.
func weightedSums(noise []float64, ws, sums [][]float64, sw []float64) {
	if useAVX512 {
		for i := 0; i < len(ws); i += 2 {
			// With an odd number, the last is computed twice.
			i2 := min(i+1, len(ws)-1)
			d := len(sums[i])
			// Sixteen coordinates at a time, one per lane of two registers.
			for j := 0; j < d; j += 16 {
				sw[i], sw[i2] = weightedSumsAVX512(&ws[i][0], &ws[i2][0], len(ws[i]), &noise[j], d, &sums[i][j], &sums[i2][j], uint16(1<<min(d-j, 16)-1))
			}
		}
		return
	}
	for i, w := range ws {
		sum, d := sums[i], len(sums[i])
		clear(sum)
		sw[i] = 0
		for k, wk := range w {
			sw[i] += wk
			for j, v := range noise[k*d : (k+1)*d] {
				sum[j] += float64(wk * v)
			}
		}
	}
}
