package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/psclip/psclip/data/cifar"
)

// writeCIFAR writes a tiny synthetic CIFAR-100-format set and returns its
// directory.
func writeCIFAR(t *testing.T) string {
	t.Helper()
	s, err := cifar.Synthesize(cifar.SynthConfig{Train: 120, Test: 30, Classes: 4, Seed: 2, Noise: 24, Outliers: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "data")
	if err := cifar.WriteDir(dir, s.Train, s.Test); err != nil {
		t.Fatal(err)
	}
	return dir
}

// tinyCIFARFlags make a run of well under a second.
var tinyCIFARFlags = []string{"--width-div", "32", "--batch", "16", "--epochs", "1", "--augment", "cropflip"}

func TestTrainCIFAR(t *testing.T) {
	data := writeCIFAR(t)
	out := filepath.Join(t.TempDir(), "run")
	args := append([]string{"train", "cifar", "--data", data, "--out", out, "--estimator", "ps-clip-sgd", "--alpha", "1", "--beta", "2"}, tinyCIFARFlags...)
	if code, _, stderr := runCLI(args...); code != 0 {
		t.Fatalf("train cifar: exit %d: %s", code, stderr)
	}
	for _, f := range []string{"log.jsonl", "ckpt.safetensors", "result.json"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(out, "result.json")); err != nil || !strings.Contains(string(b), `"beta": 2`) || !strings.Contains(string(b), `"test_acc"`) {
		t.Errorf("result.json (%v):\n%s", err, b)
	}
	// Resuming a finished run succeeds; so does extending it by an epoch.
	if code, _, stderr := runCLI(append(args, "--resume", "--epochs", "2")...); code != 0 {
		t.Fatalf("train cifar --resume --epochs 2: exit %d: %s", code, stderr)
	}
	// A setting that alters the trajectory may not change.
	if code, _, stderr := runCLI(append(args, "--resume", "--lr", "0.1")...); code != 2 || !strings.Contains(stderr, "lr") {
		t.Errorf("resume with another --lr: exit %d, %q; want 2 naming lr", code, stderr)
	}
}

// TestTrainCIFARAuto trains with the automatic threshold from the shared
// estimator flags, logging the norms, and reads them back with psclip tail;
// the run resumes with its estimator's state.
func TestTrainCIFARAuto(t *testing.T) {
	data := writeCIFAR(t)
	out := filepath.Join(t.TempDir(), "run")
	// 3 epochs of 7 steps: 336 norms, past the tail estimate's minimum 256.
	args := []string{"train", "cifar", "--data", data, "--out", out, "--estimator", "ps-clip-sgd", "--alpha", "auto", "--beta", "auto",
		"--window", "1024", "--log-norms", "--width-div", "32", "--batch", "16", "--epochs", "3", "--augment", "none"}
	if code, _, stderr := runCLI(args...); code != 0 {
		t.Fatalf("train cifar: exit %d: %s", code, stderr)
	}
	if b, err := os.ReadFile(filepath.Join(out, "result.json")); err != nil || !strings.Contains(string(b), `"auto_alpha": true`) || !strings.Contains(string(b), `"p_hat": `) {
		t.Errorf("result.json (%v): want auto_alpha and the epochs' p_hat:\n%.1500s", err, b)
	}
	log := filepath.Join(out, "log.jsonl")
	if b, err := os.ReadFile(log); err != nil || strings.Count(string(b), `"sample_norms"`) != 21 {
		t.Errorf("log.jsonl (%v): want 21 lines of norms:\n%.1000s", err, b)
	}
	traced := filepath.Join(t.TempDir(), "tail")
	if code, _, stderr := runCLI("tail", "--from", log, "--window", "1024", "--out", traced, "--json"); code != 0 {
		t.Fatalf("psclip tail --from %s: exit %d: %s", log, code, stderr)
	}
	if b, err := os.ReadFile(filepath.Join(traced, "tail.json")); err != nil || !strings.Contains(string(b), `"steps": 21`) {
		t.Errorf("tail.json (%v): want 21 steps traced:\n%.500s", err, b)
	}
	if code, _, stderr := runCLI(append(args, "--resume", "--epochs", "4")...); code != 0 {
		t.Errorf("train cifar --resume --epochs 4: exit %d: %s", code, stderr)
	}
}

// Every bad flag value or data directory is a usage error (exit 2) on one
// line naming the problem, and leaves no output directory behind.
func TestCIFARBadFlags(t *testing.T) {
	dir := t.TempDir()
	data := writeCIFAR(t)
	truncated := filepath.Join(dir, "truncated")
	if err := os.MkdirAll(truncated, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"train.bin", "test.bin", "fine_label_names.txt"} {
		b, err := os.ReadFile(filepath.Join(data, f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "train.bin" {
			b = b[:len(b)-100]
		}
		if err := os.WriteFile(filepath.Join(truncated, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	train := func(extra ...string) []string {
		return append([]string{"train", "cifar", "--data", data, "--out", out}, extra...)
	}
	exp := func(extra ...string) []string {
		return append([]string{"experiment", "cifar", "--data", data, "--out", out}, extra...)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{train("--estimator", "adam"), "--estimator"},
		{train("--estimator", "clip-sgd", "--clip", "0"), "--clip"},
		{train("--estimator", "ps-clip-sgd", "--clip", "-1"), "--clip"},
		{train("--alpha", "15", "--beta", "0"), "--alpha does not apply"},
		{train("--alpha", "15", "--beta", "-2"), "--beta"},
		{train("--alpha", "0", "--beta", "2"), "--alpha"},
		{train("--estimator", "sgd", "--alpha", "1", "--beta", "2"), "--alpha does not apply to --estimator sgd"},
		{train("--batch", "0"), "--batch"},
		{train("--epochs", "0"), "--epochs"},
		{train("--width-div", "0"), "--width-div"},
		{train("--lr", "-0.1"), "--lr"},
		{train("--momentum", "1"), "--momentum"},
		{train("--augment", "mixup"), "--augment"},
		{train("--max-bad-steps", "-1"), "--max-bad-steps"},
		{train("--resume"), "--resume"},
		{train("--alpha", "auto"), "--alpha does not apply to --estimator ps-clip-sgd (PS-Clip-SGD γ=45)"},
		{train("--alpha", "x", "--beta", "2"), "auto"},
		{train("--estimator", "ps-clip-auto", "--alpha", "auto", "--beta", "2"), "--alpha does not apply to --estimator ps-clip-auto"},
		{train("--window", "512"), "--window"},
		{train("--alpha", "auto", "--beta", "auto", "--window", "100"), "window"},
		{train("--target-quantile", "0.7"), "--target-quantile"},
		{train("--estimator", "ps-clip-quantile", "--target-quantile", "1"), "--target-quantile = 1"},
		{train("--estimator", "ps-clip-quantile", "--clip", "-1"), "--clip"},
		{train("--estimator", "auto-clip", "--auto-clip-r", "-1"), "auto-clip"},
		{train("--estimator", "clip-sgd", "--log-norms"), "--log-norms"},
		{train("--estimator", "clip-sgd", "--persample-memory", "1.2x"), "--persample-memory"},
		{train("--persample-memory", "1.2"), "-persample-memory"},
		{train("--persample-memory", "-3MiB"), "-persample-memory"},
		{train("stray"), "unexpected argument"},
		{[]string{"train", "cifar", "--out", out}, "--data is required"},
		{[]string{"train", "cifar", "--data", filepath.Join(dir, "missing"), "--out", out}, "missing"},
		{[]string{"train", "cifar", "--data", truncated, "--out", out}, "train.bin"},
		{[]string{"train", "cifar", "--data", data, "--out", file}, "not a directory"},
		{exp("--seeds", "0"), "--seeds"},
		{exp("--methods", "sgd,adam"), "--methods"},
		{exp("--methods", "sgd=3"), "--methods"},
		{exp("--clip-sgd-gamma", "0"), "--clip"},
		{exp("--ps-gamma", "-3"), "--ps-gamma = -3"},
		{exp("--inc-beta", "0"), "--inc-beta = 0"},
		{exp("--grid-betas", "2,x"), "--grid-betas"},
		{exp("--grid-alphas", "0"), "--grid-alphas = 0"},
		{exp("--epochs", "0"), "--epochs"},
		{[]string{"experiment", "cifar", "--data", truncated, "--out", out}, "offset"},
		{[]string{"experiment", "cifar", "--data", data, "--out", file}, "not a directory"},
	} {
		code, stdout, stderr := runCLI(tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 || stdout != "" {
			t.Errorf("psclip %s: exit %d, stderr %q; want exit 2 and one line naming %q", strings.Join(tc.args, " "), code, stderr, tc.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("psclip %s left %s behind", strings.Join(tc.args, " "), out)
		}
	}
}
