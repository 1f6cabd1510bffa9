package estimator

import "math"

// Clipped sets clipped[i] to whether Weights clipped sample i, given the
// norms and the weights w it set: a sample with a finite norm is clipped
// when its weight is below 1/m, the weight plain averaging gives each of
// the m samples with a finite norm (a sample with a non-finite norm is
// left out, not clipped). For every estimator of this package this is the
// decision Stats.Clipped counts, except for a norm so close to the
// threshold that the reduced weight rounds to 1/m. It lets a caller that
// sees the norms and weights (a wrapping Estimator) say which samples were
// clipped, not only how many.
func Clipped(norms, w []float64, clipped []bool) {
	checkLen(len(norms), w)
	if len(clipped) < len(norms) {
		panic("estimator: Clipped: fewer flags than norms")
	}
	m := 0
	for _, x := range norms {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			m++
		}
	}
	inv := 1 / float64(m)
	for i, x := range norms {
		clipped[i] = !math.IsNaN(x) && !math.IsInf(x, 0) && w[i] < inv
	}
}
