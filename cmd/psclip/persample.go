package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"

	"github.com/psclip/psclip/internal/atomicfile"
	"github.com/psclip/psclip/models"
	"github.com/psclip/psclip/nn"
	runlayer "github.com/psclip/psclip/run"
	"github.com/psclip/psclip/safetensors"
	"github.com/psclip/psclip/tensor"
	"github.com/psclip/psclip/train"
)

func init() {
	register(&command{
		name:  "persample",
		short: "write a model, a random batch and its per-sample losses and gradient norms, for comparison with another framework",
		run:   runPerSample,
	})
}

// modelFlags selects and sizes a model: --model and the flags of each model.
type modelFlags struct {
	name    string
	alexnet models.AlexNetConfig
	gpt     models.GPTConfig
}

func defineModelFlags(fs *flag.FlagSet, m *modelFlags) {
	m.alexnet = models.DefaultAlexNet
	m.gpt = models.GPTConfig{NLayer: 4, NHead: 4, NEmbd: 128, BlockSize: 64, VocabSize: 256}
	fs.StringVar(&m.name, "model", "alexnet-cifar", "model: alexnet-cifar, tanh-cnn (Tramèr & Boneh's CNN for 28×28 grey images) or gpt")
	fs.IntVar(&m.alexnet.WidthDiv, "width-div", m.alexnet.WidthDiv, "alexnet-cifar: divide every channel and hidden width by this")
	fs.IntVar(&m.alexnet.Classes, "classes", m.alexnet.Classes, "alexnet-cifar: number of classes")
	fs.IntVar(&m.gpt.NLayer, "n-layer", m.gpt.NLayer, "gpt: transformer blocks")
	fs.IntVar(&m.gpt.NHead, "n-head", m.gpt.NHead, "gpt: attention heads")
	fs.IntVar(&m.gpt.NEmbd, "n-embd", m.gpt.NEmbd, "gpt: embedding width")
	fs.IntVar(&m.gpt.BlockSize, "block-size", m.gpt.BlockSize, "gpt: sequence length")
	fs.IntVar(&m.gpt.VocabSize, "vocab-size", m.gpt.VocabSize, "gpt: vocabulary size")
	fs.BoolVar(&m.gpt.Bias, "bias", m.gpt.Bias, "gpt: biases in linear and layer-norm layers")
	fs.BoolVar(&m.gpt.ExactGELU, "exact-gelu", m.gpt.ExactGELU, "gpt: the erf GELU of today's nanoGPT (torch.nn.GELU()) instead of GPT-2's tanh approximation")
}

// modelOwnFlags lists each model's flags: a flag of the model not selected
// is refused rather than ignored.
var modelOwnFlags = map[string][]string{
	"alexnet-cifar": {"width-div", "classes"},
	"gpt":           {"n-layer", "n-head", "n-embd", "block-size", "vocab-size", "bias", "exact-gelu"},
}

// check refuses a flag given for the model --model does not select.
func (m *modelFlags) check(fs *flag.FlagSet) error {
	for model, flags := range modelOwnFlags {
		if model == m.name {
			continue
		}
		for _, name := range flags {
			if flagSet(fs, name) {
				return usagef("--%s applies to --model %s, not %s", name, model, m.name)
			}
		}
	}
	return nil
}

// build returns the model and a random batch of b samples for it, all drawn
// from seed: images x [b,3,32,32] ~ N(0,1) (alexnet-cifar) or grey pixels
// x [b,1,28,28] ~ U[0,1) (tanh-cnn) with uniform labels, or uniform token
// ids [b,T] with uniform next-token targets.
func (m *modelFlags) build(b int, seed uint64) (nn.Layer, *tensor.Tensor, []int32, error) {
	rng := rand.New(rand.NewPCG(seed, 0x6261746368)) // "batch"
	switch m.name {
	case "alexnet-cifar":
		model, err := models.NewAlexNet(m.alexnet, seed)
		if err != nil {
			return nil, nil, nil, usage(err)
		}
		x := tensor.New(b, 3, 32, 32)
		for i := range x.Data {
			x.Data[i] = float32(rng.NormFloat64())
		}
		y := make([]int32, b)
		for i := range y {
			y[i] = int32(rng.IntN(m.alexnet.Classes))
		}
		return model, x, y, nil
	case "tanh-cnn":
		model, err := models.NewTanhCNN(models.DefaultTanhCNN, seed)
		if err != nil {
			return nil, nil, nil, usage(err)
		}
		x := tensor.New(b, 1, 28, 28)
		for i := range x.Data {
			x.Data[i] = float32(rng.Float64())
		}
		y := make([]int32, b)
		for i := range y {
			y[i] = int32(rng.IntN(models.DefaultTanhCNN.Classes))
		}
		return model, x, y, nil
	case "gpt":
		model, err := models.NewGPT(m.gpt, seed)
		if err != nil {
			return nil, nil, nil, usage(err)
		}
		t := m.gpt.BlockSize
		x := tensor.New(b, t)
		y := make([]int32, b*t)
		for i := range x.Data {
			x.Data[i] = float32(rng.IntN(m.gpt.VocabSize))
			y[i] = int32(rng.IntN(m.gpt.VocabSize))
		}
		return model, x, y, nil
	}
	return nil, nil, nil, usagef("--model %q: want alexnet-cifar, tanh-cnn or gpt", m.name)
}

