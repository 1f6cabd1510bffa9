package estimator_test

import (
	"fmt"
	"log"

	"github.com/psclip/psclip/estimator"
)

// Per-sample clipping keeps one outlier from dominating the update, where
// clipping the mean only shrinks it.
func Example() {
	// Three samples in R²: two agree, one is an outlier.
	grads := []float64{
		1, 0,
		1, 0,
		-30, 40,
	}
	ps, err := estimator.Spec{Estimator: "ps-clip-sgd", Clip: 2}.New()
	if err != nil {
		log.Fatal(err)
	}
	clip, err := estimator.Spec{Estimator: "clip-sgd", Clip: 2}.New()
	if err != nil {
		log.Fatal(err)
	}
	dir := make([]float64, 2)
	for _, e := range []estimator.Estimator{estimator.SGD{}, clip, ps} {
		st := estimator.Direction(e, grads, dir)
		fmt.Printf("%-11s direction (%6.2f, %5.2f)  clipped samples %d\n", e.Name(), dir[0], dir[1], st.Clipped)
	}
	// Output:
	// sgd         direction ( -9.33, 13.33)  clipped samples 0
	// clip-sgd    direction ( -1.15,  1.64)  clipped samples 0
	// ps-clip-sgd direction (  0.27,  0.53)  clipped samples 1
}
