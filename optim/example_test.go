package optim_test

import (
	"fmt"
	"log"
	"math"

	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/optim"
)

// AdamW with nanoGPT's parameter groups and learning-rate schedule,
// minimising ½‖w‖² whose gradient is w.
func Example() {
	w := nn.NewParam("fc.weight", 2, 2)
	b := nn.NewParam("fc.bias", 2)
	copy(w.Value.Data, []float32{1, -2, 3, -4})
	copy(b.Value.Data, []float32{1, 1})
	params := []*nn.Param{w, b}
	start := norm(params)

	opt, err := optim.NewAdamW(optim.DecayGroups(params, 0.1),
		optim.AdamWConfig{LR: 0.1, Beta1: 0.9, Beta2: 0.95, Eps: 1e-8})
	if err != nil {
		log.Fatal(err)
	}
	sched := optim.NewWarmupCosine(0.1, 10, 100)
	if err := sched.Validate(); err != nil {
		log.Fatal(err)
	}
	for it := range 100 {
		for _, p := range params {
			copy(p.Grad.Data, p.Value.Data)
		}
		if err := opt.SetLR(sched.LR(it)); err != nil {
			log.Fatal(err) // a rate that is not a positive normal float32
		}
		opt.Step()
	}
	fmt.Printf("lr %.3g → %.3g, steps %d\n", sched.LR(0), sched.LR(99), opt.State().Steps)
	fmt.Printf("parameter norm %.2f → %.2f\n", start, norm(params))
	// Output:
	// lr 0.00909 → 0.01, steps 100
	// parameter norm 5.66 → 0.05
}

func norm(params []*nn.Param) float64 {
	var s float64
	for _, p := range params {
		for _, x := range p.Value.Data {
			s += float64(x) * float64(x)
		}
	}
	return math.Sqrt(s)
}