// trainingBytes is the memory a plain step of the model takes on
// micro-batches of b samples with optStates optimizer copies of the
// parameters (the models' TrainingBytes), and input the bytes of one
// sample's input and targets.
func (m *modelFlags) trainingBytes(b, optStates int) (need, input float64) {
	switch m.name {
	case "alexnet-cifar":
		return m.alexnet.TrainingBytes(b, optStates), 3*32*32*4 + 4
	case "tanh-cnn":
		return models.DefaultTanhCNN.TrainingBytes(b, optStates), 28*28*4 + 4
	case "gpt":
		return m.gpt.TrainingBytes(b, optStates), float64(m.gpt.BlockSize) * 8
	}
	return 0, 0
}

// checkMemory refuses, before anything is allocated, a model and batches
// that cannot fit in memory: micro-batches of b samples, accum of them
// held as input, optStates optimizer copies of the parameters and extra
// bytes more (a per-sample memory budget).
func (m *modelFlags) checkMemory(b, accum, optStates int, extra int64) error {
	need, input := m.trainingBytes(b, optStates)
	return runlayer.CheckMemory("the model and its batches", need+float64(b)*float64(accum)*input+float64(max(extra, 0)))
}

func runPerSample(fs *flag.FlagSet, args []string) error {
	var m modelFlags
	defineModelFlags(fs, &m)
	b := fs.Int("batch", 8, "samples in the batch")
	seed := fs.Uint64("seed", 1, "seed of the initialisation and the batch")
	out := fs.String("out", "", "output `directory`: new or empty (created if missing)")
	force := fs.Bool("force", false, forceUsage)
	if err := parse(fs, args); err != nil {
		return err
	}
	if *b < 1 {
		return usagef("--batch %d: need at least 1", *b)
	}
	if err := m.check(fs); err != nil {
		return err
	}
	if *out == "" {
		return usagef("--out is required")
	}
	if err := checkOutDir(*out, *force); err != nil {
		return err
	}
	if err := m.checkMemory(*b, 1, 0, 0); err != nil {
		return err
	}
	model, x, y, err := m.build(*b, *seed)
	if err != nil {
		return err
	}
	losses, norms, err := train.PerSampleNorms(model, nn.CrossEntropy, x, y)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	var params []safetensors.Tensor
	seen := map[*nn.Param]bool{}
	for _, p := range model.Params() {
		if !seen[p] { // a tied weight is saved once, under its first name
			seen[p] = true
			params = append(params, safetensors.FromTensor(p.Name, p.Value))
		}
	}
	if err := safetensors.WriteFile(filepath.Join(*out, "model.safetensors"), params, map[string]string{"format": "pt"}); err != nil {
		return err
	}
	var xs safetensors.Tensor
	if m.name == "gpt" {
		ids := make([]int32, x.Len())
		for i, v := range x.Data {
			ids[i] = int32(v)
		}
		xs = safetensors.New("x", x.Shape, ids)
	} else {
		xs = safetensors.FromTensor("x", x)
	}
	yShape := []int{*b}
	if m.name == "gpt" {
		yShape = slices.Clone(x.Shape)
	}
	ys := safetensors.New("y", yShape, y)
	if err := safetensors.WriteFile(filepath.Join(*out, "batch.safetensors"), []safetensors.Tensor{xs, ys}, nil); err != nil {
		return err
	}
	j, err := json.Marshal(struct {
		Loss     []float32 `json:"loss"`
		GradNorm []float64 `json:"grad_norm"`
	}{losses, norms})
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(*out, "norms.json"), append(j, '\n')); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %d samples, mean loss %.4f, mean gradient norm %.4f; wrote model.safetensors, batch.safetensors and norms.json to %s\n",
		m.name, *b, mean32(losses), mean(norms), *out)
	return nil
}

func mean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func mean32(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x)
	}
	return s / float64(len(v))
}
