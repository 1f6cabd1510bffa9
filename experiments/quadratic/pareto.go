package quadratic

import (
	"math"
	"math/bits"

	"github.com/psclip/psclip/internal/detmath"
)

// A pareto draws symmetrized Pareto noise ±U^(−1/p) (scale 1, shape p, fair
// sign) by inversion, from one 64-bit random word per value and no powers or
// exponentials, which were most of the experiments' time:
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
	pow2 [34]float64 // pow2[e] = 2^(e/p)
	// cub[k][i] is coefficient k of m^(−1/p) on segment i,
	// c0 + t(c1 + t(c2 + t·c3)) with t ∈ [0, 1) a multiple of 2^−53,
	// scaled by 2^(−53k) so that the cubic is evaluated in n = t·2^53, an
	// integer, without the multiplication by 2^−53 (see cubic). By
	// coefficient, so that the vector sampler looks up each at the
	// segment's index.
	cub [4][256]float64
}

func newPareto(p float64) *pareto {
	a := -1 / p
	s := new(pareto)
	for e := range s.pow2 {
		s.pow2[e] = detmath.Exp2(float64(e) / p)
	}
	const h = 1.0 / 256
	f := func(m float64) float64 { return detmath.Pow(m, a) }
	df := func(m float64) float64 { return a * detmath.Pow(m, a-1) * h } // d/dt
	for i := range s.cub[0] {
		m0, m1 := 1+float64(i)*h, 1+float64(i+1)*h
		f0, f1, d0, d1 := f(m0), f(m1), df(m0), df(m1)
		c0, c1, c2, c3 := f0, d0, float64(3*(f1-f0))-2*d0-d1, 2*(f0-f1)+d0+d1 // see roundProducts
		s.cub[0][i], s.cub[1][i], s.cub[2][i], s.cub[3][i] = c0, c1*0x1p-53, c2*0x1p-106, c3*0x1p-159
	}
	return s
}

// A vectorSampler fills xi[:n] as pareto.fill does, pcgLanes values at a
// time, and stops before a group with a word for the far tail: it returns
// how many values it wrote (a multiple of pcgLanes) and leaves src after
// the last of them. fillVector is the one in use.
type vectorSampler func(src *pcg, jump *pcgJumps, cub *[4][256]float64, pow2 *[34]float64, xi *float64, n int) int

// fill sets xi to independent symmetrized Pareto values, the words of src
// taken in order. With AVX-512 it takes pcgLanes values at a time, from
// states computed by jumping ahead (fillVector); a group with a word for the
// far tail, which draws more words, is done one value at a time from the
// group's first state. The values are the same either way, to the bit.
func (s *pareto) fill(src *pcg, xi []float64) {
	for useAVX512 && len(xi) >= pcgLanes {
		xi = xi[fillVector(src, &pcgJump, &s.cub, &s.pow2, &xi[0], len(xi)):]
		if len(xi) < pcgLanes {
			break
		}
		s.fillOne(src, xi[:pcgLanes])
		xi = xi[pcgLanes:]
	}
	s.fillOne(src, xi)
}

// fillOne is fill one value at a time.
func (s *pareto) fillOne(src *pcg, xi []float64) {
	for i := range xi {
		u := src.Uint64()
		w := u<<1 | 1 // the 63 low bits as an odd word: U = w/2^64 ∈ (0, 1)
		z := bits.LeadingZeros64(w)
		var v float64
		if z <= 32 {
			v = s.cubic(w, z)
		} else {
			v = s.tail(src)
		}
		xi[i] = withSign(v, u)
	}
}

// withSign returns v negated if u's top bit is set: a fair random sign
// without a branch, which would be mispredicted for half of all values.
func withSign(v float64, u uint64) float64 {
	return math.Float64frombits(math.Float64bits(v) ^ u&(1<<63))
}

// cubic returns U^(−1/p) for U = w/2^64 whose word w has z ≤ 32 leading zeros.
//
// It is c0 + t(c1 + t(c2 + t·c3)) by Horner's rule, each operation rounded
// (see roundProducts), evaluated in n = t·2^53 with the coefficients scaled
// by 2^(−53k): every intermediate result is then the one in t times a power
// of two, to the bit, since scaling by a power of two commutes with
// rounding while nothing is subnormal (the smallest scaled coefficient is
// about 2^−190 at the paper's p, and stays normal up to p ≈ 10^250;
// TestCubicScaledExact).
func (s *pareto) cubic(w uint64, z int) float64 {
	f := w << z << 1 // m's fraction bits, the leading 1 dropped
	i := f >> 56
	n := float64(f << 8 >> 11) // t·2^53
	h := float64(n * s.cub[3][i])
	h = float64(n * (s.cub[2][i] + h))
	h = float64(n * (s.cub[1][i] + h))
	return s.pow2[z+1] * (s.cub[0][i] + h)
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
