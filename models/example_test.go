package models_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/psclip/psclip/models"
	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/tensor"
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

// A Hugging Face GPT-2 directory in, the next-token logits out, and the
// model written back in GPT-2's layout.
func ExampleReadGPT2() {
	m, err := models.ReadGPT2("testdata/gpt2-tiny") // config.json, model.safetensors
	if err != nil {
		log.Fatal(err)
	}
	c := m.Config()
	fmt.Printf("%d layers, %d heads, width %d, %d positions, %d tokens\n", c.NLayer, c.NHead, c.NEmbd, c.BlockSize, c.VocabSize)
	logits := m.Forward(&nn.Context{}, tensor.From([]float32{1, 2, 3}, 1, 3))
	fmt.Println("logits", logits.Shape)
	dir, err := os.MkdirTemp("", "gpt2")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := models.WriteGPT2(filepath.Join(dir, "out"), m); err != nil {
		log.Fatal(err)
	}
	// Output:
	// 2 layers, 4 heads, width 32, 16 positions, 64 tokens
	// logits [1 3 64]
}
