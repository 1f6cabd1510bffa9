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
