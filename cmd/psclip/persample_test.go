package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/psclip/psclip/models"
	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/safetensors"
	"github.com/psclip/psclip/tensor"
)

// The written files, read back, reproduce norms.json by an independent
// computation: each sample's gradient from a batch of one in the plain mode.
func TestPerSampleFiles(t *testing.T) {
	dir := t.TempDir()
	if code, _, stderr := runCLI("persample", "--model", "alexnet-cifar", "--width-div", "16", "--classes", "10",
		"--batch", "3", "--seed", "5", "--out", dir); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var norms struct {
		Loss     []float64 `json:"loss"`
		GradNorm []float64 `json:"grad_norm"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "norms.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &norms); err != nil {
		t.Fatal(err)
	}
	batch, err := safetensors.ReadFile(filepath.Join(dir, "batch.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	x, err := batch.Float32("x")
	if err != nil {
		t.Fatal(err)
	}
	y, err := safetensors.Values[int32](batch.Tensors[slices.IndexFunc(batch.Tensors, func(t safetensors.Tensor) bool { return t.Name == "y" })])
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(x.Shape, []int{3, 3, 32, 32}) || len(y) != 3 || len(norms.GradNorm) != 3 || len(norms.Loss) != 3 {
		t.Fatalf("x %v, %d labels, %d norms, %d losses", x.Shape, len(y), len(norms.GradNorm), len(norms.Loss))
	}
	// A fresh model with the file's weights (the seed is not reused).
	m, err := models.NewAlexNet(models.AlexNetConfig{Classes: 10, WidthDiv: 16}, 999)
	if err != nil {
		t.Fatal(err)
	}
	f, err := safetensors.ReadFile(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Tensors) != len(m.Params()) {
		t.Fatalf("%d tensors in model.safetensors, want %d", len(f.Tensors), len(m.Params()))
	}
	for _, p := range m.Params() {
		v, err := f.Float32(p.Name)
		if err != nil {
			t.Fatal(err)
		}
		copy(p.Value.Data, v.Data)
	}
	per := x.Len() / 3
	for i := range 3 {
		ctx := &nn.Context{}
		xi := tensor.From(x.Data[i*per:(i+1)*per], 1, 3, 32, 32)
		losses, d, err := nn.CrossEntropy(m.Forward(ctx, xi), y[i:i+1])
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range m.Params() {
			p.Grad.Zero()
		}
		m.Backward(ctx, d)
		var sq float64
		for _, p := range m.Params() {
			for _, g := range p.Grad.Data {
				sq += float64(g) * float64(g)
			}
		}
		if got := math.Sqrt(sq); math.Abs(got-norms.GradNorm[i]) > 1e-4*got {
			t.Errorf("sample %d: norm %g in norms.json, recomputed %g", i, norms.GradNorm[i], got)
		}
		if math.Abs(float64(losses[0])-norms.Loss[i]) > 1e-5*norms.Loss[i] {
			t.Errorf("sample %d: loss %g in norms.json, recomputed %g", i, norms.Loss[i], losses[0])
		}
	}
}

func TestPerSampleGPT(t *testing.T) {
	dir := t.TempDir()
	if code, _, stderr := runCLI("persample", "--model", "gpt", "--n-layer", "1", "--n-head", "2", "--n-embd", "8",
		"--block-size", "5", "--vocab-size", "11", "--batch", "2", "--out", dir); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	batch, err := safetensors.ReadFile(filepath.Join(dir, "batch.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tn := range batch.Tensors {
		if tn.DType != safetensors.DTypeOf[int32]() || !slices.Equal(tn.Shape, []int{2, 5}) {
			t.Errorf("%s: %s %v, want int32 [2 5]", tn.Name, tn.DType, tn.Shape)
		}
	}
	f, err := safetensors.ReadFile(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(f.Tensors, func(t safetensors.Tensor) bool { return t.Name == "transformer.h.0.attn.c_attn.weight" }) {
		t.Error("no transformer.h.0.attn.c_attn.weight in model.safetensors")
	}
}

func TestPerSampleBadFlags(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"--model", "resnet", "--out", dir},
		{"--batch", "0", "--out", dir},
		{"--width-div", "0", "--out", dir},
		{"--model", "gpt", "--n-head", "3", "--out", dir},
		{"--batch", "2"},
	} {
		if code, _, stderr := runCLI(append([]string{"persample"}, args...)...); code != 2 {
			t.Errorf("%v: exit %d (%s), want 2", args, code, stderr)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("bad flags left %d files in --out", len(entries))
	}
}
