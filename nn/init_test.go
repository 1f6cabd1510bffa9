package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestFanIn(t *testing.T) {
	for _, tc := range []struct {
		shape []int
		want  int
	}{{[]int{4, 7}, 7}, {[]int{8, 3, 5, 5}, 75}} {
		if got := FanIn(tc.shape); got != tc.want {
			t.Errorf("FanIn(%v) = %d, want %d", tc.shape, got, tc.want)
		}
	}
}

// InitDefault must give U(±1/√fan_in): every entry inside the bound, and the
// variance bound²/3 of the uniform distribution.
func TestInitDefault(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	l := NewLinear("fc", 100, 200, true)
	InitDefault(rng, l.Weight, l.Bias)
	bound := 0.1
	for _, p := range l.Params() {
		var s float64
		for _, v := range p.Value.Data {
			if math.Abs(float64(v)) > bound {
				t.Fatalf("%s: entry %g outside ±%g", p.Name, v, bound)
			}
			s += float64(v) * float64(v)
		}
		got, want := s/float64(p.Value.Len()), bound*bound/3
		// The standard error of the variance estimate is below 10% even for
		// the 200 bias entries.
		if math.Abs(got-want) > 0.15*want {
			t.Errorf("%s: variance %.4g, want %.4g", p.Name, got, want)
		}
	}
}
