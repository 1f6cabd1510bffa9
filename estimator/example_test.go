package estimator_test

import (
	"errors"
	"fmt"
	"log"

	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/setting"
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
		st, err := estimator.Direction(e, grads, dir)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%-11s direction (%6.2f, %5.2f)  clipped samples %d\n", e.Name(), dir[0], dir[1], st.Clipped)
	}
	// Output:
	// sgd         direction ( -9.33, 13.33)  clipped samples 0
	// clip-sgd    direction ( -1.15,  1.64)  clipped samples 0
	// ps-clip-sgd direction (  0.27,  0.53)  clipped samples 1
}

// Gradients from another framework, as float32 rows (one per sample):
// Direction returns the per-sample norms it computed and the plain clip
// factors, min(1, γ/|g_i|) for PS-Clip-SGD.
func ExampleDirection() {
	grads := []float32{
		3, 4, // norm 5
		0, 1, // norm 1
	}
	gamma, err := estimator.Constant(2)
	if err != nil {
		log.Fatal(err)
	}
	dir := make([]float32, 2)
	r, err := estimator.Direction(estimator.NewPSClip(gamma), grads, dir)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("norms", r.Norms, "factors", r.Factors, "clipped", r.Clipped)
	fmt.Println("direction", dir)
	// Output:
	// norms [5 1] factors [0.4 1] clipped 1
	// direction [0.6 1.3]
}

// A Spec says which settings its estimator reads and refuses the others,
// with an error that names the field.
func ExampleSpec() {
	s := estimator.Spec{Estimator: "ps-clip-sgd", Alpha: 15, Beta: 2}
	fmt.Println(s.Label(), "reads Clip:", s.Reads("Clip"))

	s.Clip = 45 // the constant threshold's γ, which an increasing threshold does not read
	_, err := s.New()
	var se *setting.Error
	if errors.As(err, &se) {
		fmt.Println("refused:", se.Field, "=", se.Value)
	}
	// Output:
	// Increasing-PS-Clip-SGD α=15 β=2 reads Clip: false
	// refused: Clip = 45
}
