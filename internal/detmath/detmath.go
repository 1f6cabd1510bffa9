// Package detmath holds Exp, Exp2, Log and Pow with the same bits on every
// architecture and CPU: those of package math on amd64 with FMA, where the
// experiments' pinned results were made.
//
// Package math's are not: Exp is assembly on amd64 (with one path for
// CPUs with FMA and another without) and other assembly on arm64, Log is
// assembly on amd64 only, Exp2 on arm64 only, and the Go code elsewhere
// may have its multiply-adds fused by the compiler (Go's spec allows it on
// arm64, and on amd64 with GOAMD64=v3), so their last bits depend on where
// the program runs. math.Pow is Go code calling Exp and Log, and arm64's
// compiler fuses its squarings too (x·x + x·x for 2x²).
//
// Here every multiply-add is either fused by math.FMA, where amd64's
// assembly fuses it, or rounded by an explicit conversion, where it does
// not: a conversion float64(x*y) rounds the product, and the compiler may
// not fuse it into the addition that follows.
package detmath

import "math"

// Exp returns e**x: amd64's math.Exp with FMA. On amd64 with FMA it is
// that function, elsewhere exp.
func Exp(x float64) float64 {
	if mathExp {
		return math.Exp(x)
	}
	return exp(x)
}

// exp is amd64's math.Exp (its FMA path, which CPUs since Haswell and Zen
// take) in Go. It reduces x = k·ln 2 + r, k an integer (rounded to
// nearest), evaluates e^(r/16) − 1 by a Taylor polynomial of degree 8 and
// squares 1 + that four times, as u ← u(u + 2) on u = e^s − 1.
func exp(x float64) float64 {
	const (
		log2e    = 1.4426950408889634073599246810018920
		ln2u     = 0.69314718055966295651160180568695068359375 // ln 2's upper half
		ln2l     = 0.28235290563031577122588448175013436025525412068e-12
		overflow = 7.09782712893384e+02
	)
	switch {
	case math.IsNaN(x) || math.IsInf(x, 1):
		return x
	case x > overflow:
		return math.Inf(1)
	}
	k := math.RoundToEven(log2e * x)
	if k < -1075 { // also x = −Inf
		return 0
	}
	r := math.FMA(-k, ln2l, math.FMA(-k, ln2u, x)) * 0.0625
	p := 2.4801587301587301587e-5 // 1/8!
	p = math.FMA(p, r, 1.9841269841269841270e-4)
	p = math.FMA(p, r, 1.3888888888888888889e-3)
	p = math.FMA(p, r, 8.3333333333333333333e-3)
	p = math.FMA(p, r, 4.1666666666666666667e-2)
	p = math.FMA(p, r, 1.6666666666666666667e-1)
	p = math.FMA(p, r, 0.5)
	p = math.FMA(p, r, 1)
	u := float64(r * p)
	u = float64(u * (u + 2))
	u = float64(u * (u + 2))
	u = float64(u * (u + 2))
	y := math.FMA(u, u+2, 1)
	// y·2^k, as amd64's assembly scales it: one multiplication by a power
	// of two where 2^k is normal, two where the result may be subnormal.
	switch e := int(k) + 1023; {
	case e >= 2047:
		return math.Inf(1)
	case e <= 0:
		y *= math.Float64frombits(uint64(e+1022) << 52)
		return y * 0x1p-1022
	default:
		return y * math.Float64frombits(uint64(e)<<52)
	}
}

// Exp2 returns 2**x: package math's Go code (which amd64 runs), with its
// products rounded.
func Exp2(x float64) float64 {
	const (
		ln2Hi     = 6.93147180369123816490e-01
		ln2Lo     = 1.90821492927058770002e-10
		overflow  = 1.0239999999999999e+03
		underflow = -1.0740e+03
	)
	switch {
	case math.IsNaN(x):
		return x
	case x > overflow: // +Inf too
		return math.Inf(1)
	case x < underflow: // −Inf too
		return 0
	}
	// x = k + t, |t| ≤ 1/2, and 2^t = e^(t·ln 2) with t·ln 2 = hi − lo.
	var k int
	switch {
	case x > 0:
		k = int(x + 0.5)
	case x < 0:
		k = int(x - 0.5)
	}
	t := x - float64(k)
	hi := float64(t * ln2Hi)
	lo := float64(-t * ln2Lo)
	return expmulti(hi, lo, k)
}

