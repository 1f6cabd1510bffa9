package main

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/psclip/psclip/experiments/gpt"
	"github.com/psclip/psclip/models"
	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/tensor"
)

// train gpt --init fine-tunes a GPT-2-layout checkpoint, whose architecture
// the model takes; a model flag that contradicts it is refused.
func TestTrainGPTInit(t *testing.T) {
	ckpt := filepath.Join("..", "..", "models", "testdata", "gpt2-tiny")
	corpus := writeCorpus(t, strings.Repeat("to be or not to be, that is the question.\n", 60))
	out := filepath.Join(t.TempDir(), "run")
	args := []string{"train", "gpt", "--text", corpus, "--init", ckpt, "--micro-batch", "2", "--accum", "2", "--steps", "2", "--warmup", "1",
		"--eval-interval", "2", "--eval-iters", "2", "--clip-mode", "per-sample"}
	code, stdout, stderr := runCLI(append(args, "--out", out)...)
	if code != 0 || !strings.Contains(stdout, "final validation loss") {
		t.Fatalf("train gpt --init: exit %d, %q, %q", code, stdout, stderr)
	}
	for _, c := range []struct{ args []string }{
		{[]string{"--n-layer", "3"}},
		{[]string{"--block-size", "17"}},
		{[]string{"--init", t.TempDir()}},
	} {
		code, _, stderr := runCLI(append(append(args, "--out", filepath.Join(t.TempDir(), "run")), c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.args[0]) {
			t.Errorf("train gpt --init … %s: exit %d, %q; want 2 naming %s", strings.Join(c.args, " "), code, stderr, c.args[0])
		}
	}
}

// export gpt2 writes a fine-tuned run as a GPT-2 directory holding the
// checkpoint's weights, which --init reads back.
func TestExportGPT2(t *testing.T) {
	ckpt := filepath.Join("..", "..", "models", "testdata", "gpt2-tiny")
	corpus := writeCorpus(t, strings.Repeat("to be or not to be, that is the question.\n", 60))
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	args := []string{"train", "gpt", "--text", corpus, "--init", ckpt, "--block-size", "8", "--micro-batch", "2", "--accum", "1", "--steps", "2", "--warmup", "1",
		"--eval-interval", "2", "--eval-iters", "1"}
	if code, _, stderr := runCLI(append(args, "--out", run)...); code != 0 {
		t.Fatalf("train gpt --init: exit %d, %q", code, stderr)
	}
	hf := filepath.Join(dir, "hf")
	if code, stdout, stderr := runCLI("export", "gpt2", "--ckpt", run, "--out", hf); code != 0 || !strings.Contains(stdout, "model.safetensors") {
		t.Fatalf("export gpt2: exit %d, %q, %q", code, stdout, stderr)
	}
	m, err := gpt.LoadModel(run)
	if err != nil {
		t.Fatal(err)
	}
	back, err := models.ReadGPT2(hf)
	if err != nil {
		t.Fatal(err)
	}
	if back.Config().BlockSize != 8 || back.Config().NLayer != 2 {
		t.Errorf("exported config %+v", back.Config())
	}
	for i, p := range back.Params() {
		if !slices.Equal(p.Value.Data, m.Params()[i].Value.Data) {
			t.Errorf("%s differs from the checkpoint's", p.Name)
		}
	}
	// The export fine-tunes again.
	if code, _, stderr := runCLI(append(args, "--init", hf, "--out", filepath.Join(dir, "run2"))...); code != 0 {
		t.Fatalf("train gpt --init EXPORT: exit %d, %q", code, stderr)
	}
	// A GPT without biases has no GPT-2 layout.
	plain := filepath.Join(dir, "plain")
	if code, _, stderr := runCLI(append([]string{"train", "gpt", "--text", corpus, "--out", plain}, tinyGPTFlags...)...); code != 0 {
		t.Fatalf("train gpt: exit %d, %q", code, stderr)
	}
	code, _, stderr := runCLI("export", "gpt2", "--ckpt", plain, "--out", filepath.Join(dir, "hf2"))
	if code != 2 || !strings.Contains(stderr, "no biases") {
		t.Errorf("export gpt2 of a GPT without biases: exit %d, %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "hf2")); err == nil {
		t.Error("a refused export left its output directory")
	}
}

// train gpt --lora-rank fine-tunes a GPT-2-layout checkpoint by LoRA,
// sample generates from the adapted model, and export gpt2 writes the
// merged model, whose logits are the adapted
// model's; bad LoRA flags are refused with one line and exit status 2
// before anything is written.
func TestTrainGPTLoRA(t *testing.T) {
	ckpt := filepath.Join("..", "..", "models", "testdata", "gpt2-tiny")
	corpus := writeCorpus(t, strings.Repeat("to be or not to be, that is the question.\n", 60))
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	args := []string{"train", "gpt", "--text", corpus, "--init", ckpt, "--block-size", "8", "--micro-batch", "2", "--accum", "2", "--steps", "3", "--warmup", "1",
		"--eval-interval", "3", "--eval-iters", "1", "--clip-mode", "per-sample", "--lr", "0.05"}
	lora := []string{"--lora-rank", "4", "--lora-targets", "attn,fc", "--freeze", "transformer.h.1.*"}
	if code, stdout, stderr := runCLI(append(append(args, lora...), "--out", run)...); code != 0 || !strings.Contains(stdout, "final validation loss") {
		t.Fatalf("train gpt --lora-rank: exit %d, %q, %q", code, stdout, stderr)
	}
	m, err := gpt.LoadModel(run)
	if err != nil {
		t.Fatal(err)
	}
	c := m.Config
	if c.LoRARank != 4 || c.LoRAAlpha != 4 || !slices.Equal(c.LoRATargets, []string{"attn", "fc"}) || !slices.Equal(c.Freeze, []string{"transformer.h.1.*"}) {
		t.Errorf("configuration: rank %d, α %v, targets %v, freeze %v", c.LoRARank, c.LoRAAlpha, c.LoRATargets, c.Freeze)
	}
	var trained []string
	for _, p := range nn.Trainable(m.Params()) {
		trained = append(trained, p.Name)
	}
	if !slices.Equal(trained, []string{"transformer.h.0.attn.c_attn.lora_A.weight", "transformer.h.0.attn.c_attn.lora_B.weight",
		"transformer.h.0.mlp.c_fc.lora_A.weight", "transformer.h.0.mlp.c_fc.lora_B.weight"}) {
		t.Errorf("trained %v", trained)
	}
	if code, stdout, stderr := runCLI("sample", "--ckpt", run, "--tokens", "5", "--prompt", "to be"); code != 0 || !strings.HasPrefix(stdout, "to be") {
		t.Errorf("sample of a LoRA run: exit %d, %q, %q", code, stdout, stderr)
	}
	hf := filepath.Join(dir, "hf")
	if code, stdout, stderr := runCLI("export", "gpt2", "--ckpt", run, "--out", hf); code != 0 || !strings.Contains(stdout, "merged") {
		t.Fatalf("export gpt2: exit %d, %q, %q", code, stdout, stderr)
	}
	merged, err := models.ReadGPT2(hf)
	if err != nil {
		t.Fatal(err)
	}
	x := tensor.New(2, 8)
	for i := range x.Data {
		x.Data[i] = float32(i % 20)
	}
	want := m.Forward(&nn.Context{}, x).Data
	d, moved := 0.0, 0.0
	for i, v := range merged.Forward(&nn.Context{}, x).Data {
		d = max(d, math.Abs(float64(v-want[i])))
	}
	base, err := models.ReadGPT2(ckpt)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range base.Forward(&nn.Context{}, x).Data {
		moved = max(moved, math.Abs(float64(v-want[i])))
	}
	if d > 1e-5 || moved < 1e-3 {
		t.Errorf("the exported model's logits differ from the adapted model's by %g (from the base model's by %g)", d, moved)
	}

	for _, c := range []struct {
		flags []string
		flag  string
	}{
		{[]string{"--lora-rank", "0"}, "--lora-rank"},
		{[]string{"--lora-rank", "33"}, "--lora-rank"},
		{[]string{"--lora-rank", "2", "--lora-targets", "attn,q"}, "--lora-targets"},
		{[]string{"--lora-rank", "2", "--lora-alpha", "0"}, "--lora-alpha"},
		{[]string{"--lora-alpha", "2"}, "--lora-alpha"},
		{[]string{"--lora-targets", "fc"}, "--lora-targets"},
		{[]string{"--freeze", "transformer.h.7.*"}, "--freeze"},
		{[]string{"--freeze", "*"}, "--freeze"},
	} {
		out := filepath.Join(t.TempDir(), "run")
		code, _, stderr := runCLI(append(append(args, c.flags...), "--out", out)...)
		if code != 2 || !strings.Contains(stderr, c.flag) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("train gpt … %s: exit %d, %q; want 2 and one line naming %s", strings.Join(c.flags, " "), code, stderr, c.flag)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("train gpt … %s: a refused run left its output directory", strings.Join(c.flags, " "))
		}
	}
	plain := []string{"train", "gpt", "--text", corpus, "--lora-rank", "2", "--out", filepath.Join(t.TempDir(), "run")}
	if code, _, stderr := runCLI(append(plain, tinyGPTFlags...)...); code != 2 || !strings.Contains(stderr, "--lora-rank needs --init") {
		t.Errorf("--lora-rank without --init: exit %d, %q", code, stderr)
	}
}
