package nn_test

import (
	"math/rand/v2"
	"testing"

	"github.com/psclip/psclip/models"
	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/nn/nntest"
)

// AlexNet-CIFAR at width/16 against the brute force, with cross-entropy and
// dropout off, on every layer's own rule and with every layer forced onto
// each rule.
func TestAlexNetPerSample(t *testing.T) {
	for _, force := range []string{"auto", "ghost", "materialise"} {
		t.Run(force, func(t *testing.T) {
			m, err := models.NewAlexNet(models.AlexNetConfig{Classes: 10, WidthDiv: 16, Dropout: 0.5}, 1)
			if err != nil {
				t.Fatal(err)
			}
			if force != "auto" {
				nn.ForceRule(m, force == "ghost")
			}
			rng := rand.New(rand.NewPCG(1, 2))
			x := nntest.RandTensor(rng, 4, 3, 32, 32)
			nntest.CheckPerSample(t, m, x, []int32{3, 0, 9, 3}, nn.CrossEntropy, nntest.MedianClip)
		})
	}
}

// SmallCNN, one-channel AlexNet-CIFAR and TanhCNN (on data/idx's 32×32
// canvas), the models for grey images, against the brute force as above,
// on a batch of grey 32×32 images.
func TestGreyCNNsPerSample(t *testing.T) {
	builders := map[string]func() (nn.Sequential, error){
		"smallcnn": func() (nn.Sequential, error) {
			return models.NewSmallCNN(models.SmallCNNConfig{Classes: 10, InChannels: 1, Width: 4}, 1)
		},
		"alexnet": func() (nn.Sequential, error) {
			return models.NewAlexNet(models.AlexNetConfig{Classes: 10, WidthDiv: 16, Dropout: 0.5, InChannels: 1}, 1)
		},
		"tanhcnn": func() (nn.Sequential, error) {
			return models.NewTanhCNN(models.TanhCNNConfig{Classes: 10, Side: 32}, 1)
		},
	}
	for name, build := range builders {
		for _, force := range []string{"auto", "ghost", "materialise"} {
			t.Run(name+"/"+force, func(t *testing.T) {
				m, err := build()
				if err != nil {
					t.Fatal(err)
				}
				if force != "auto" {
					nn.ForceRule(m, force == "ghost")
				}
				rng := rand.New(rand.NewPCG(3, 4))
				x := nntest.RandTensor(rng, 4, 1, 32, 32)
				nntest.CheckPerSample(t, m, x, []int32{3, 0, 9, 3}, nn.CrossEntropy, nntest.MedianClip)
			})
		}
	}
}
