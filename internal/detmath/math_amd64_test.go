//go:build !amd64.v3

package detmath

import (
	"math"
	"math/rand/v2"
	"testing"

	"golang.org/x/sys/cpu"
)

// TestSameAsMath checks that the functions give package math's bits on
// amd64, where the experiments' results were pinned: Exp on a CPU with FMA
// (math.Exp's other path rounds differently), and Log and Pow but for subnormal x (where theirs are wrong).
// With GOAMD64=v3 the compiler may fuse math's Go code, so the test is
// left out of that build.
func TestSameAsMath(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, fn := range functions {
		if fn.name == "Exp" && !(cpu.X86.HasAVX && cpu.X86.HasFMA) {
			t.Log("no FMA: math.Exp takes its other path, not compared")
			continue
		}
		for i := range 1000000 {
			x, y := fn.inputs(r)
			if i < len(special) {
				x = special[i]
			}
			if subnormal(x) {
				continue
			}
			got, want := fn.f(x, y), fn.ref(x, y)
			if math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
				t.Fatalf("%s(%v, %v) = %v (%#x), math gives %v (%#x)", fn.name, x, y, got, math.Float64bits(got), want, math.Float64bits(want))
			}
		}
	}
}
