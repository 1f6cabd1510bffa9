package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// tinyGPTFlags make a run that takes well under a second.
var tinyGPTFlags = []string{"--n-layer", "1", "--n-head", "2", "--n-embd", "16", "--block-size", "16",
	"--micro-batch", "2", "--accum", "2", "--steps", "3", "--warmup", "1", "--eval-interval", "2", "--eval-iters", "2"}

// writeCorpus writes a small text file and returns its path.
func writeCorpus(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "corpus.txt")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTrainGPTAndSample(t *testing.T) {
	corpus := writeCorpus(t, strings.Repeat("to be or not to be, that is the question.\n", 60))
	out := filepath.Join(t.TempDir(), "run")
	args := append([]string{"train", "gpt", "--text", corpus, "--out", out, "--clip-mode", "micro-batch"}, tinyGPTFlags...)
	if code, _, stderr := runCLI(args...); code != 0 {
		t.Fatalf("train gpt: exit %d: %s", code, stderr)
	}
	for _, f := range []string{"log.jsonl", "ckpt.safetensors"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	// Resuming a finished run is a no-op that succeeds.
	if code, _, stderr := runCLI(append(args, "--resume")...); code != 0 {
		t.Fatalf("train gpt --resume: exit %d: %s", code, stderr)
	}
	// ... but not with a changed setting that alters the trajectory.
	if code, _, stderr := runCLI(append(args, "--resume", "--lr", "0.01")...); code != 2 || !strings.Contains(stderr, "lr") {
		t.Errorf("resume with another --lr: exit %d, %q; want 2 naming lr", code, stderr)
	}
	if code, _, stderr := runCLI("sample", "--ckpt", out, "--tokens", "20", "--prompt", "to "); code != 0 {
		t.Fatalf("sample: exit %d: %s", code, stderr)
	}
}

// The adaptive per-sample thresholds train, and --log-norms writes the
// per-sample norms "psclip tail --from" reads.
func TestTrainGPTAdaptive(t *testing.T) {
	corpus := writeCorpus(t, strings.Repeat("to be or not to be, that is the question.\n", 60))
	dir := t.TempDir()
	for _, ps := range [][]string{
		{"--ps-estimator", "ps-clip-auto", "--log-norms"},
		{"--alpha", "auto", "--beta", "auto", "--window", "300"},
		{"--ps-estimator", "ps-clip-quantile", "--clip", "0", "--target-quantile", "0.8"},
		{"--ps-estimator", "auto-clip", "--auto-clip-r", "0.1"},
	} {
		out := filepath.Join(dir, strings.Join(ps, ""))
		args := append([]string{"train", "gpt", "--text", corpus, "--out", out, "--clip-mode", "per-sample"}, tinyGPTFlags...)
		// 256 sequences in 4 steps: ps-clip-auto's estimate starts at the last.
		args = append(append(args, "--micro-batch", "8", "--accum", "8", "--steps", "4"), ps...)
		code, stdout, stderr := runCLI(args...)
		if code != 0 || !strings.Contains(stdout, "of sequences by") {
			t.Fatalf("train gpt %s: exit %d, %q, %q", strings.Join(ps, " "), code, stdout, stderr)
		}
	}
	log := filepath.Join(dir, "--ps-estimatorps-clip-auto--log-norms", "log.jsonl")
	code, table, stderr := runCLI("tail", "--from", log, "--rows", "1", "--out", filepath.Join(dir, "tail"))
	if code != 0 || !strings.Contains(table, "p̂") {
		t.Errorf("tail --from %s: exit %d, %q\n%s", log, code, stderr, table)
	}
}

func TestExperimentGPT(t *testing.T) {
	corpus := writeCorpus(t, strings.Repeat("all work and no play makes jack a dull boy\n", 60))
	out := filepath.Join(t.TempDir(), "exp")
	args := append([]string{"experiment", "gpt", "--text", corpus, "--out", out, "--lrs", "1e-3,2e-3", "--seeds", "1"}, tinyGPTFlags...)
	if code, _, stderr := runCLI(args...); code != 0 {
		t.Fatalf("experiment gpt: exit %d: %s", code, stderr)
	}
	for _, f := range []string{"results.json", "results.csv", "final_val_loss.md", "train_time.md", "val_loss.png", "val_loss.svg"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
}

// experiment gpt's per-sample runs take train gpt's threshold flags, and its
// outputs name the method.
func TestExperimentGPTPerSampleThresholds(t *testing.T) {
	corpus := writeCorpus(t, strings.Repeat("all work and no play makes jack a dull boy\n", 60))
	dir := t.TempDir()
	for _, tc := range []struct {
		flags []string
		label string
	}{
		{[]string{"--alpha", "auto", "--beta", "auto"}, "Increasing-PS-Clip-SGD α=auto β=auto (per-sample)"},
		{[]string{"--ps-estimator", "ps-clip-auto", "--window", "256"}, "Auto-PS-Clip-SGD window=256 (per-sample)"},
		{[]string{"--alpha", "auto", "--beta", "1.5"}, "Increasing-PS-Clip-SGD α=auto β=1.5 (per-sample)"},
		{[]string{"--ps-estimator", "ps-clip-quantile", "--target-quantile", "0.8"}, "Quantile-PS-Clip-SGD q=0.8 γ0=1 (per-sample)"},
		{[]string{"--ps-estimator", "auto-clip", "--auto-clip-r", "0.1"}, "Auto-Clip r=0.1 (per-sample)"},
		{nil, "PS-Clip-SGD (per-sample)"},
	} {
		out := filepath.Join(dir, "exp"+strings.Join(tc.flags, "")) // apart from the others: an experiment needs a new or empty directory
		args := append([]string{"experiment", "gpt", "--text", corpus, "--out", out, "--lrs", "1e-3", "--seeds", "1", "--clip-modes", "global,per-sample"}, tinyGPTFlags...)
		args = append(args, tc.flags...)
		code, stdout, stderr := runCLI(args...)
		if code != 0 || !strings.Contains(stdout, "| Clip-SGD (global) |") || !strings.Contains(stdout, "|  | "+tc.label+" |") {
			t.Fatalf("psclip %s: exit %d, stderr %q, want the method %q in\n%s", strings.Join(args, " "), code, stderr, tc.label, stdout)
		}
		csv, err := os.ReadFile(filepath.Join(out, "results.csv"))
		if err != nil || !strings.Contains(string(csv), ",per-sample,") || !strings.HasSuffix(string(csv), ","+tc.label+"\n") {
			t.Errorf("%s: results.csv (%v):\n%s", strings.Join(tc.flags, " "), err, csv)
		}
	}
}

// Every bad flag value is a usage error (exit 2) on one line naming the
// problem, and leaves no output directory behind.
func TestGPTBadFlags(t *testing.T) {
	dir := t.TempDir()
	corpus := writeCorpus(t, strings.Repeat("abcdefgh\n", 40))
	empty := writeCorpus(t, "")
	file := writeCorpus(t, "not a directory")
	noData := filepath.Join(dir, "nodata")
	if err := os.Mkdir(noData, 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	train := func(extra ...string) []string {
		return append([]string{"train", "gpt", "--text", corpus, "--out", out, "--n-layer", "1", "--n-head", "2", "--n-embd", "8", "--block-size", "8"}, extra...)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{train("--n-embd", "10", "--n-head", "4"), "--n-head = 4, want a divisor of the embedding width 10"},
		{train("--n-layer", "0"), "--n-layer"},
		{train("--micro-batch", "0"), "--micro-batch"},
		{train("--accum", "-1"), "--accum"},
		{train("--steps", "0"), "--steps"},
		{train("--lr", "-1"), "--lr"},
		{train("--lr", "1e-3", "--min-lr", "1e-2"), "--min-lr"},
		{train("--warmup", "5000"), "--warmup"},
		{train("--dropout", "1.5"), "--dropout"},
		{train("--beta2", "1"), "--beta2"},
		{train("--eps", "0"), "--eps"},
		{train("--weight-decay", "-1"), "--weight-decay"},
		{train("--clip", "0"), "--clip"},
		{train("--clip-mode", "per-sample", "--clip", "-2"), "--clip"},
		{train("--clip-mode", "sometimes"), "--clip-mode"},
		{train("--clip-mode", "per-sample", "--ps-estimator", "ps-clip-fast"), "--ps-estimator"},
		{train("--ps-estimator", "ps-clip-auto"), "--ps-estimator does not apply to --clip-mode global"},
		{train("--alpha", "auto", "--beta", "auto"), "--alpha does not apply to --clip-mode global"},
		{train("--clip-mode", "per-sample", "--alpha", "often", "--beta", "2"), "-alpha"},
		{train("--clip-mode", "per-sample", "--alpha", "-1", "--beta", "2"), "--alpha"},
		{train("--clip-mode", "per-sample", "--alpha", "1"), "--alpha does not apply to --clip-mode per-sample"},
		{train("--clip-mode", "per-sample", "--alpha", "auto", "--beta", "auto", "--clip", "2"), "--clip"},
		{train("--clip-mode", "per-sample", "--ps-estimator", "ps-clip-auto", "--window", "10"), "window"},
		{train("--clip-mode", "per-sample", "--window", "1000"), "--window"},
		{train("--clip-mode", "per-sample", "--ps-estimator", "auto-clip", "--target-quantile", "0.5"), "--target-quantile"},
		{train("--clip-mode", "per-sample", "--ps-estimator", "ps-clip-quantile", "--quantile-rate", "-1"), "quantile"},
		{train("--log-norms"), "--log-norms"},
		{train("--persample-memory", "1.35x"), "--persample-memory needs --clip-mode per-sample"},
		{train("--clip-mode", "per-sample", "--persample-memory", "lots"), "-persample-memory"},
		{train("--clip-convention", "sum"), "--clip-convention"},
		{[]string{"experiment", "gpt", "--clip-convention", "nanoGPT", "--out", out}, "--clip-convention"},
		{train("--eval-iters", "0"), "--eval-iters"},
		{train("--vocab", "word"), "--vocab"},
		{train("--block-size", "1000"), "--block-size"},
		{train("--vocab-size", "3"), "--vocab-size"},
		{train("--preset", "gpt5"), "--preset"},
		{train("--preset", "gpt2-124m"), "--data"},
		{train("--resume"), "--resume"},
		{train("--data", noData), "exclusive"},
		{[]string{"train", "gpt", "--data", noData, "--out", out}, "train.bin"},
		{[]string{"train", "gpt", "--data", noData, "--vocab", "char", "--out", out}, "--vocab"},
		{[]string{"train", "gpt", "--text", empty, "--out", out}, "empty"},
		{[]string{"train", "gpt", "--text", filepath.Join(dir, "missing.txt"), "--out", out}, "missing.txt"},
		{[]string{"train", "gpt", "--text", corpus, "--out", file, "--block-size", "8"}, "not a directory"},
		{[]string{"train", "gpt", "stray"}, "unexpected argument"},
		{[]string{"sample", "--ckpt", filepath.Join(dir, "none")}, "no checkpoint"},
		{[]string{"sample", "--tokens", "0"}, "--tokens"},
		{[]string{"sample", "--temperature", "0"}, "--temperature"},
		{[]string{"sample", "--top-k", "-1"}, "--top-k"},
		{[]string{"sample", "--prompt", ""}, "--prompt"},
		{[]string{"experiment", "gpt", "--lrs", "fast", "--out", out}, "--lrs"},
		{[]string{"experiment", "gpt", "--lrs", "1e-3,-1", "--out", out}, "--lrs = -1"},
		{[]string{"experiment", "gpt", "--seeds", "0", "--out", out}, "--seeds"},
		{[]string{"experiment", "gpt", "--clip-modes", "global,often", "--out", out}, "--clip-modes"},
		{[]string{"experiment", "gpt", "--clip", "0", "--out", out}, "--clip"},
		{[]string{"experiment", "gpt", "--alpha", "auto", "--beta", "auto", "--out", out}, "--alpha applies to none of --clip-modes global,micro-batch"},
		{[]string{"experiment", "gpt", "--ps-estimator", "auto-clip", "--clip-modes", "global,none", "--out", out}, "--ps-estimator applies to none"},
		{[]string{"experiment", "gpt", "--clip-modes", "per-sample", "--alpha", "autox", "--beta", "2", "--out", out}, "-alpha"},
		{[]string{"experiment", "gpt", "--clip-modes", "per-sample", "--ps-estimator", "ps-clip-auto", "--alpha", "auto", "--out", out}, "--alpha"},
		{[]string{"experiment", "gpt", "--clip-modes", "per-sample", "--ps-estimator", "ps-clip-fast", "--out", out}, "--ps-estimator"},
		{[]string{"experiment", "gpt", "--clip-modes", "global,per-sample", "--window", "1000", "--out", out}, "--window"},
		{[]string{"experiment", "gpt", "--clip-modes", "per-sample", "--alpha", "auto", "--beta", "-1", "--out", out}, "--beta"},
		{[]string{"experiment", "gpt", "--text", corpus, "--block-size", "1000", "--out", out}, "--block-size"},
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

// The exit status says whose mistake it was, by the error's type (issue
// 13): a resume with other settings is a usage mistake (2), a damaged
// checkpoint a failure (1), although both come from the same library call.
// The binary runs as a separate process.
func TestResumeExitStatus(t *testing.T) {
	corpus := writeCorpus(t, strings.Repeat("all work and no play makes jack a dull boy\n", 60))
	out := filepath.Join(t.TempDir(), "out")
	args := append([]string{"train", "gpt", "--text", corpus, "--out", out}, tinyGPTFlags...)
	if r := psclip(t, "", nil, args...); r.code != 0 {
		t.Fatalf("psclip %s: exit %d: %s", strings.Join(args, " "), r.code, r.stderr)
	}
	r := psclip(t, "", nil, append(args, "--resume", "--lr", "2e-3", "--min-lr", "2e-4")...)
	if r.code != 2 || !strings.Contains(r.stderr, `lr=0.002 (checkpoint 0.001)`) {
		t.Errorf("resume with another --lr: exit %d, %q; want 2 naming lr", r.code, r.stderr)
	}
	for _, name := range []string{"ckpt.safetensors", "ckpt.prev.safetensors"} {
		if err := os.WriteFile(filepath.Join(out, name), []byte("not a checkpoint"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r = psclip(t, "", nil, append(args, "--resume")...)
	if r.code != 1 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "ckpt") {
		t.Errorf("resume from a damaged checkpoint: exit %d, %q; want 1 and one line naming the checkpoint", r.code, r.stderr)
	}
}

// TestTrainGPTDPSGD trains with dp-sgd on records of 17 tokens: with a
// fixed noise seed stderr says the run is not private, stdout and
// result.json give ε at δ for one record, N and q, and every evaluation
// logs its ε.
func TestTrainGPTDPSGD(t *testing.T) {
	corpus := writeCorpus(t, strings.Repeat("to be or not to be, that is the question.\n", 60))
	out := filepath.Join(t.TempDir(), "run")
	args := append([]string{"train", "gpt", "--text", corpus, "--out", out, "--clip-mode", "per-sample", "--ps-estimator", "dp-sgd",
		"--clip", "1", "--noise-multiplier", "1.2", "--noise-seed", "5", "--delta", "1e-3"}, tinyGPTFlags...)
	code, stdout, stderr := runCLI(args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "NOT private") {
		t.Errorf("stderr does not say that the fixed noise seed is not private:\n%s", stderr)
	}
	var res struct {
		Epsilon    float64 `json:"epsilon"`
		Delta      float64 `json:"delta"`
		Records    int     `json:"records"`
		SampleRate float64 `json:"sample_rate"`
	}
	b, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err == nil {
		err = json.Unmarshal(b, &res)
	}
	// 2,520 characters, 2,268 of them training text: 133 records.
	if err != nil || res.Delta != 1e-3 || res.Records != 133 || res.SampleRate != 4.0/133 || !(res.Epsilon > 0) {
		t.Fatalf("result.json (%v): ε %v δ %v, %d records at q %v; want 133 at 4/133", err, res.Epsilon, res.Delta, res.Records, res.SampleRate)
	}
	if want := fmt.Sprintf("privacy: ε = %.4g at δ = 0.001 for one record of 17 tokens (N = 133, q = 0.03008", res.Epsilon); !strings.Contains(stdout, want) {
		t.Errorf("stdout does not say %q:\n%s", want, stdout)
	}
	// --target-epsilon picks σ, says which, and the run spends at most
	// the target, within Opacus' tolerance 0.01.
	target := append(slices.DeleteFunc(slices.Clone(args), func(a string) bool { return a == "--noise-multiplier" || a == "1.2" }), "--target-epsilon", "2", "--restart")
	code, stdout, stderr = runCLI(target...)
	if code != 0 {
		t.Fatalf("--target-epsilon 2: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "noise multiplier σ = ") {
		t.Errorf("--target-epsilon 2: stderr names no σ:\n%s", stderr)
	}
	if b, err = os.ReadFile(filepath.Join(out, "result.json")); err == nil {
		err = json.Unmarshal(b, &res)
	}
	if err != nil || !(res.Epsilon <= 2 && res.Epsilon > 1.99) {
		t.Errorf("--target-epsilon 2 (%v): spent %v", err, res.Epsilon)
	}
}
