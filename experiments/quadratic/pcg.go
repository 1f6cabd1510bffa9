package quadratic

import "math/bits"

// A pcg is math/rand/v2's PCG: the same seeding and the same words, one for
// one (TestPCGMatchesMathRand), so the experiments' random streams are those
// of rand.NewPCG. It is a separate type because the vector sampler needs
// its state, to compute pcgLanes consecutive words at once by jumping ahead
// (pcgJump).
//
// The state s is a 128-bit LCG, s ← a·s + c mod 2^128; each word is the
// DXSM permutation of the new state.
type pcg struct{ hi, lo uint64 }

// newPCG returns the generator rand.NewPCG(seed1, seed2) is.
func newPCG(seed1, seed2 uint64) *pcg { return &pcg{seed1, seed2} }

// The LCG's multiplier a and increment c, those of math/rand/v2.
const (
	pcgMulHi = 2549297995355413924
	pcgMulLo = 4865540595714422341
	pcgIncHi = 6364136223846793005
	pcgIncLo = 1442695040888963407
)

// Uint64 advances the state and returns the next word.
func (g *pcg) Uint64() uint64 {
	hi, lo := mul128(g.hi, g.lo, pcgMulHi, pcgMulLo)
	g.hi, g.lo = add128(hi, lo, pcgIncHi, pcgIncLo)
	return dxsm(g.hi, g.lo)
}

// pcgLanes is how many consecutive words the vector sampler computes at
// once: one per 64-bit lane of an AVX-512 register.
const pcgLanes = 8

// pcgJump holds, for k = 0..pcgLanes−1, A = a^(k+1) and C = c·(a^k + … + a + 1)
// mod 2^128: the state k+1 steps after s is A·s + C. The pcgLanes states
// that follow s therefore each take one multiplication from s, independent
// of each other, and the last of them is the next group's s.
var pcgJump = func() (j pcgJumps) {
	aHi, aLo, cHi, cLo := uint64(pcgMulHi), uint64(pcgMulLo), uint64(pcgIncHi), uint64(pcgIncLo)
	for k := range pcgLanes {
		j.aHi[k], j.aLo[k], j.cHi[k], j.cLo[k] = aHi, aLo, cHi, cLo
		j.a52[0][k], j.a52[1][k], j.a52[2][k] = limbs52(aHi, aLo)
		j.c52[0][k], j.c52[1][k], j.c52[2][k] = limbs52(cHi, cLo)
		aHi, aLo = mul128(pcgMulHi, pcgMulLo, aHi, aLo)
		cHi, cLo = mul128(pcgMulHi, pcgMulLo, cHi, cLo)
		cHi, cLo = add128(cHi, cLo, pcgIncHi, pcgIncLo)
	}
	return j
}()

// pcgJumps are the constants of pcgJump, by lane (the assembly reads them
// at these offsets): A and C as 64-bit words, and as 52-bit limbs (limbs52)
// for the multiplications of AVX-512 IFMA.
type pcgJumps struct {
	aHi, aLo, cHi, cLo [pcgLanes]uint64
	a52, c52           [3][pcgLanes]uint64
}

// limbs52 splits the 128-bit x into x0 + x1·2^52 + x2·2^104 with x0, x1 <
// 2^52 and x2 < 2^24.
func limbs52(hi, lo uint64) (x0, x1, x2 uint64) {
	const mask = 1<<52 - 1
	return lo & mask, (lo>>52 | hi<<12) & mask, hi >> 40
}

// dxsm is PCG's "double xorshift multiply" output permutation of a state.
func dxsm(hi, lo uint64) uint64 {
	const cheapMul = 0xda942042e4dd58b5
	hi ^= hi >> 32
	hi *= cheapMul
	hi ^= hi >> 48
	return hi * (lo | 1)
}

// mul128 returns x·y mod 2^128.
func mul128(xHi, xLo, yHi, yLo uint64) (hi, lo uint64) {
	hi, lo = bits.Mul64(xLo, yLo)
	return hi + xHi*yLo + xLo*yHi, lo
}

// add128 returns x + y mod 2^128.
func add128(xHi, xLo, yHi, yLo uint64) (hi, lo uint64) {
	lo, c := bits.Add64(xLo, yLo, 0)
	hi, _ = bits.Add64(xHi, yHi, c)
	return hi, lo
}
