package safetensors_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/psclip/psclip/safetensors"
	"github.com/psclip/psclip/tensor"
)

func Example() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "model.safetensors")

	w := tensor.From([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	err = safetensors.WriteFile(path, []safetensors.Tensor{
		safetensors.FromTensor("fc.weight", w),
		safetensors.New("fc.bias", []int{2}, []float32{0.5, -0.5}),
		safetensors.New("tokens", []int{4}, []uint16{17, 4, 0, 65535}),
	}, map[string]string{"format": "pt"})
	if err != nil {
		log.Fatal(err)
	}

	f, err := safetensors.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range f.Tensors {
		fmt.Println(t.Name, t.DType, t.Shape)
	}
	weight, err := f.Float32("fc.weight")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(weight, weight.Data)
	tok, _ := f.Tensor("tokens")
	ids, err := safetensors.Values[uint16](tok)
	fmt.Println(ids, err, f.Metadata["format"])
	// Output:
	// fc.bias F32 [2]
	// fc.weight F32 [2 3]
	// tokens U16 [4]
	// Tensor[2×3] [1 2 3 4 5 6]
	// [17 4 0 65535] <nil> pt
}
