package estimator

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestClippedAgreesWithStats runs every per-sample estimator on batches of
// heavy-tailed norms with some non-finite ones: the samples Clipped flags
// are as many as Stats.Clipped counts, and for the constant threshold
// exactly those with a norm above it.
func TestClippedAgreesWithStats(t *testing.T) {
	con, err1 := Constant(2)
	inc, err2 := Increasing(1, 2)
	auto, err3 := NewPSAuto(0, 0, 0)
	quant, err4 := NewQuantile(0.7, 0.1, 0)
	ac, err5 := NewAutoClip(0.5)
	for _, err := range []error{err1, err2, err3, err4, err5} {
		if err != nil {
			t.Fatal(err)
		}
	}
	ests := map[string]Estimator{
		"constant": NewPSClip(con), "increasing": NewPSClip(inc), "auto": auto, "quantile": quant, "auto-clip": ac,
		"sgd": SGD{},
	}
	r := rand.New(rand.NewPCG(1, 2))
	for name, e := range ests {
		total := 0
		for batch := range 200 {
			norms := make([]float64, 1+r.IntN(40))
			for i := range norms {
				norms[i] = math.Pow(r.Float64(), -0.7) // Pareto-like, many above 2
				switch r.IntN(25) {
				case 0:
					norms[i] = math.NaN()
				case 1:
					norms[i] = math.Inf(1)
				case 2:
					norms[i] = 0
				}
			}
			w := make([]float64, len(norms))
			st := e.Weights(norms, w)
			flags := make([]bool, len(norms))
			Clipped(norms, w, flags)
			n := 0
			for i, c := range flags {
				if c {
					n++
				}
				if name == "constant" && c != (norms[i] > 2 && !math.IsInf(norms[i], 0)) {
					t.Fatalf("constant γ=2, norm %v: clipped %v", norms[i], c)
				}
			}
			if n != st.Clipped {
				t.Fatalf("%s batch %d: %d samples flagged, Stats.Clipped %d", name, batch, n, st.Clipped)
			}
			total += n
		}
		if (total == 0) != (name == "sgd") {
			t.Errorf("%s clipped %d samples in all", name, total)
		}
	}
}
