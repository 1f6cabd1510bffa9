package quadratic

import (
	"math"
	"math/bits"
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
// TestParetoExactness). A word with more than 32 leading zeros (probability
// 2^−33) is replaced by a fresh one scaled by 2^(33/p), so the far tail keeps
// full resolution.
type pareto struct {
	pow2 [64]float64     // pow2[e] = 2^(e/p), e ≤ 33 (64 entries: no bounds check)
	cub  [256][4]float64 // m^(−1/p) on segment i: c0 + t(c1 + t(c2 + t·c3))
}

func newPareto(p float64) *pareto {
	a := -1 / p
	s := new(pareto)
	for e := range 34 {
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

// fill sets xi to independent symmetrized Pareto values, the words of src
// taken in order: pcgLanes values at a time from states computed by jumping
// ahead, which keeps the generator's multiplications independent of each
// other. A group with a word for the far tail, which draws more words, is
// redone one value at a time from the group's first state.
func (s *pareto) fill(src *pcg, xi []float64) {
	hi, lo := src.hi, src.lo
	i := 0
	for ; i+pcgLanes <= len(xi); i += pcgLanes {
		h0, l0 := pcgStep(hi, lo, 0)
		h1, l1 := pcgStep(hi, lo, 1)
		h2, l2 := pcgStep(hi, lo, 2)
		h3, l3 := pcgStep(hi, lo, 3)
		u := [pcgLanes]uint64{dxsm(h0, l0), dxsm(h1, l1), dxsm(h2, l2), dxsm(h3, l3)}
		// w = u<<1|1 has at most 32 leading zeros iff u ≥ 2^31.
		if min(u[0], u[1], u[2], u[3]) < 1<<31 {
			src.hi, src.lo = hi, lo
			s.fillOne(src, xi[i:i+pcgLanes])
			hi, lo = src.hi, src.lo
			continue
		}
		g := xi[i : i+pcgLanes : i+pcgLanes]
		for k, u := range u {
			w := u<<1 | 1
			g[k] = withSign(s.cubic(w, bits.LeadingZeros64(w)), u)
		}
		hi, lo = h3, l3
	}
	src.hi, src.lo = hi, lo
	s.fillOne(src, xi[i:])
}

// fillOne is fill one value at a time, for any word.
func (s *pareto) fillOne(src *pcg, xi []float64) {
	for i := range xi {
		u := src.Uint64()
		w := u<<1 | 1
		if z := bits.LeadingZeros64(w); z <= 32 {
			xi[i] = withSign(s.cubic(w, z), u)
		} else {
			xi[i] = withSign(s.tail(src), u)
		}
	}
}

// withSign returns v negated if u's top bit is set: a fair random sign,
// without a branch that half of all values would mispredict.
func withSign(v float64, u uint64) float64 {
	return math.Float64frombits(math.Float64bits(v) ^ u&(1<<63))
}

// cubic returns U^(−1/p) for U = w/2^64 whose word w has z ≤ 32 leading zeros.
func (s *pareto) cubic(w uint64, z int) float64 {
	f := w << z << 1 // m's fraction bits, the leading 1 dropped
	c := &s.cub[f>>56]
	t := float64(f<<8>>11) * 0x1p-53
	return s.pow2[(z+1)&63] * (c[0] + t*(c[1]+t*(c[2]+t*c[3])))
}

// tail returns U^(−1/p) given U < 2^−33, where U·2^33 is uniform on (0, 1)
// again and is drawn afresh.
func (s *pareto) tail(src *pcg) float64 {
	for scale := s.pow2[33]; ; scale *= s.pow2[33] {
		w := src.Uint64() | 1
		if z := bits.LeadingZeros64(w); z <= 32 {
			return scale * s.cubic(w, z)
		}
	}
}
