package normlog

import (
	"math"
	"testing"

	"github.com/psclip/psclip/estimator"
)

func TestRecorderKeepsNormsAndWeights(t *testing.T) {
	ps, err := estimator.Spec{Estimator: "ps-clip-sgd", Clip: 1}.New()
	if err != nil {
		t.Fatal(err)
	}
	r := &Recorder{Estimator: ps}
	w, want := make([]float64, 2), make([]float64, 2)
	estimator.Weights(r, []float64{0.5, 4}, w)
	estimator.Weights(r, []float64{math.NaN()}, w[:1])
	got := r.Take()
	if len(got) != 3 || got[0] != 0.5 || got[1] != 4 || !math.IsNaN(float64(got[2])) {
		t.Fatalf("Take = %v, want [0.5 4 NaN]", got)
	}
	if len(r.Take()) != 0 {
		t.Fatal("a second Take must be empty")
	}
	estimator.Weights(r, []float64{0.5, 4}, w)
	estimator.Weights(ps, []float64{0.5, 4}, want)
	if w[0] != want[0] || w[1] != want[1] {
		t.Fatalf("weights %v, want the wrapped estimator's %v", w, want)
	}
}
