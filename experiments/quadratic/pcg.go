package quadratic

import "math/bits"

// A pcg is math/rand/v2's PCG: the same seeding and the same words, one for
// one (TestPCGMatchesMathRand), so the experiments' random streams are those
// of rand.NewPCG. It is a separate type because the noise sampler needs its
// state: pareto.fill keeps it in registers and computes pcgLanes consecutive
// words at once by jumping ahead (see pcgJump), which the standard library's
// sequential, memory-resident state cannot do.
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
	g.hi, g.lo = pcgStep(g.hi, g.lo, 0)
	return dxsm(g.hi, g.lo)
}

// pcgLanes is how many consecutive words pareto.fill computes at once.
const pcgLanes = 4

// pcgJump[k] = (A, C) with A = a^(k+1) and C = c·(a^k + … + a + 1) mod 2^128:
// the state k+1 steps after s is A·s + C. The pcgLanes states that follow s
// therefore each take one multiplication from s, independent of each other,
// instead of a chain of pcgLanes dependent ones.
var pcgJump = func() (j [pcgLanes]struct{ aHi, aLo, cHi, cLo uint64 }) {
	aHi, aLo, cHi, cLo := uint64(pcgMulHi), uint64(pcgMulLo), uint64(pcgIncHi), uint64(pcgIncLo)
	for k := range j {
		j[k].aHi, j[k].aLo, j[k].cHi, j[k].cLo = aHi, aLo, cHi, cLo
		aHi, aLo = mul128(pcgMulHi, pcgMulLo, aHi, aLo)
		cHi, cLo = mul128(pcgMulHi, pcgMulLo, cHi, cLo)
		cHi, cLo = add128(cHi, cLo, pcgIncHi, pcgIncLo)
	}
	return j
}()

// pcgStep returns the state k+1 steps after (hi, lo), 0 ≤ k < pcgLanes.
func pcgStep(hi, lo uint64, k int) (uint64, uint64) {
	j := &pcgJump[k]
	h, l := mul128(hi, lo, j.aHi, j.aLo)
	return add128(h, l, j.cHi, j.cLo)
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
