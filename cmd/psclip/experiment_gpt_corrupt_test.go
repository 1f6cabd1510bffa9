package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/psclip/psclip/experiments/gpt"
)

// TestExperimentGPTCorrupt runs a miniature of the corruption study from
// the command line: the flags reach the study, and results.json records
// the settings, a paired entry per method and its provenance.
func TestExperimentGPTCorrupt(t *testing.T) {
	corpus := writeCorpus(t, strings.Repeat("all work and no play makes jack a dull boy\n", 60))
	out := filepath.Join(t.TempDir(), "study")
	args := []string{"experiment", "gpt-corrupt", "--text", corpus, "--out", out,
		"--n-layer", "1", "--n-head", "2", "--n-embd", "16", "--block-size", "16", "--micro-batch", "2", "--accum", "4",
		"--steps", "3", "--warmup", "1", "--eval-interval", "3", "--eval-iters", "4",
		"--settings", "0,0.25:clustered:repeat", "--methods", "global,mb-clip,ps-clip", "--seeds", "2",
		"--gamma-grid", "0.5,2", "--gamma-at", "0.25:scattered:shuffle", "--gamma-seeds", "9", "--ks", "1,8", "--k-at", "0.25:clustered"}
	code, stdout, stderr := runCLI(args...)
	if code != 0 {
		t.Fatalf("psclip %s: exit %d: %s", strings.Join(args, " "), code, stderr)
	}
	if !strings.Contains(stdout, "F=0.25 clustered repeat") || !strings.Contains(stdout, "K sweep at F=0.25 clustered random") {
		t.Errorf("stdout lacks the tables:\n%s", stdout)
	}
	b, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res gpt.StudyResults
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	s := res.Study
	if s.Base.Steps != 3 || s.Base.MinLR != s.Base.LR/10 || len(s.Seeds) != 2 || s.GammaSeeds[0] != 9 || s.KAt.CorruptKind != gpt.KindRandom ||
		s.Settings[1] != (gpt.Corruption{Corrupt: 0.25, CorruptLayout: gpt.LayoutClustered, CorruptKind: gpt.KindRepeat}) {
		t.Errorf("study %+v", s)
	}
	paired := 0
	for _, c := range res.Cells {
		if c.Paired != nil {
			paired++
		}
	}
	// main grid: 2 settings × (mb-clip, ps-clip); the sweep at K = 1 and 8: mb-clip-mean.
	if paired != 4+2 || res.Gamma == nil || len(res.Provenance.Command) == 0 || res.Provenance.Finished.IsZero() {
		t.Errorf("%d paired cells, γ choice %v, provenance %+v", paired, res.Gamma, res.Provenance)
	}
}

// TestTrainGPTCorruptResume checks that a corrupted run's resume with
// another corruption is refused with exit 2, and with the same one goes on.
func TestTrainGPTCorruptResume(t *testing.T) {
	corpus := writeCorpus(t, strings.Repeat("all work and no play makes jack a dull boy\n", 60))
	out := filepath.Join(t.TempDir(), "run")
	base := append([]string{"train", "gpt", "--text", corpus, "--out", out}, tinyGPTFlags...)
	if code, _, stderr := runCLI(append(base, "--corrupt", "0.5", "--corrupt-kind", "shuffle")...); code != 0 {
		t.Fatalf("train gpt --corrupt: exit %d: %s", code, stderr)
	}
	for _, flags := range [][]string{
		{"--corrupt", "0.25", "--corrupt-kind", "shuffle"},
		{"--corrupt", "0.5", "--corrupt-kind", "repeat"},
		{"--corrupt", "0.5", "--corrupt-kind", "shuffle", "--corrupt-layout", "clustered"},
		{},
	} {
		args := append(append(append([]string{}, base...), "--resume"), flags...)
		if code, _, stderr := runCLI(args...); code != 2 || strings.Count(stderr, "\n") != 1 {
			t.Errorf("resume with %v: exit %d, stderr %q; want exit 2 and one line", flags, code, stderr)
		}
	}
}

// Issue 34: a corruption study resumed with other settings is refused
// before anything is trained or written, naming what changed; with its own
// settings it resumes.
func TestExperimentGPTCorruptResumeOtherSettings(t *testing.T) {
	corpus := writeCorpus(t, strings.Repeat("all work and no play makes jack a dull boy\n", 60))
	out := filepath.Join(t.TempDir(), "study")
	args := []string{"experiment", "gpt-corrupt", "--text", corpus, "--out", out,
		"--n-layer", "1", "--n-head", "2", "--n-embd", "16", "--block-size", "16", "--micro-batch", "2", "--accum", "4",
		"--steps", "2", "--warmup", "1", "--eval-interval", "2", "--eval-iters", "4", "--methods", "global", "--seeds", "1", "--ks", ""}
	if code, _, stderr := runCLI(append(slices.Clone(args), "--settings", "0,0.25:clustered:repeat")...); code != 0 {
		t.Fatalf("experiment gpt-corrupt: exit %d: %s", code, stderr)
	}
	results, _ := os.ReadFile(filepath.Join(out, "results.json"))
	code, _, stderr := runCLI(append(slices.Clone(args), "--settings", "0,0.5:clustered:repeat", "--resume")...)
	if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "--resume: the experiment in "+out+" has another configuration: settings=") {
		t.Errorf("--resume with other settings: exit %d, stderr %q; want 2 and the settings named", code, stderr)
	}
	if after, _ := os.ReadFile(filepath.Join(out, "results.json")); string(after) != string(results) {
		t.Error("the refused resume rewrote results.json")
	}
	if _, err := os.Stat(filepath.Join(out, "runs", "F=0.5-clustered-repeat")); err == nil {
		t.Error("the refused resume trained the new setting")
	}
	if code, _, stderr := runCLI(append(slices.Clone(args), "--settings", "0,0.25:clustered:repeat", "--resume")...); code != 0 {
		t.Errorf("--resume with the same settings: exit %d: %s", code, stderr)
	}
}
