package kernels

import (
	"math"
	"math/big"
)

// Exp sets v[i] = e^v[i] to within 0.51 ulp, for the layers' hot loops
// (GELU, the attention softmax): 2× the speed of math.Exp in Go, whose amd64
// assembly is one long serial chain, and 8 (AVX-512) or 4 (AVX2, NEON)
// values at a time in assembly (BenchmarkExp; nn/README.md and README.md
// have the figures). It works on a slice because
// the call is what costs: the evaluation is too large to inline (so is
// math.Exp), and a call per value, which spills every register, halves
// GELU's speed.
//
// It is the table method of ARM's optimized-routines exp: x = (k/N)·ln2 + r
// with k = round(x·N/ln2), N = 128, so |r| ≤ ln2/256; then
//
//	e^x = 2^⌊k/N⌋ · 2^((k mod N)/N) · e^r,
//
// the first factor put into the exponent bits, the second read from a table
// as a float64 plus its rounding error, and e^r − 1 its Taylor polynomial of
// degree 5, whose truncation error r⁶/720 < 6·10⁻¹⁹ is 0.003 ulp. The
// reduction loses next to nothing: ln2/N is split Cody–Waite style into hi,
// with 32 significant bits so that k·hi is exact for |k| < 2²¹, and lo;
// x − k·hi is exact by Sterbenz's lemma, and subtracting k·lo rounds r by
// half an ulp of r, 0.002 ulp of the result. The error is thus the final
// addition's rounding and little more, below 0.51 ulp (TestExpULP: 0.504
// ulp at worst against a 160-bit reference).
//
// Arguments outside ±708, where the result would overflow or leave the
// normal range, and NaN are passed to math.Exp, so overflow (+Inf), the
// subnormal results, underflow to 0, ±Inf and NaN are exactly math.Exp's.
//
// The portable code rounds every product before it is added (an explicit
// conversion, which the Go spec forbids a compiler to fuse into a
// multiply-add: GOAMD64=v3 and arm64 would fuse otherwise), and the
// assembly evaluates the same operations in the same order, multiplying
// and adding apart, so its results are bit-identical to the portable
// code's on every architecture and build (TestExpAssembly).
func Exp(v []float64) { expImpl(v) }

// expGo is Exp in portable Go.
func expGo(v []float64) {
	for i, x := range v {
		if !(math.Abs(x) <= 708) {
			v[i] = math.Exp(x)
			continue
		}
		// Adding 1.5·2⁵² rounds x·N/ln2 to an integer held in the low
		// mantissa bits.
		const shift = 0x1.8p52
		kd := float64(x*expInvLn2N) + shift
		k := int64(math.Float64bits(kd) - math.Float64bits(shift))
		kd -= shift
		r := x - float64(kd*expLn2HiN) - float64(kd*expLn2LoN)
		t := &expTable[k&(expN-1)]
		// k>>expBits ≥ −1022 for x ≥ −708: the exponent field stays normal.
		scale := math.Float64frombits(t.bits + uint64(k>>expBits)<<52)
		r2 := r * r
		p := t.tail + r + float64(r2*(0.5+float64(r*(1.0/6)))) + float64(r2*r2*(1.0/24+float64(r*(1.0/120))))
		v[i] = scale + float64(scale*p)
	}
}

// ExpBlock is the length of the float64 blocks that loops over float32 data
// fill for Exp: a few hundred bytes on the stack.
const ExpBlock = 64

const (
	expBits    = 7
	expN       = 1 << expBits
	expInvLn2N = 184.6649652337873      // N/ln2
	expLn2HiN  = 0x1.62e42ff000000p-8   // ln2/N to 32 bits
	expLn2LoN  = -0x1.718432a1b0e26p-42 // ln2/N − expLn2HiN
	expTabPrec = 128                    // bits of 2^(j/N) before rounding
)

// expTable[j] is 2^(j/N) rounded to float64 (as bits) and the relative
// rounding error tail = (2^(j/N) − rounded)/rounded.
var expTable = func() (tab [expN]struct {
	bits uint64
	tail float64
}) {
	// 2^(1/N) by repeated square roots of 2, then its powers, all to
	// expTabPrec bits: the N products lose far less than float64 keeps.
	root := new(big.Float).SetPrec(expTabPrec).SetInt64(2)
	for range expBits {
		root.Sqrt(root)
	}
	v := new(big.Float).SetPrec(expTabPrec).SetInt64(1)
	var d big.Float
	for j := range tab {
		hi, _ := v.Float64()
		tail, _ := d.SetPrec(expTabPrec).Sub(v, big.NewFloat(hi)).Float64()
		tab[j].bits, tab[j].tail = math.Float64bits(hi), tail/hi
		v.Mul(v, root)
	}
	return tab
}()
