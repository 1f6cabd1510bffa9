//go:build !amd64.v3

package quadratic

import (
	"math"
	"math/rand/v2"
	"testing"

	"golang.org/x/sys/cpu"
)

// TestNormalMatchesMathRand checks that normal's values are those of
// math/rand/v2's NormFloat64 from the same words, and that it takes as
// many words, where package math's Exp and Log are detmath's: on amd64
// with FMA. With GOAMD64=v3 the compiler may fuse math/rand/v2's wedge
// test, so the test is left out of that build.
func TestNormalMatchesMathRand(t *testing.T) {
	if !(cpu.X86.HasAVX && cpu.X86.HasFMA) {
		t.Skip("no FMA: math.Exp takes another path than detmath.Exp")
	}
	src, ref := newPCG(7, 8), rand.NewPCG(7, 8)
	rng := rand.New(ref)
	tails := 0
	for i := range 1000000 {
		got, want := normal(src), rng.NormFloat64()
		if math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("value %d is %v, NormFloat64 gives %v", i, got, want)
		}
		if math.Abs(got) > 3.442619855899 {
			tails++
		}
	}
	if g, w := src.Uint64(), ref.Uint64(); g != w {
		t.Fatalf("after the values, the next words are %#x and %#x: not as many words taken", g, w)
	}
	t.Logf("%d values from the tail", tails)
}
