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
