package train_test

import (
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/optim"
	"github.com/psclip/psclip/tensor"
	"github.com/psclip/psclip/train"
)

// blobs returns n points in R^4 from 3 Gaussian classes, with a fraction of
// the labels flipped at random: outliers with large gradients.
func blobs(rng *rand.Rand, n int) train.Batch {
	x := tensor.New(n, 4)
	y := make([]int32, n)
	for i := range n {
		c := rng.IntN(3)
		for j := range 4 {
			x.Data[i*4+j] = float32(rng.NormFloat64())
		}
		x.Data[i*4+c] += 3
		if rng.Float64() < 0.1 {
			c = rng.IntN(3)
		}
		y[i] = int32(c)
	}
	return train.Batch{X: x, Y: y}
}

// A small MLP trained with PS-Clip-SGD: every sample's gradient is clipped
// to norm 1 before averaging, in one backward pass.
func Example() {
	rng := rand.New(rand.NewPCG(1, 2))
	model := nn.Sequential{nn.NewLinear("0", 4, 16, true), &nn.ReLU{}, nn.NewLinear("2", 16, 3, true)}
	if err := nn.Init(model, 1); err != nil { // PyTorch's default initialisation, from seed 1
		log.Fatal(err)
	}

	est, err := estimator.Spec{Estimator: "ps-clip-sgd", Clip: 1}.New()
	if err != nil {
		log.Fatal(err)
	}
	opt, err := optim.NewSGD(model.Params(), optim.SGDConfig{LR: 0.1, Momentum: 0.9})
	if err != nil {
		log.Fatal(err)
	}
	tr, err := train.New(train.Config{Model: model, Loss: nn.CrossEntropy, Estimator: est, Optimizer: opt})
	if err != nil {
		log.Fatal(err)
	}
	var first, last train.Stats
	for step := range 200 {
		st, err := tr.Step(blobs(rng, 32))
		if err != nil {
			log.Fatal(err)
		}
		if step == 0 {
			first = st
		}
		last = st
	}
	fmt.Printf("loss %.1f → %.1f\n", first.Loss, last.Loss)
	fmt.Printf("first batch: %d of %d samples clipped, per-sample norms %.1f to %.1f (median %.1f)\n",
		first.Clipped, first.Samples, first.SampleNorms.Min, first.SampleNorms.Max, first.SampleNorms.Median)
	ev, err := train.Evaluate(model, nn.CrossEntropy, blobs(rng, 500))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("held-out accuracy %.2f\n", ev.Accuracy)
	// Output:
	// loss 1.0 → 0.4
	// first batch: 32 of 32 samples clipped, per-sample norms 1.5 to 5.6 (median 2.6)
	// held-out accuracy 0.91
}

// MB-Clip with AdamW: a step accumulates 4 micro-batches, clipping each
// micro-batch's share of the step's gradient (its gradient/4) to norm 1
// before it is added, the paper's MB-Clip-SGD.
func Example_microBatchClipping() {
	rng := rand.New(rand.NewPCG(7, 8))
	model := nn.Sequential{nn.NewLinear("0", 4, 16, false), &nn.ReLU{}, nn.NewLinear("2", 16, 3, false)}
	if err := nn.Init(model, 7); err != nil {
		log.Fatal(err)
	}

	clip, _ := estimator.Spec{Estimator: "clip-sgd", Clip: 1}.New()
	opt, _ := optim.NewAdamW(optim.DecayGroups(model.Params(), 0.1),
		optim.AdamWConfig{LR: 3e-3, Beta1: 0.9, Beta2: 0.95, Eps: 1e-8})
	sched := optim.NewWarmupCosine(3e-3, 10, 100)
	tr, _ := train.New(train.Config{Model: model, Loss: nn.CrossEntropy, Estimator: clip,
		Optimizer: opt, Scope: train.MicroBatch})
	var loss float64
	for step := range 100 {
		if err := opt.SetLR(sched.LR(step)); err != nil {
			log.Fatal(err)
		}
		st, err := tr.Step(blobs(rng, 8), blobs(rng, 8), blobs(rng, 8), blobs(rng, 8))
		if err != nil {
			log.Fatal(err)
		}
		loss = st.Loss
	}
	fmt.Printf("final loss below 0.6: %v\n", loss < 0.6 && !math.IsNaN(loss))
	// Output:
	// final loss below 0.6: true
}

// Fine-tuning the head of a model with its first layer frozen: the
// optimizer gets the parameters left to train, the frozen layer keeps its
// weights and no gradient, and every per-sample norm is the head's alone.
func Example_frozen() {
	model := nn.Sequential{nn.NewLinear("0", 4, 16, true), &nn.ReLU{}, nn.NewLinear("2", 16, 3, true)}
	if err := nn.Init(model, 1); err != nil {
		log.Fatal(err)
	}
	nn.Freeze(model[0]) // the backbone: PyTorch's requires_grad_(False)
	head := nn.Trainable(model.Params())
	opt, err := optim.NewSGD(head, optim.SGDConfig{LR: 0.1})
	if err != nil {
		log.Fatal(err)
	}
	est, err := estimator.Spec{Estimator: "ps-clip-sgd", Clip: 1}.New()
	if err != nil {
		log.Fatal(err)
	}
	tr, err := train.New(train.Config{Model: model, Loss: nn.CrossEntropy, Estimator: est, Optimizer: opt})
	if err != nil {
		log.Fatal(err)
	}
	before := model[0].(*nn.Linear).Weight.Value.Clone()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		if _, err := tr.Step(blobs(rng, 32)); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Printf("trained %d of %d parameters; backbone unchanged: %v\n", len(head), len(model.Params()),
		slices.Equal(before.Data, model[0].(*nn.Linear).Weight.Value.Data))
	// Output:
	// trained 2 of 4 parameters; backbone unchanged: true
}
