package detmath

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"testing"
)

// A function is one of this package's, its counterpart in package math and
// inputs for it. For Exp and Log it is the Go code, exp and log, which
// Exp and Log are off amd64 (TestDispatch).
type function struct {
	name   string
	f, ref func(x, y float64) float64
	inputs func(r *rand.Rand) (x, y float64)
	ulps   float64 // the largest difference from ref allowed, in units in the last place
}

var functions = []function{
	{"Exp", func(x, _ float64) float64 { return exp(x) }, func(x, _ float64) float64 { return math.Exp(x) },
		func(r *rand.Rand) (float64, float64) { return spread(r, 746, 709.4), 0 }, 3},
	{"Exp2", func(x, _ float64) float64 { return Exp2(x) }, func(x, _ float64) float64 { return math.Exp2(x) },
		func(r *rand.Rand) (float64, float64) { return spread(r, 1075, 1024), 0 }, 1},
	{"Log", func(x, _ float64) float64 { return log(x) }, refLog,
		func(r *rand.Rand) (float64, float64) {
			if r.IntN(2) == 0 {
				return 0.5 + float64(1.5*r.Float64()), 0 // around 1, where log's cancellations are
			}
			return math.Float64frombits(r.Uint64() >> 1), 0 // any x > 0 but NaN, +Inf
		}, 1},
	{"Pow", Pow, math.Pow,
		func(r *rand.Rand) (float64, float64) {
			if r.IntN(2) == 0 {
				return 1 + r.Float64(), -1 / (1 + float64(2*r.Float64())) // the Pareto sampler's m^(−1/p)
			}
			return Exp(spread(r, 40, 40)), spread(r, 20, 20)
		}, 8},
}

// spread returns a number in [−lo, hi], most of them small. Its products
// are rounded (see the package comment), so that the inputs are the same on
// every architecture.
func spread(r *rand.Rand, lo, hi float64) float64 {
	switch r.IntN(3) {
	case 0:
		return float64(2*r.Float64()) - 1
	case 1:
		return (float64(2*r.Float64()) - 1) * 30
	}
	return -lo + float64((lo+hi)*r.Float64())
}

// special are inputs every function must treat as package math does:
// signed zeros, infinities, NaN, and numbers (integers, halves) that
// math.Pow takes special paths for.
var special = []float64{0, math.Copysign(0, -1), 1, -1, 0.5, -0.5, 2, 3, -3, 0.1,
	math.Inf(1), math.Inf(-1), math.NaN(), math.MaxFloat64, math.SmallestNonzeroFloat64, 1e300, -1e300}

// TestSpecialCases compares the functions with package math's at the
// special inputs: the same bits, or within the ulps of TestAccuracy for a
// finite nonzero value.
func TestSpecialCases(t *testing.T) {
	for _, fn := range functions {
		for _, x := range special {
			for _, y := range special {
				if fn.name != "Pow" && y != 0 || fn.name == "Pow" && subnormal(x) {
					continue
				}
				got, want := fn.f(x, y), fn.ref(x, y)
				same := math.Float64bits(got) == math.Float64bits(want) || math.IsNaN(got) && math.IsNaN(want)
				if !same && !(ulps(got, want) <= fn.ulps && !math.IsInf(want, 0) && want != 0) {
					t.Errorf("%s(%v, %v) = %v, math gives %v", fn.name, x, y, got, want)
				}
			}
		}
	}
}

// TestEnds checks the values at the ends of the ranges: where they
// overflow and underflow. Exp's are amd64's, which overflows early (for
// x ≥ 709.44, where k = 1024 in e^x = 2^k·e^r) and rounds e^−745.13 up to
// the smallest subnormal.
func TestEnds(t *testing.T) {
	for _, tc := range []struct {
		name       string
		f          func(x, y float64) float64
		x, y, want float64
	}{
		{"Exp", func(x, _ float64) float64 { return exp(x) }, 709.43, 0, 1.2633808701860083e+308},
		{"Exp", func(x, _ float64) float64 { return exp(x) }, 709.44, 0, math.Inf(1)},
		{"Exp", func(x, _ float64) float64 { return exp(x) }, -708.4, 0, 2.217119081664265e-308},
		{"Exp", func(x, _ float64) float64 { return exp(x) }, -745.13, 0, 5e-324},
		{"Exp", func(x, _ float64) float64 { return exp(x) }, -745.14, 0, 0},
		{"Exp2", func(x, _ float64) float64 { return Exp2(x) }, 1023.99, 0, 1.7852755613304564e+308},
		{"Exp2", func(x, _ float64) float64 { return Exp2(x) }, 1024, 0, math.Inf(1)},
		{"Exp2", func(x, _ float64) float64 { return Exp2(x) }, -1022.5, 0, 1.5733648139913585e-308},
		{"Exp2", func(x, _ float64) float64 { return Exp2(x) }, -1074, 0, 5e-324},
		{"Exp2", func(x, _ float64) float64 { return Exp2(x) }, -1074.5, 0, 0},
		{"Pow", Pow, 2, 1023.5, 1.2711610061536462e+308},
		{"Pow", Pow, 2, 1024, math.Inf(1)},
		{"Pow", Pow, 2, -1074, 5e-324},
		{"Pow", Pow, 10, -323.5, 5e-324},
		{"Pow", Pow, -2, 3, -8},
		{"Pow", Pow, 0.1, 3, 0.0010000000000000002},
	} {
		if got := tc.f(tc.x, tc.y); got != tc.want {
			t.Errorf("%s(%v, %v) = %v, want %v", tc.name, tc.x, tc.y, got, tc.want)
		}
	}
}

