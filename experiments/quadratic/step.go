package quadratic

import "math"

// The two reductions of a simulation step over the batch's noise ξ, n×d
// row-major (ξ_k is row k). Both sum in a fixed order, over coordinates in
// sampleNorms and over samples in weightedSum, whichever path computes
// them (the AVX-512 kernels vectorise across the other index), so that the
// experiments' results do not depend on the CPU.

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
			sq += y * y
		}
		norms[k] = math.Sqrt(sq)
	}
}

// weightedSum sets sum[j] = Σ_k w[k]·ξ_kj for the n = len(w) rows of noise,
// which have d = len(sum) columns, and returns Σ_k w[k].
func weightedSum(w, noise, sum []float64) (sw float64) {
	d := len(sum)
	if useAVX512 {
		// Sixteen coordinates at a time, one per lane of two registers.
		for j := 0; j < d; j += 16 {
			sw = weightedSumAVX512(&w[0], len(w), &noise[j], d, &sum[j], uint16(1<<min(d-j, 16)-1))
		}
		return sw
	}
	clear(sum)
	for k, wk := range w {
		sw += wk
		for j, v := range noise[k*d : (k+1)*d] {
			sum[j] += wk * v
		}
	}
	return sw
}
