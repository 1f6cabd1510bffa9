package bench

import (
	"math"
	"slices"
)

// MedianCI95 returns a 95 % confidence interval for the median of the
// distribution x is a sample of, distribution-free: the order statistics
// x₍ₖ₎ and x₍ₙ₊₁₋ₖ₎ (the sign test's interval), k the largest with
// P(B < k) ≤ 2.5 % for B ~ Binomial(n, ½), so that the interval covers the
// median with probability at least 95 %. ok is false for fewer than 6
// values, where even the smallest and largest cover it less often, and
// for a NaN among them.
func MedianCI95(x []float64) (lo, hi float64, ok bool) {
	n := len(x)
	k := 0 // P(B < k) ≤ 2.5 %, B < k meaning B ≤ k − 1
	for cdf := 0.0; ; k++ {
		cdf += binomialHalf(n, k)
		if cdf > 0.025 {
			break
		}
	}
	if k == 0 || slices.ContainsFunc(x, math.IsNaN) {
		return math.NaN(), math.NaN(), false
	}
	s := slices.Clone(x)
	slices.Sort(s)
	return s[k-1], s[n-k], true
}

// binomialHalf is P(B = i) for B ~ Binomial(n, ½), through logarithms so
// that large n do not overflow: C(n, i)·2⁻ⁿ.
func binomialHalf(n, i int) float64 {
	if i < 0 || i > n {
		return 0
	}
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(i + 1))
	c, _ := math.Lgamma(float64(n - i + 1))
	return math.Exp(a - b - c - float64(n)*math.Ln2)
}