// expmulti returns e^r·2^k for r = hi − lo, |r| ≤ ln(2)/2: package math's
// Go code, with its products rounded.
func expmulti(hi, lo float64, k int) float64 {
	const (
		p1 = 1.66666666666666657415e-01
		p2 = -2.77777777770155933842e-03
		p3 = 6.61375632143793436117e-05
		p4 = -1.65339022054652515390e-06
		p5 = 4.13813679705723846039e-08
	)
	r := hi - lo
	t := r * r
	c := r - float64(t*(p1+float64(t*(p2+float64(t*(p3+float64(t*(p4+float64(t*p5)))))))))
	y := 1 - ((lo - (r*c)/(2-c)) - hi)
	return math.Ldexp(y, k)
}

// Log returns the natural logarithm of x: package math's Go code, with its
// products rounded, which is what amd64's assembly computes for every x
// but subnormal ones (which the assembly does not normalize). On amd64 it
// is that assembly for those x, elsewhere log.
func Log(x float64) float64 {
	if mathLog && x >= 0x1p-1022 {
		return math.Log(x)
	}
	return log(x)
}

// log is package math's Go code for Log, with its products rounded.
func log(x float64) float64 {
	const (
		ln2Hi = 6.93147180369123816490e-01
		ln2Lo = 1.90821492927058770002e-10
		l1    = 6.666666666666735130e-01
		l2    = 3.999999999940941908e-01
		l3    = 2.857142874366239149e-01
		l4    = 2.222219843214978396e-01
		l5    = 1.818357216161805012e-01
		l6    = 1.531383769920937332e-01
		l7    = 1.479819860511658591e-01
	)
	switch {
	case math.IsNaN(x) || math.IsInf(x, 1):
		return x
	case x < 0:
		return math.NaN()
	case x == 0:
		return math.Inf(-1)
	}
	// x = 2^k·(1 + f), √2/2 ≤ 1 + f < √2.
	f1, ki := math.Frexp(x)
	if f1 < math.Sqrt2/2 {
		f1 *= 2
		ki--
	}
	f := f1 - 1
	k := float64(ki)
	s := f / (2 + f)
	s2 := s * s
	s4 := s2 * s2
	t1 := float64(s2 * (l1 + float64(s4*(l3+float64(s4*(l5+float64(s4*l7)))))))
	t2 := float64(s4 * (l2 + float64(s4*(l4+float64(s4*l6)))))
	R := t1 + t2
	hfsq := float64(0.5 * f * f)
	return float64(k*ln2Hi) - ((hfsq - (float64(s*(hfsq+R)) + float64(k*ln2Lo))) - f)
}

// Pow returns x**y: package math's Go code, with its products rounded and
// Exp and Log from this package (so for a subnormal x it differs from
// amd64's math.Pow, whose Log is wrong there). The special cases, whose
// results math.Pow gives exactly, are left to it.
func Pow(x, y float64) float64 {
	yi, yf := math.Modf(math.Abs(y))
	switch {
	case y == 0 || y == 1 || y == 0.5 || y == -0.5 || !(yf >= 0), // y NaN or ±Inf too
		x == 0 || x == 1 || math.IsInf(x, 0) || math.IsNaN(x),
		yf != 0 && x < 0, yi >= 1<<63:
		return math.Pow(x, y)
	}
	// x^y = x^yf · x^yi with |yf| ≤ 1/2, the latter by repeated squaring
	// of x = x1·2^xe, in a1·2^ae.
	a1, ae := 1.0, 0
	if yf != 0 {
		if yf > 0.5 {
			yf--
			yi++
		}
		a1 = Exp(yf * Log(x))
	}
	x1, xe := math.Frexp(x)
	for i := int64(yi); i != 0; i >>= 1 {
		if xe < -1<<12 || 1<<12 < xe {
			// The exponent overflows or underflows: Ldexp below
			// gives 0 or Inf.
			ae += xe
			break
		}
		if i&1 == 1 {
			a1 *= x1
			ae += xe
		}
		x1 = float64(x1 * x1)
		xe <<= 1
		if x1 < .5 {
			x1 += x1
			xe--
		}
	}
	if y < 0 {
		a1 = 1 / a1
		ae = -ae
	}
	return math.Ldexp(a1, ae)
}
