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
	// --from rewrites the tables from results.json alone, to the same.
	table, err := os.ReadFile(filepath.Join(out, "table.md"))
	if err != nil || !strings.Contains(string(table), "− SGD, points [95 % CI]") {
		t.Fatalf("table.md (%v) lacks the paired comparison:\n%s", err, table)
	}
	if err := os.Remove(filepath.Join(out, "table.md")); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := runCLI("experiment", "cifar", "--from", filepath.Join(out, "results.json")); code != 0 || !strings.Contains(stdout, "Rewrote") {
		t.Fatalf("experiment cifar --from: exit %d: %s%s", code, stdout, stderr)
	}
	if again, err := os.ReadFile(filepath.Join(out, "table.md")); err != nil || string(again) != string(table) {
		t.Errorf("table.md from --from (%v):\n%s\nwant\n%s", err, again, table)
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

// TestExperimentCIFARAutoFlags runs Increasing-PS-Clip-SGD with α = σ̂ and
// β = p̂ and the adaptive methods with settings of their own; each method
// takes the settings it reads, and the grid stays at the default α.
func TestExperimentCIFARAutoFlags(t *testing.T) {
	data := writeCIFAR(t)
	out := filepath.Join(t.TempDir(), "exp")
	args := append([]string{"experiment", "cifar", "--data", data, "--out", out, "--seeds", "1", "--grid-betas", "1.5",
		"--methods", "inc-ps-clip-sgd,ps-clip-auto,ps-clip-quantile,auto-clip", "--inc-alpha", "auto", "--inc-beta", "auto",
		"--window", "256", "--target-quantile", "0.7", "--quantile-rate", "0.1", "--auto-clip-r", "0.2"}, tinyCIFARFlags...)
	code, stdout, stderr := runCLI(args...)
	if code != 0 {
		t.Fatalf("experiment cifar: exit %d: %s", code, stderr)
	}
	for f, want := range map[string][]string{
		"table.md": {"| Increasing-PS-Clip-SGD α=auto β=auto window=256 |", "| Auto-PS-Clip-SGD window=256 |",
			"| Quantile-PS-Clip-SGD q=0.7 rate=0.1 |", "| Auto-Clip r=0.2 |"},
		"grid.md": {"| Increasing-PS-Clip-SGD | – | 3 | 1.5 |", "| Auto-PS-Clip-SGD | – | auto | auto |",
			"| Increasing-PS-Clip-SGD | – | auto | auto |", "| Quantile-PS-Clip-SGD | auto | – | – |"},
		"results.json": {`"auto_alpha": true`, `"window": 256`, `"target_quantile": 0.7`, `"auto_clip_r": 0.2`},
		"runs/ps-clip-sgd_alpha=auto_beta=auto_window=256/seed=1/result.json": {`"test_acc"`},
		"runs/ps-clip-quantile_q=0.7_rate=0.1/seed=1/result.json":             {`"test_acc"`},
	} {
		b, err := os.ReadFile(filepath.Join(out, f))
		for _, w := range want {
			if err != nil || !strings.Contains(string(b), w) {
				t.Errorf("%s lacks %q (%v):\n%s", f, w, err, b)
			}
		}
	}
	if !strings.Contains(stdout, "Increasing-PS-Clip-SGD α=auto β=auto") {
		t.Errorf("stdout does not name the automatic method:\n%s", stdout)
	}
}

// Each of --inc-alpha and --inc-beta takes auto on its own; the adaptive
// thresholds' settings are refused when no method reads them, and a
// bad value names its flag.
func TestExperimentCIFARThresholdFlags(t *testing.T) {
	data := writeCIFAR(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	exp := func(extra ...string) []string {
		return append([]string{"experiment", "cifar", "--data", data, "--out", out, "--seeds", "1", "--grid-betas", ""}, extra...)
	}
	for _, tc := range []struct {
		args []string
		want string // "" for a run
	}{
		{exp("--methods", "inc-ps-clip-sgd", "--inc-alpha", "auto", "--inc-beta", "1.5"), "| Increasing-PS-Clip-SGD α=auto β=1.5 |"},
		{exp("--methods", "inc-ps-clip-sgd", "--inc-alpha", "2", "--inc-beta", "auto", "--window", "300"), "| Increasing-PS-Clip-SGD α=2 β=auto window=300 |"},
		{exp("--methods", "sgd,inc-ps-clip-sgd", "--inc-alpha", "0.5"), "| Increasing-PS-Clip-SGD α=0.5 β=2 |"},
		{exp("--inc-alpha", "often"), "-inc-alpha"},
		{exp("--inc-alpha", "0"), "--inc-alpha = 0"},
		{exp("--inc-beta", "-1"), "--inc-beta = -1"},
		{exp("--window", "512"), "--window applies to none of --methods"},
		{exp("--methods", "inc-ps-clip-sgd", "--window", "512"), "--window applies to none"},
		{exp("--methods", "ps-clip-auto", "--window", "10"), "window"},
		{exp("--methods", "sgd,auto-clip", "--target-quantile", "0.7"), "--target-quantile applies to none"},
		{exp("--methods", "ps-clip-auto", "--quantile-rate", "0.1"), "--quantile-rate applies to none"},
		{exp("--methods", "ps-clip-quantile", "--auto-clip-r", "0.1"), "--auto-clip-r applies to none"},
		{exp("--methods", "ps-clip-quantile", "--target-quantile", "1"), "--target-quantile = 1"},
		{exp("--methods", "auto-clip", "--auto-clip-r", "-1"), "auto-clip"},
		{exp("--grid-betas", "2", "--grid-alphas", "auto"), "--grid-alphas"},
	} {
		code, stdout, stderr := runCLI(append(tc.args, tinyCIFARFlags...)...)
		if tc.want[0] == '|' {
			b, err := os.ReadFile(filepath.Join(out, "table.md"))
			if code != 0 || err != nil || !strings.Contains(string(b), tc.want) {
				t.Errorf("psclip %s: exit %d, %s%v; want a table with %q:\n%s", strings.Join(tc.args, " "), code, stderr, err, tc.want, b)
			}
			if err := os.RemoveAll(out); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if code != 2 || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 || stdout != "" {
			t.Errorf("psclip %s: exit %d, stderr %q; want exit 2 and one line naming %q", strings.Join(tc.args, " "), code, stderr, tc.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("psclip %s left %s behind", strings.Join(tc.args, " "), out)
		}
	}
}

// Issue 34: the increasing-threshold grid varies inc-ps-clip-sgd's α and
// β: --methods without it trains no grid, unless one is asked for.
func TestExperimentCIFARMethodsAlone(t *testing.T) {
	data := writeCIFAR(t)
	out := filepath.Join(t.TempDir(), "exp")
	args := append([]string{"experiment", "cifar", "--data", data, "--out", out, "--seeds", "1", "--methods", "sgd"}, tinyCIFARFlags...)
	code, stdout, stderr := runCLI(args...)
	if code != 0 {
		t.Fatalf("experiment cifar --methods sgd: exit %d: %s", code, stderr)
	}
	if runs := dirEntries(t, filepath.Join(out, "runs")); len(runs) != 1 || runs[0] != "sgd" {
		t.Errorf("--methods sgd trained %v, want sgd alone", runs)
	}
	if _, err := os.Stat(filepath.Join(out, "grid.md")); err == nil || strings.Contains(stdout, "grid.md") {
		t.Errorf("--methods sgd wrote or named a grid table (%v):\n%s", err, stdout)
	}
}
