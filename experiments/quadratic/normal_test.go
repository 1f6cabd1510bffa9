package quadratic

import (
	"math"
	"testing"
)

// TestNormalPinned pins a million of normal's values, 580 of them from the
// tail beyond 3.44 and others from the wedges, to the bit, on every
// architecture (TestNormalMatchesMathRand checks them against math/rand/v2
// on amd64), and checks their mean and variance.
func TestNormalPinned(t *testing.T) {
	const n = 1000000
	src := newPCG(7, 8)
	vals := make([]float64, n)
	var sum, sq float64
	for i := range vals {
		v := normal(src)
		vals[i] = v
		sum += v
		sq += float64(v * v) // see roundProducts
	}
	if got, want := bitsHash(vals), uint64(0xf3474408bb1be2b5); got != want {
		t.Errorf("the values hash to %#x, want %#x", got, want)
	}
	// Mean 0 and variance 1, within five standard errors (the variance's
	// is √(2/n)).
	if mean, v := sum/n, sq/n; math.Abs(mean) > 5/math.Sqrt(n) || math.Abs(v-1) > 5*math.Sqrt(2.0/n) {
		t.Errorf("mean %v and variance %v, want 0 and 1", mean, v)
	}
}
