package main

import (
	"flag"

	"github.com/psclip/psclip/experiments/images"
)

func init() {
	register(&command{
		name:  "train images",
		short: "train a CNN (small-cnn or AlexNet-CIFAR) on any image data set (CIFAR binaries, IDX such as Fashion-MNIST), optionally with label noise",
		run:   runTrainImages,
		ranks: true,
	})
}

func runTrainImages(fs *flag.FlagSet, args []string) error {
	return runTrainCNN(fs, args, images.ImagesDefault(), imagesPreset)
}
