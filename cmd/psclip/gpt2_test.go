package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/psclip/psclip/experiments/gpt"
	"github.com/psclip/psclip/models"
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
