package main

import (
	"bytes"
	"os"
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

// An experiment run in parts (a share of its clip modes each) and gathered
// with --gather has the results of the experiment run whole, and trains
// nothing again; --gather is refused with --restart and for a directory
// that is not one of its parts.
func TestExperimentGather(t *testing.T) {
	corpus := writeCorpus(t, strings.Repeat("all work and no play makes jack a dull boy\n", 60))
	dir := t.TempDir()
	exp := func(out string, flags ...string) (int, string, string) {
		args := append([]string{"experiment", "gpt", "--text", corpus, "--out", filepath.Join(dir, out), "--lrs", "1e-3", "--seeds", "1"}, tinyGPTFlags...)
		return runCLI(append(args, flags...)...)
	}
	for _, c := range [][]string{{"whole", "--clip-modes", "global,micro-batch"}, {"a", "--clip-modes", "global"}, {"b", "--clip-modes", "micro-batch"}} {
		if code, _, stderr := exp(c[0], c[1:]...); code != 0 {
			t.Fatalf("%s: exit %d: %s", c[0], code, stderr)
		}
	}
	code, stdout, stderr := exp("all", "--clip-modes", "global,micro-batch", "--gather", filepath.Join(dir, "a")+","+filepath.Join(dir, "b"))
	if code != 0 || !strings.Contains(stderr, "gathered 1 runs from") {
		t.Fatalf("gather: exit %d: %s", code, stderr)
	}
	// The runs were copied, not trained again: their results (which record
	// the training time) are the parts' byte for byte.
	results, _ := filepath.Glob(filepath.Join(dir, "all", "runs", "*", "*", "*", "result.json"))
	for _, r := range results {
		rel, _ := filepath.Rel(filepath.Join(dir, "all"), r)
		a, _ := os.ReadFile(filepath.Join(dir, "a", rel))
		b, _ := os.ReadFile(filepath.Join(dir, "b", rel))
		if got, _ := os.ReadFile(r); !bytes.Equal(got, a) && !bytes.Equal(got, b) {
			t.Errorf("%s is not its part's", rel)
		}
	}
	if len(results) != 2 {
		t.Errorf("gathered %d finished runs, want 2", len(results))
	}
	_, whole, _ := exp("whole", "--clip-modes", "global,micro-batch", "--resume")
	if strings.ReplaceAll(stdout, filepath.Join(dir, "all"), filepath.Join(dir, "whole")) != whole {
		t.Errorf("gathered results\n%s\nwant the whole experiment's\n%s", stdout, whole)
	}
	for _, c := range []struct {
		flags []string
		code  int
	}{
		{[]string{"--gather", filepath.Join(dir, "a"), "--restart"}, 2},
		{[]string{"--gather", corpus}, 1},
	} {
		code, stdout, stderr := exp("refused", append([]string{"--clip-modes", "global"}, c.flags...)...)
		if code != c.code || stdout != "" || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d and one line", c.flags, code, stdout, stderr, c.code)
		}
	}
}
