package images_test

import (
	"fmt"
	"log"

	"github.com/psclip/psclip/data/cifar"
	"github.com/psclip/psclip/data/images"
	"github.com/psclip/psclip/data/labelnoise"
	"github.com/psclip/psclip/models"
)

// Fashion-MNIST as Debian installs it, with 40% of the training split's
// labels flipped, batched for a one-channel network. (Compiled, not run:
// the files may be absent.)
func Example() {
	train, test, src, err := images.Load("/usr/share/datasets/fashion-mnist")
	if err != nil {
		log.Fatal(err)
	}
	trainSet, valSet, err := cifar.Split(train, cifar.ValidationSize(train.Len()), 1)
	if err != nil {
		log.Fatal(err)
	}
	noisy, err := labelnoise.Apply(trainSet.Labels, trainSet.Classes, labelnoise.Config{Fraction: 0.4, Seed: 1})
	if err != nil {
		log.Fatal(err)
	}
	isNoisy := labelnoise.Mask(trainSet.Len(), noisy)
	model, err := models.NewSmallCNN(models.SmallCNNConfig{Classes: train.Classes, InChannels: train.Channels(), Width: 16}, 1)
	if err != nil {
		log.Fatal(err)
	}
	it, err := cifar.NewIterator(trainSet, cifar.IterConfig{Batch: 64, Shuffle: true, Norm: cifar.Stats(trainSet), Seed: 1})
	if err != nil {
		log.Fatal(err)
	}
	var det labelnoise.Detection
	x, y, _ := it.Next()
	// A training step here would clip some samples: those whose factor
	// from the estimator's Factors is below 1 (an Estimator wrapping the
	// step's one can record them).
	clipped := make([]bool, len(y))
	det.Add(clipped, it.Indices(), isNoisy)
	fmt.Println(src.Format, x.Shape, len(model.Params()), valSet.Len(), test.Len(), det.NoisyShare())
}
