package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestExperimentCIFAR(t *testing.T) {
	data := writeCIFAR(t)
	out := filepath.Join(t.TempDir(), "exp")
	args := append([]string{"experiment", "cifar", "--data", data, "--out", out, "--seeds", "2", "--grid-betas", "1.5"}, tinyCIFARFlags...)
	if code, _, stderr := runCLI(args...); code != 0 {
		t.Fatalf("experiment cifar: exit %d: %s", code, stderr)
	}
	// The default thresholds, and the grid β ∈ {1.5} at the default α.
	for f, want := range map[string][]string{
		"table.md": {"| SGD |", "| Clip-SGD γ=3 |", "| PS-Clip-SGD γ=10 |", "| Increasing-PS-Clip-SGD α=3 β=2 |", "±"},
		"grid.md":  {"| Increasing-PS-Clip-SGD | – | 3 | 1.5 |"},
	} {
		b, err := os.ReadFile(filepath.Join(out, f))
		for _, w := range want {
			if err != nil || !strings.Contains(string(b), w) {
				t.Errorf("%s lacks %q (%v):\n%s", f, w, err, b)
			}
		}
	}
	for _, f := range []string{"results.json", "table.md", "grid.md", "accuracy.png", "accuracy.svg", "clipping.png", "clipping.svg"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
}

// TestExperimentCIFARAdaptive compares the parameter-free methods with a
// constant threshold of its own, and logs the norms of the per-sample runs.
func TestExperimentCIFARAdaptive(t *testing.T) {
	data := writeCIFAR(t)
	out := filepath.Join(t.TempDir(), "exp")
	args := append([]string{"experiment", "cifar", "--data", data, "--out", out, "--seeds", "1", "--grid-betas", "", "--log-norms",
		"--methods", "sgd,ps-clip-sgd=40,ps-clip-auto,ps-clip-quantile"}, tinyCIFARFlags...)
	if code, _, stderr := runCLI(args...); code != 0 {
		t.Fatalf("experiment cifar: exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(filepath.Join(out, "table.md"))
	for _, w := range []string{"| SGD |", "| PS-Clip-SGD γ=40 |", "| Auto-PS-Clip-SGD |", "| Quantile-PS-Clip-SGD q=0.5 |"} {
		if err != nil || !strings.Contains(string(b), w) {
			t.Errorf("table.md lacks %q (%v):\n%s", w, err, b)
		}
	}
	for dir, norms := range map[string]bool{"sgd": false, "ps-clip-sgd_gamma=40": true, "ps-clip-auto": true, "ps-clip-quantile": true} {
		b, err := os.ReadFile(filepath.Join(out, "runs", dir, "seed=1", "log.jsonl"))
		if err != nil || strings.Contains(string(b), `"sample_norms"`) != norms {
			t.Errorf("runs/%s: log.jsonl (%v) has sample_norms: %v, want %v", dir, err, !norms, norms)
		}
	}
}
