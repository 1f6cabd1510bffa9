package quadratic

import (
	"math"
	"math/bits"
	"math/rand/v2"
)

// A pareto draws symmetrized Pareto noise ±U^(−1/p) (scale 1, shape p, fair
// sign) by inversion, from one 64-bit random word per value and no calls to
// math.Pow or math.Exp, which were most of the experiments' time:
//
//	U = 2^−(z+1)·m, m ∈ [1, 2), z leading zeros of the word  ⇒
//	U^(−1/p) = 2^((z+1)/p) · m^(−1/p),
//
// the first factor from a table and the second from a piecewise-cubic
// Hermite interpolant on 256 segments (relative error < 1e-10; see
// TestParetoExactness). Words with more than 32 leading zeros (probability
// 2^−33) recurse on a fresh word, so the tail is exact to the last bit.
type pareto struct {
	pow2 [34]float64     // pow2[e] = 2^(e/p)
	cub  [256][4]float64 // m^(−1/p) on segment i: c0 + t(c1 + t(c2 + t·c3))
}

func newPareto(p float64) *pareto {
	a := -1 / p
	s := new(pareto)
	for e := range s.pow2 {
		s.pow2[e] = math.Exp2(float64(e) / p)
	}
	const h = 1.0 / 256
	f := func(m float64) float64 { return math.Pow(m, a) }
	df := func(m float64) float64 { return a * math.Pow(m, a-1) * h } // d/dt
	for i := range s.cub {
		m0, m1 := 1+float64(i)*h, 1+float64(i+1)*h
		f0, f1, d0, d1 := f(m0), f(m1), df(m0), df(m1)
		s.cub[i] = [4]float64{f0, d0, 3*(f1-f0) - 2*d0 - d1, 2*(f0-f1) + d0 + d1}
	}
	return s
}

// fill sets xi to independent symmetrized Pareto values.
func (s *pareto) fill(rng *rand.Rand, xi []float64) {
	for i := range xi {
		u := rng.Uint64()
		v := s.magnitude(u<<1|1, rng) // the 63 low bits, as an odd word: U ∈ (0, 1)
		if u>>63 != 0 {
			v = -v
		}
		xi[i] = v
	}
}

// magnitude returns U^(−1/p) for U = w/2^64, w odd.
func (s *pareto) magnitude(w uint64, rng *rand.Rand) float64 {
	z := bits.LeadingZeros64(w)
	if z > 32 {
		// U < 2^−33: U·2^33 is uniform on (0, 1) again.
		return s.pow2[33] * s.magnitude(rng.Uint64()|1, rng)
	}
	f := w << z << 1 // m's fraction bits, the leading 1 dropped
	c := &s.cub[f>>56]
	t := float64(f<<8>>11) * 0x1p-53
	return s.pow2[z+1] * (c[0] + t*(c[1]+t*(c[2]+t*c[3])))
}
