package estimator

import "testing"

func TestStateAndSetState(t *testing.T) {
	if b, err := State(SGD{}); b != nil || err != nil {
		t.Fatalf("stateless: %v, %v", b, err)
	}
	if err := SetState(SGD{}, nil); err != nil {
		t.Fatalf("stateless SetState: %v", err)
	}
	a, err := Spec{Estimator: "ps-clip-quantile"}.New()
	if err != nil {
		t.Fatal(err)
	}
	w := make([]float64, 4)
	Weights(a, []float64{1, 2, 3, 4}, w)
	b, err := State(a)
	if err != nil || b == nil {
		t.Fatalf("adaptive State: %v, %v", b, err)
	}
	c, _ := Spec{Estimator: "ps-clip-quantile"}.New()
	if err := SetState(c, nil); err == nil {
		t.Fatal("a missing state must be refused")
	}
	if err := SetState(c, b); err != nil {
		t.Fatal(err)
	}
	wa, wc := make([]float64, 3), make([]float64, 3)
	Weights(a, []float64{5, 1, 2}, wa)
	Weights(c, []float64{5, 1, 2}, wc)
	for i := range wa {
		if wa[i] != wc[i] {
			t.Fatalf("restored estimator weights %v, original %v", wc, wa)
		}
	}
}
