package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// experiment gpt refuses a --clip that no run reads, as train gpt does, and
// takes it when a clip mode reads it.
func TestExperimentGPTClipFlag(t *testing.T) {
	corpus := writeCorpus(t, strings.Repeat("all work and no play makes jack a dull boy\n", 60))
	dir := t.TempDir()
	for i, tc := range []struct {
		flags []string
		want  string // "" for a run
	}{
		{[]string{"--clip-modes", "per-sample", "--ps-estimator", "ps-clip-auto"}, "--clip applies to none of --clip-modes per-sample: per-sample mode's Auto-PS-Clip-SGD"},
		{[]string{"--clip-modes", "per-sample", "--alpha", "auto", "--beta", "auto"}, "Increasing-PS-Clip-SGD α=auto β=auto"},
		{[]string{"--clip-modes", "per-sample", "--alpha", "2", "--beta", "1.5"}, "--clip applies to none"},
		{[]string{"--clip-modes", "none,per-sample", "--ps-estimator", "auto-clip"}, "--clip applies to none of --clip-modes none,per-sample"},
		{[]string{"--clip-modes", "none"}, "--clip applies to none of --clip-modes none"},
		{[]string{"--clip-modes", "global,per-sample", "--ps-estimator", "ps-clip-auto", "--window", "256"}, ""},
		{[]string{"--clip-modes", "per-sample", "--ps-estimator", "ps-clip-quantile"}, ""}, // its initial threshold
		{[]string{"--clip-modes", "per-sample"}, ""},
	} {
		out := filepath.Join(dir, "out", string(rune('a'+i)))
		args := append([]string{"experiment", "gpt", "--text", corpus, "--out", out, "--lrs", "1e-3", "--seeds", "1", "--clip", "0.5"}, tinyGPTFlags...)
		args = append(args, tc.flags...)
		code, stdout, stderr := runCLI(args...)
		switch {
		case tc.want == "" && code != 0:
			t.Errorf("psclip %s: exit %d: %s", strings.Join(args, " "), code, stderr)
		case tc.want != "" && (code != 2 || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 || stdout != ""):
			t.Errorf("psclip %s: exit %d, stderr %q; want exit 2 and one line naming %q", strings.Join(args, " "), code, stderr, tc.want)
		}
	}
	// Without an explicit --clip, the automatic thresholds run.
	out := filepath.Join(dir, "auto")
	args := append([]string{"experiment", "gpt", "--text", corpus, "--out", out, "--lrs", "1e-3", "--seeds", "1",
		"--clip-modes", "per-sample", "--ps-estimator", "ps-clip-auto"}, tinyGPTFlags...)
	if code, _, stderr := runCLI(args...); code != 0 {
		t.Errorf("psclip %s: exit %d: %s", strings.Join(args, " "), code, stderr)
	}
}

// Issue 34: experiment gpt's help offers only the estimators it trains: not
// dp-sgd, which it refuses.
func TestExperimentGPTHelpOffersWhatItTrains(t *testing.T) {
	r := psclip(t, "", nil, "experiment", "gpt", "-h")
	if help := r.stdout + r.stderr; !strings.Contains(help, "ps-clip-quantile") || strings.Contains(help, "dp-sgd") {
		t.Errorf("experiment gpt -h:\n%s", r.stdout+r.stderr)
	}
}
