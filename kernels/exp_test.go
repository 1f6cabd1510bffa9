package kernels

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// bigExp returns e^x to 160 bits, independently of exp's method: the Taylor
// series at x/2¹⁰ (|x/2¹⁰| < 0.7, 40 terms), squared ten times.
func bigExp(x float64) *big.Float {
	const prec = 160
	y := new(big.Float).SetPrec(prec).SetFloat64(x)
	y.SetMantExp(y, -10)
	sum := new(big.Float).SetPrec(prec).SetInt64(1)
	term := new(big.Float).SetPrec(prec).SetInt64(1)
	for n := int64(1); n <= 40; n++ {
		term.Mul(term, y)
		term.Quo(term, new(big.Float).SetInt64(n))
		sum.Add(sum, term)
	}
	for range 10 {
		sum.Mul(sum, sum)
	}
	return sum
}

// ulpErr returns |got − want| in units of the last place of want.
func ulpErr(got float64, want *big.Float) float64 {
	w, _ := want.Float64()
	frac, k := math.Frexp(math.Abs(w))
	ulp := math.Ldexp(1, k-53)
	if frac == 0.5 {
		// w a power of two: the ulp below it is half the one above, and
		// want may lie below.
		ulp /= 2
	}
	d := new(big.Float).SetPrec(160).SetFloat64(got)
	e, _ := d.Sub(d, want).Float64()
	return math.Abs(e) / ulp
}

// TestExpULP checks exp against the 160-bit reference on random arguments
// over its whole fast range and near the table's interval boundaries: the
// method's bound is 0.51 ulp, and a wrong table tail, reduction constant or
// polynomial coefficient costs far more.
func TestExpULP(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var xs []float64
	for range 3000 {
		xs = append(xs, (2*rng.Float64()-1)*708, (2*rng.Float64()-1)*4)
	}
	for k := -2000; k <= 2000; k += 7 { // r ≈ ±ln2/256, the reduced range's ends
		c := (float64(k) + 0.5) * math.Ln2 / expN
		xs = append(xs, math.Nextafter(c, 0), math.Nextafter(c, math.Inf(1)), c)
	}
	worst, at := 0.0, 0.0
	for _, x := range xs {
		if e := ulpErr(exp1(x), bigExp(x)); e > worst {
			worst, at = e, x
		}
	}
	t.Logf("largest error %.4f ulp at x = %v", worst, at)
	if worst > 0.52 {
		t.Errorf("exp(%v) is %.3f ulp off, want ≤ 0.52", at, worst)
	}
}

// TestExpSweep compares exp with math.Exp on a dense grid and on tiny
// arguments: both are within 1 ulp of e^x, so they agree to 2 ulp.
func TestExpSweep(t *testing.T) {
	const n = 1 << 20
	worst, at := 0.0, 0.0
	check := func(x float64) {
		want := math.Exp(x)
		if e := math.Abs(exp1(x)-want) / want; e > worst {
			worst, at = e, x
		}
	}
	for i := range n + 1 {
		check(-708 + 1416*float64(i)/n)
	}
	for x := 1e-300; x < 1; x *= 1.7 {
		check(x)
		check(-x)
	}
	if worst > 4.5e-16 {
		t.Errorf("exp(%v) differs from math.Exp by %.3g relatively, want ≤ 4.5e-16", at, worst)
	}
}

// TestExpSpecial checks the arguments passed to math.Exp and those at the
// fast range's ends, one at a time and all in one slice, where the fast and
// the math.Exp path alternate.
func TestExpSpecial(t *testing.T) {
	xs := []float64{
		math.NaN(), math.Inf(1), 1, math.Inf(-1), 0, math.Copysign(0, -1),
		708, math.Nextafter(708, 1000), -708, math.Nextafter(-708, -1000),
		709.78, 709.8, 1e300, -709, -740, -745.1, -746, -1e300, -0.5,
	}
	v := append([]float64(nil), xs...)
	Exp(v)
	for i, x := range xs {
		want := math.Exp(x)
		for _, got := range []float64{exp1(x), v[i]} {
			if math.Float64bits(got) != math.Float64bits(want) && math.Abs(got-want) > 2.3e-16*want {
				t.Errorf("exp(%v) = %v, want %v", x, got, want)
			}
		}
	}
	if got := exp1(0); got != 1 {
		t.Errorf("exp1(0) = %v, want exactly 1", got)
	}
}

// BenchmarkExp times Exp and math.Exp on a block of arguments
// (N(0, 8²), a fifth of them in GELU's saturated tails).
func BenchmarkExp(b *testing.B) {
	x := make([]float64, ExpBlock)
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range x {
		x[i] = 8 * rng.NormFloat64()
	}
	v := make([]float64, len(x))
	perExp := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(x)), "ns/exp")
	}
	b.Run("Exp", func(b *testing.B) {
		for b.Loop() {
			copy(v, x)
			Exp(v)
		}
		perExp(b)
	})
	b.Run("math.Exp", func(b *testing.B) {
		for b.Loop() {
			for i, z := range x {
				v[i] = math.Exp(z)
			}
		}
		perExp(b)
	})
}

