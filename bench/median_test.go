package bench

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// MedianCI95 takes the order statistics of the published tables of the
// sign test's 95 % interval for the median (ranks k and n+1−k, e.g.
// Conover, Practical Nonparametric Statistics, Table A3): none below 6
// values; and the ranks of an exact binomial sum in big rationals for
// every n up to 120.
func TestMedianCI95(t *testing.T) {
	ranks := func(n int) []float64 { // x₍ᵢ₎ = i: the interval's values are its ranks
		x := make([]float64, n)
		for i, p := range rand.New(rand.NewPCG(uint64(n), 1)).Perm(n) {
			x[i] = float64(p + 1)
		}
		return x
	}
	for _, tc := range []struct {
		n      int
		lo, hi float64
	}{
		{6, 1, 6}, {8, 1, 8}, {9, 2, 8}, {10, 2, 9}, {15, 4, 12}, {20, 6, 15}, {25, 8, 18}, {30, 10, 21}, {40, 14, 27},
	} {
		lo, hi, ok := MedianCI95(ranks(tc.n))
		if !ok || lo != tc.lo || hi != tc.hi {
			t.Errorf("n %d: ranks %v – %v (ok %v), want %v – %v", tc.n, lo, hi, ok, tc.lo, tc.hi)
		}
	}
	for n := 0; n <= 5; n++ {
		if _, _, ok := MedianCI95(ranks(n)); ok {
			t.Errorf("n %d: an interval, want none", n)
		}
	}
	if _, _, ok := MedianCI95([]float64{1, 2, 3, math.NaN(), 5, 6, 7}); ok {
		t.Error("an interval with a NaN among the values")
	}
	for n := 6; n <= 120; n++ {
		// k: the most values below the interval, P(B ≤ k−1) ≤ 1/40, exactly.
		k, cdf := 0, new(big.Rat)
		for ; ; k++ {
			c := new(big.Int).Binomial(int64(n), int64(k))
			cdf.Add(cdf, new(big.Rat).SetFrac(c, new(big.Int).Lsh(big.NewInt(1), uint(n))))
			if cdf.Cmp(big.NewRat(1, 40)) > 0 {
				break
			}
		}
		if lo, hi, _ := MedianCI95(ranks(n)); lo != float64(k) || hi != float64(n+1-k) {
			t.Errorf("n %d: ranks %v – %v, the exact binomial sum's %d – %d", n, lo, hi, k, n+1-k)
		}
	}
}
