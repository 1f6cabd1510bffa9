package nn

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
		if e := ulpErr(exp(x), bigExp(x)); e > worst {
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
		if e := math.Abs(exp(x)-want) / want; e > worst {
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
	expSlice(v)
	for i, x := range xs {
		want := math.Exp(x)
		for _, got := range []float64{exp(x), v[i]} {
			if math.Float64bits(got) != math.Float64bits(want) && math.Abs(got-want) > 2.3e-16*want {
				t.Errorf("exp(%v) = %v, want %v", x, got, want)
			}
		}
	}
	if got := exp(0); got != 1 {
		t.Errorf("exp(0) = %v, want exactly 1", got)
	}
}

// BenchmarkExp times expSlice and math.Exp on a block of arguments
// (N(0, 8²), a fifth of them in GELU's saturated tails).
func BenchmarkExp(b *testing.B) {
	x := make([]float64, expBlock)
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range x {
		x[i] = 8 * rng.NormFloat64()
	}
	v := make([]float64, len(x))
	perExp := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(x)), "ns/exp")
	}
	b.Run("expSlice", func(b *testing.B) {
		for b.Loop() {
			copy(v, x)
			expSlice(v)
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

// TestCausalSoftmaxBlocks checks causalSoftmax, which feeds expSlice a
// block at a time, on rows spanning several blocks against the softmax
// computed per element in float64 with math.Exp.
func TestCausalSoftmaxBlocks(t *testing.T) {
	const n = 2*expBlock + 22
	rng := rand.New(rand.NewPCG(9, 10))
	p := make([]float32, n*n)
	for i := range p {
		p[i] = float32(4 * rng.NormFloat64())
	}
	scores := append([]float32(nil), p...)
	causalSoftmax(p, n)
	for r := range n {
		row := scores[r*n : (r+1)*n]
		m := math.Inf(-1)
		for _, v := range row[:r+1] {
			m = math.Max(m, float64(v))
		}
		var z float64
		for _, v := range row[:r+1] {
			z += math.Exp(float64(v) - m)
		}
		for s, v := range row {
			want := 0.0
			if s <= r {
				want = math.Exp(float64(v)-m) / z
			}
			if got := float64(p[r*n+s]); math.Abs(got-want) > 1e-5*want {
				t.Fatalf("row %d, column %d: %v, want %v", r, s, got, want)
			}
		}
	}
}