// exp1 returns e^x by Exp.
func exp1(x float64) float64 {
	v := [1]float64{x}
	Exp(v[:])
	return v[0]
}

// TestExpAssembly checks that Exp, on whichever implementation this CPU
// runs, gives expGo's bits on every length and with arguments for
// math.Exp (outside ±708, NaN) scattered among the others.
func TestExpAssembly(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	special := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 709, -709, 708, -708, 1e300, -1e300, 0}
	for n := range 70 {
		for trial := range 20 {
			x := make([]float64, n)
			for i := range x {
				x[i] = 20 * rng.NormFloat64()
				if trial%2 == 1 && rng.IntN(16) == 0 {
					x[i] = special[rng.IntN(len(special))]
				}
			}
			got, want := append([]float64(nil), x...), append([]float64(nil), x...)
			Exp(got)
			expGo(want)
			for i := range x {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("n %d: Exp(%v) = %v, portable %v", n, x[i], got[i], want[i])
				}
			}
		}
	}
}

// geluTanhRef is GELUTanh's formula on math.Exp.
func geluTanhRef(x float64) (y, d float64) {
	du := geluC * (1 + 3*0.044715*x*x)
	s := 1 / (1 + math.Exp(-2*geluC*(x+0.044715*x*x*x)))
	return x * s, s + 2*x*s*(1-s)*du
}

// geluSweep returns float32 arguments evenly in [−12, 12] and across all
// magnitudes of both signs.
func geluSweep() []float32 {
	var xs []float32
	const n = 1 << 19
	for i := range n + 1 {
		xs = append(xs, float32(-12+24*float64(i)/n))
	}
	for b := uint32(0); b < 0x7f800000; b += 4099 {
		v := math.Float32frombits(b)
		xs = append(xs, v, -v)
	}
	return xs
}

// TestGELUTanhFastExp compares GELUTanh with its formula on math.Exp over
// the sweep: Exp's and math.Exp's float64 results differ by an ulp or two,
// which moves the float32 rounding only when the exact value lies within
// that of a rounding boundary.
func TestGELUTanhFastExp(t *testing.T) {
	xs := geluSweep()
	y, d := make([]float32, len(xs)), make([]float32, len(xs))
	GELUTanh(xs, y, d)
	differ := 0
	for i, x := range xs {
		wy, wd := geluTanhRef(float64(x))
		for _, p := range [][2]float32{{y[i], float32(wy)}, {d[i], float32(wd)}} {
			if math.Float32bits(p[0]) == math.Float32bits(p[1]) {
				continue
			}
			differ++
			if math.Nextafter32(p[1], p[0]) != p[0] {
				t.Fatalf("gelu(%v): %v against %v on math.Exp, more than 1 ulp", x, p[0], p[1])
			}
		}
	}
	t.Logf("%d of %d float32 values differ by 1 ulp", differ, 2*len(xs))
	if frac := float64(differ) / float64(2*len(xs)); frac > 1e-4 {
		t.Errorf("%.2g of the float32 values differ from the math.Exp formula, want ≤ 1e-4", frac)
	}
}

// TestGELUTanhAssembly checks that GELUTanh, on whichever implementation
// this CPU runs, gives the portable code's bits over the sweep (whose far
// tails and NaN-free infinities take the math.Exp path) and on every short
// length, with NaN among the arguments.
func TestGELUTanhAssembly(t *testing.T) {
	check := func(xs []float32) {
		y, d := make([]float32, len(xs)), make([]float32, len(xs))
		wy, wd := make([]float32, len(xs)), make([]float32, len(xs))
		GELUTanh(xs, y, d)
		geluTanhGo(xs, wy, wd)
		for i, x := range xs {
			if math.Float32bits(y[i]) != math.Float32bits(wy[i]) || math.Float32bits(d[i]) != math.Float32bits(wd[i]) {
				t.Fatalf("%d values: gelu(%v) = %v, %v; portable %v, %v", len(xs), x, y[i], d[i], wy[i], wd[i])
			}
		}
	}
	check(geluSweep())
	rng := rand.New(rand.NewPCG(13, 14))
	for n := range 70 {
		xs := make([]float32, n)
		for i := range xs {
			xs[i] = float32(8 * rng.NormFloat64())
			if rng.IntN(20) == 0 {
				xs[i] = float32(math.NaN())
			}
		}
		check(xs)
	}
}

// BenchmarkGELUTanh times GELUTanh on one GPT MLP activation (batch 12,
// T 64, 4·128 features), N(0, 1) arguments.
func BenchmarkGELUTanh(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	x := make([]float32, 12*64*512)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	y, d := make([]float32, len(x)), make([]float32, len(x))
	for _, impl := range []struct {
		name string
		f    func(x, y, d []float32)
	}{{"impl", GELUTanh}, {"go", geluTanhGo}} {
		b.Run(impl.name, func(b *testing.B) {
			for b.Loop() {
				impl.f(x, y, d)
			}
		})
	}
}
