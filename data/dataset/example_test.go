package dataset_test

import (
	"fmt"
	"log"

	"github.com/psclip/psclip/data/dataset"
	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/optim"
	"github.com/psclip/psclip/tensor"
	"github.com/psclip/psclip/train"
)

// Your own tensors, a shuffling sampler and a training loop; the sampler,
// given as train.Config.Progress, is saved and restored with the
// Trainer's State (and so by checkpoint.SaveTrainer).
func Example() {
	// Eight records of R², class 1 where x₀ > 0.
	x := tensor.From([]float32{1, 0, -1, 0, 2, 1, -2, 1, 3, -1, -3, -1, 0.5, 2, -0.5, 2}, 8, 2)
	data, err := dataset.NewTensors(x, []int32{1, 0, 1, 0, 1, 0, 1, 0})
	if err != nil {
		log.Fatal(err)
	}
	sampler, err := dataset.NewShuffle(data.Len(), 4, true, 1) // epochs of 2 batches of 4
	if err != nil {
		log.Fatal(err)
	}
	model := nn.Sequential{nn.NewLinear("0", 2, 2, true)}
	opt, err := optim.NewSGD(model.Params(), optim.SGDConfig{LR: 0.5})
	if err != nil {
		log.Fatal(err)
	}
	tr, err := train.New(train.Config{Model: model, Loss: nn.CrossEntropy, Estimator: estimator.SGD{},
		Optimizer: opt, Progress: sampler})
	if err != nil {
		log.Fatal(err)
	}
	for range 20 {
		b, err := data.Batch(sampler.Next())
		if err != nil {
			log.Fatal(err)
		}
		if _, err := tr.Step(b); err != nil {
			log.Fatal(err)
		}
	}
	epoch, batch := sampler.Position()
	all, _ := data.Batch([]int{0, 1, 2, 3, 4, 5, 6, 7})
	ev, err := train.Evaluate(model, nn.CrossEntropy, all)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("epoch %d, batch %d: accuracy %.2f\n", epoch, batch, ev.Accuracy)
	// Output: epoch 9, batch 2: accuracy 1.00
}
