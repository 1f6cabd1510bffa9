package models_test

import (
	"fmt"
	"log"

	"github.com/psclip/psclip/models"
)

// The paper's two networks, by their parameter counts.
func Example() {
	alex, err := models.NewAlexNet(models.DefaultAlexNet, 1)
	if err != nil {
		log.Fatal(err)
	}
	n := 0
	for _, p := range alex.Params() {
		n += p.Value.Len()
	}
	fmt.Printf("alexnet-cifar: %d parameters, first %s %v\n", n, alex.Params()[0].Name, alex.Params()[0].Value.Shape)

	gpt2 := models.GPTConfig{NLayer: 12, NHead: 12, NEmbd: 768, BlockSize: 1024, VocabSize: 50304}
	fmt.Printf("gpt2-124m: %.2fM parameters (nanoGPT's count)\n", float64(gpt2.NumParams(true))/1e6)
	// Output:
	// alexnet-cifar: 57392036 parameters, first features.0.weight [64 3 3 3]
	// gpt2-124m: 123.59M parameters (nanoGPT's count)
}
