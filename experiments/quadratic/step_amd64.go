//go:build !purego

package quadratic

// sampleNormsAVX512 is sampleNorms for n (a positive multiple of 8) samples.
//
//go:noescape
func sampleNormsAVX512(x, noise *float64, n, d int, norms *float64)

// weightedSumsAVX512 is weightedSums for two sums, for the coordinates
// j < 16 of sum1[0:] and sum2[0:] whose bit is set in mask; n > 0.
//
//go:noescape
func weightedSumsAVX512(w1, w2 *float64, n int, noise *float64, d int, sum1, sum2 *float64, mask uint16) (sw1, sw2 float64)