// refLog is math.Log, but for a subnormal x, where amd64's is wrong
// (its assembly does not normalize x), log(x·2^54) − 54·log 2.
func refLog(x, _ float64) float64 {
	if subnormal(x) {
		return math.Log(x*0x1p54) - 54*math.Ln2
	}
	return math.Log(x)
}

func subnormal(x float64) bool { return x != 0 && math.Abs(x) < 0x1p-1022 }

// TestDispatch checks that Exp and Log, which call package math's on
// amd64, give the bits of exp and log, to which the other tests apply.
func TestDispatch(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, fn := range []struct {
		name   string
		f, ref func(float64) float64
		x      func() float64
	}{
		{"Exp", Exp, exp, func() float64 { return spread(r, 746, 709.4) }},
		{"Log", Log, log, func() float64 { return math.Float64frombits(r.Uint64() >> 1) }},
	} {
		for i := range 100000 {
			x := fn.x()
			if i < len(special) {
				x = special[i]
			}
			got, want := fn.f(x), fn.ref(x)
			if math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
				t.Fatalf("%s(%v) = %v, want %v", fn.name, x, got, want)
			}
		}
	}
}

// TestAccuracy compares the functions with package math's on random
// inputs (Exp's below 709.44, where amd64's overflows early: TestEnds):
// within an ulp, or three for Exp (amd64's math.Exp, which Exp is,
// is up to 1.3 ulps off e^x, and arm64's another algorithm's) and eight
// for Pow: its Exp(yf·Log x) and squarings for x^yi add their errors, and
// math.Pow's, which has another Exp off amd64, are as large (both are about
// 3 ulps off x^y, in opposite directions, at x = 2.17, y = −7.29 on arm64).
func TestAccuracy(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, fn := range functions {
		for range 200000 {
			x, y := fn.inputs(r)
			got, want := fn.f(x, y), fn.ref(x, y)
			if d := ulps(got, want); d > fn.ulps {
				t.Fatalf("%s(%v, %v) = %v, math gives %v: %v ulps apart", fn.name, x, y, got, want, d)
			}
		}
	}
}

// ulps returns |a − b| in units in the last place of b (0 for a == b).
func ulps(a, b float64) float64 {
	if a == b {
		return 0
	}
	ulp := math.Nextafter(math.Abs(b), math.Inf(1)) - math.Abs(b)
	return math.Abs(a-b) / ulp
}

// TestPinned pins the functions' values on fixed inputs to the bit: it
// holds on every architecture (CI runs it on arm64 under QEMU) and fails
// for a change to any value.
func TestPinned(t *testing.T) {
	want := map[string]uint64{
		"Exp":  0x899f3d6da027af61,
		"Exp2": 0x227dbea8fe764dc3,
		"Log":  0xf8e2746554e59969,
		"Pow":  0x609cff68be95b88a,
	}
	for _, fn := range functions {
		r := rand.New(rand.NewPCG(3, 4))
		h := fnv.New64a()
		for range 100000 {
			x, y := fn.inputs(r)
			v := math.Float64bits(fn.f(x, y))
			h.Write([]byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24), byte(v >> 32), byte(v >> 40), byte(v >> 48), byte(v >> 56)})
		}
		if got := h.Sum64(); got != want[fn.name] {
			t.Errorf("%s's values hash to %#x, want %#x", fn.name, got, want[fn.name])
		}
	}
}

// BenchmarkFunctions times each function beside package math's, on the
// inputs of TestAccuracy: Exp and Log as exported (package math's on
// amd64) and as the Go code exp and log.
func BenchmarkFunctions(b *testing.B) {
	exported := map[string]func(x, y float64) float64{
		"Exp": func(x, _ float64) float64 { return Exp(x) },
		"Log": func(x, _ float64) float64 { return Log(x) },
	}
	for _, fn := range functions {
		r := rand.New(rand.NewPCG(1, 2))
		xs, ys := make([]float64, 1024), make([]float64, 1024)
		for i := range xs {
			xs[i], ys[i] = fn.inputs(r)
		}
		impls := map[string]func(x, y float64) float64{"detmath": fn.f, "math": fn.ref}
		if f, ok := exported[fn.name]; ok {
			impls["go"], impls["detmath"] = fn.f, f
		}
		for _, name := range []string{"detmath", "go", "math"} {
			f, ok := impls[name]
			if !ok {
				continue
			}
			b.Run(fn.name+"/"+name, func(b *testing.B) {
				var sink float64
				for i := 0; b.Loop(); i++ {
					sink += f(xs[i&1023], ys[i&1023])
				}
				_ = sink
			})
		}
	}
}
