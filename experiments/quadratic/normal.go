package quadratic

import (
	"math"

	"github.com/psclip/psclip/internal/detmath"
)

// normal draws standard normal values as math/rand/v2's NormFloat64 does,
// from the same words to the same values (TestNormalMatchesMathRand), but
// with detmath's Log and Exp and its products rounded, so that the values
// are the same on every architecture: with package math's, about one value
// in 10^5 (in the tail beyond 3.44, which takes a logarithm) differed in
// its last bit on arm64, and so did the experiments' results. It is Marsaglia
// and Tsang's ziggurat ("The Ziggurat Method for Generating Random
// Variables", 2000), with the standard library's tables (zigguratTables).
func normal(src *pcg) float64 {
	for {
		u := src.Uint64()
		j := int32(u) // possibly negative
		i := u >> 32 & 0x7F
		x := float64(j) * float64(wn[i])
		if absInt32(j) < kn[i] {
			return x // more than 99% of the time
		}
		if i == 0 {
			// The base strip's tail, beyond rn.
			for {
				x = float64(-detmath.Log(uniform(src)) * (1.0 / rn)) // see roundProducts
				y := -detmath.Log(uniform(src))
				if y+y >= x*x {
					break
				}
			}
			if j > 0 {
				return rn + x
			}
			return -rn - x
		}
		if fn[i]+float32(float32(uniform(src))*(fn[i-1]-fn[i])) < float32(detmath.Exp(-.5*x*x)) {
			return x
		}
	}
}

// uniform returns rand.Rand's Float64 from src's next word.
func uniform(src *pcg) float64 { return float64(src.Uint64()<<11>>11) / (1 << 53) }

func absInt32(i int32) uint32 {
	if i < 0 {
		return uint32(-i)
	}
	return uint32(i)
}

// rn is the right edge of the ziggurat's base strip, beyond which lies its
// tail.
const rn = 3.442619855899

// The ziggurat's 128 strips: kn[i] is the integer test bound of strip i,
// wn[i] its width over 2^31 and fn[i] the density at its edge. They are
// computed from Marsaglia and Tsang's recurrence, in float64 and rounded
// as the standard library's tables were, which gives those tables to the
// bit (TestNormalMatchesMathRand); detmath makes them the same everywhere.
var kn, wn, fn = zigguratTables()

func zigguratTables() (kn [128]uint32, wn, fn [128]float32) {
	const (
		m1 = 1 << 31
		vn = 9.91256303526217e-3 // each strip's area
	)
	dn, tn := rn, rn
	q := vn / detmath.Exp(-.5*float64(dn*dn))
	kn[0] = uint32(float64(dn/q) * m1)
	wn[0] = float32(q / m1)
	wn[127] = float32(dn / m1)
	fn[0] = 1
	fn[127] = float32(detmath.Exp(-.5 * float64(dn*dn)))
	for i := 126; i >= 1; i-- {
		dn = math.Sqrt(-2 * detmath.Log(vn/dn+detmath.Exp(-.5*float64(dn*dn))))
		kn[i+1] = uint32(float64(dn/tn) * m1)
		tn = dn
		fn[i] = float32(detmath.Exp(-.5 * float64(dn*dn)))
		wn[i] = float32(dn / m1)
	}
	return kn, wn, fn
}
