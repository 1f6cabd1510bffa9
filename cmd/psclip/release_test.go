package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/psclip/psclip/checkpoint"
	runlayer "github.com/psclip/psclip/run"
)

// perRecordKeys are the JSON keys of statistics computed from the private
// records outside the noised gradient, as psclip's trainers name them:
// training loss and accuracy, validation figures on a split of the
// training data, per-sample norms and their statistics, clipped, dropped
// and skipped counts, realised batch sizes and throughputs, tail
// estimates, detection statistics, noisy-label lists and the running sums
// a checkpoint keeps. It is the test's own list, independent of
// run.Released.
var perRecordKeys = []string{
	"train_loss", "train_acc", "val_loss", "val_acc", "final_val_loss", "loss", "grad_norm",
	"mean_sample_norm", "tail_index", "clipped_per_batch", "clipped_step_fraction", "mean_grad_norm",
	"skipped_steps", "dropped_samples", "clipped", "clippable", "clipped_fraction", "clipped_samples",
	"clipped_batches", "skipped_batches", "sequences", "img_per_s", "tokens_per_s", "sample_norms",
	"detection", "indices", "labels", "tail_norms", "loss_sum", "norm_sum", "correct", "seen",
	"p_hat", "sigma_hat", "gamma",
}

// privateWords are what a line of stdout or stderr of a private run must
// not hold: the training loss and accuracy, validation figures, clipped or
// dropped counts.
var privateWords = []string{"loss", "train ", "validation", "val acc", "clipped", "dropped", "skipped"}

// dpCommands are the commands that train with dp-sgd, each on its own
// small data, without a fixed seed: private runs. The GPT runs (one
// trained from scratch, one LoRA fine-tuning) checkpoint mid-run.
func dpCommands(t *testing.T) map[string][]string {
	t.Helper()
	idx := writeIDX(t, filepath.Join(t.TempDir(), "idx"), 200, 40)
	cifar := filepath.Join(t.TempDir(), "cifar")
	if code, _, stderr := runCLI("data", "synth-cifar", "--out", cifar, "--train", "120", "--test", "40", "--classes", "4"); code != 0 {
		t.Fatalf("data synth-cifar: %s", stderr)
	}
	corpus := writeCorpus(t, strings.Repeat("to be or not to be, that is the question.\n", 60))
	dp := []string{"--estimator", "dp-sgd", "--noise-multiplier", "1", "--delta", "1e-3"}
	return map[string][]string{
		"train images": append([]string{"train", "images", "--data", idx, "--model", "tanh-cnn", "--batch", "16", "--epochs", "2",
			"--clip", "0.5", "--micro-batch", "5", "--label-noise", "0.2"}, dp...),
		"train images --features scatter": append([]string{"train", "images", "--data", idx, "--features", "scatter", "--model", "scatter-linear",
			"--features-cache", t.TempDir(), "--batch", "16", "--epochs", "2", "--clip", "0.1", "--lr", "4", "--average-steps", "5"}, dp...),
		"train cifar": append([]string{"train", "cifar", "--data", cifar, "--width-div", "32", "--batch", "16", "--epochs", "1",
			"--clip", "1", "--augment", "cropflip"}, dp...),
		"train table": append([]string{"train", "table", "--data", writeTable(t, 300, 1), "--test", writeTable(t, 60, 2), "--target", "label",
			"--hidden", "8", "--batch", "32", "--epochs", "2", "--clip", "1", "--micro-batch", "10"}, dp...),
		"train gpt": append(append([]string{"train", "gpt", "--text", corpus, "--clip-mode", "per-sample", "--ps-estimator", "dp-sgd",
			"--clip", "1", "--noise-multiplier", "1", "--delta", "1e-3", "--ckpt-interval", "2"}, tinyGPTFlags...), "--steps", "5"),
		"train gpt --lora-rank": {"train", "gpt", "--text", corpus, "--init", filepath.Join("..", "..", "models", "testdata", "gpt2-tiny"),
			"--lora-rank", "2", "--lora-targets", "attn,proj", "--block-size", "8", "--micro-batch", "2", "--accum", "2", "--steps", "5", "--warmup", "1",
			"--eval-interval", "2", "--eval-iters", "2", "--clip-mode", "per-sample", "--ps-estimator", "dp-sgd",
			"--clip", "1", "--noise-multiplier", "1", "--delta", "1e-3", "--ckpt-interval", "2"},
		// Adaptive clipping: the clipping norm follows a quantile privately.
		"train table adaptive": append([]string{"train", "table", "--data", writeTable(t, 300, 1), "--target", "label",
			"--hidden", "8", "--batch", "32", "--epochs", "2", "--clip", "1", "--target-quantile", "0.5", "--count-noise", "2"}, dp...),
		"train images adaptive": append([]string{"train", "images", "--data", idx, "--model", "tanh-cnn", "--batch", "16", "--epochs", "2",
			"--clip", "0.5", "--target-quantile", "0.5"}, dp...),
		"train gpt adaptive": append(append([]string{"train", "gpt", "--text", corpus, "--clip-mode", "per-sample", "--ps-estimator", "dp-sgd",
			"--clip", "1", "--target-quantile", "0.7", "--count-noise", "2", "--noise-multiplier", "1", "--delta", "1e-3", "--ckpt-interval", "2"}, tinyGPTFlags...), "--steps", "5"),
	}
}

// TestDPReleasesOnlyWhatEpsilonCovers runs each command that trains with
// dp-sgd privately and scans everything it writes: stdout, stderr and
// every file of its run directory (the log, result.json, the checkpoint's
// trainer state). No JSON key holds a statistic of the private records
// (perRecordKeys), every key is one run.Released declares, no line of
// stdout or stderr names the training loss, accuracy, validation figures
// or clipped counts, and the log's first line and result.json say
// "private": true and give ε. The experiment commands refuse dp-sgd, so
// they release nothing.
func TestDPReleasesOnlyWhatEpsilonCovers(t *testing.T) {
	for name, args := range dpCommands(t) {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			code, stdout, stderr := runCLI(append(slices.Clone(args), "--out", out)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			scanRelease(t, out, stdout, stderr)
			if log, _ := os.ReadFile(filepath.Join(out, "log.jsonl")); strings.HasSuffix(name, "adaptive") && !strings.Contains(string(log), `"clip_norm":`) {
				t.Errorf("the log of adaptive clipping lacks its clipping norm, clip_norm")
			}
		})
	}
	for _, args := range [][]string{
		{"experiment", "images", "--methods", "dp-sgd"},
		{"experiment", "cifar", "--methods", "dp-sgd"},
		{"experiment", "gpt", "--ps-estimator", "dp-sgd", "--clip-modes", "per-sample"},
	} {
		if code, _, stderr := runCLI(append(args, "--out", t.TempDir())...); code != 2 || !strings.Contains(stderr, "dp-sgd") {
			t.Errorf("psclip %s: exit %d, want 2 naming dp-sgd: %s", strings.Join(args, " "), code, stderr)
		}
	}
}

// scanRelease fails the test for anything a private dp-sgd run wrote to
// stdout, stderr or its run directory out that ε does not cover, and
// unless the log's first line and result.json say "private": true and
// give ε.
func scanRelease(t *testing.T, out, stdout, stderr string) {
	t.Helper()
	for _, line := range strings.Split(stdout+stderr, "\n") {
		for _, w := range privateWords {
			if strings.Contains(strings.ToLower(line), w) {
				t.Errorf("output line names %q: %s", w, line)
			}
		}
	}
	if !strings.Contains(stdout, "private: true") {
		t.Errorf("stdout does not say the run is private:\n%s", stdout)
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		path := filepath.Join(out, e.Name())
		switch {
		case e.Name() == runlayer.LockFile:
		case strings.HasSuffix(e.Name(), ".safetensors"):
			l, err := checkpoint.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			scanJSON(t, e.Name()+" trainer state", []byte(l.Extra["state"]))
		case strings.HasSuffix(e.Name(), ".jsonl"):
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(bytes.NewReader(b))
			sc.Buffer(nil, 1<<24)
			for n := 0; sc.Scan(); n++ {
				scanJSON(t, e.Name(), sc.Bytes())
				if n == 0 && !bytes.Equal(sc.Bytes(), []byte(`{"private":true}`)) {
					t.Errorf("%s opens with %s, want {\"private\":true}", e.Name(), sc.Bytes())
				}
			}
		default:
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			scanJSON(t, e.Name(), b)
		}
	}
	var res struct {
		Private *bool    `json:"private"`
		Epsilon *float64 `json:"epsilon"`
	}
	b, err := os.ReadFile(filepath.Join(out, runlayer.ResultFile))
	if err == nil {
		err = json.Unmarshal(b, &res)
	}
	if err != nil || res.Private == nil || !*res.Private || res.Epsilon == nil || !(*res.Epsilon > 0) {
		t.Errorf("result.json (%v): private %v, ε %v; want true and ε > 0", err, res.Private, res.Epsilon)
	}
}

// scanJSON fails the test for every key of the JSON in b that is a
// statistic of the private records or that run.Released does not declare.
func scanJSON(t *testing.T, what string, b []byte) {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if slices.Contains(perRecordKeys, k) {
					t.Errorf("%s holds %q, a statistic of the private records", what, k)
				}
				rel, ok := runlayer.Released[k]
				if !ok {
					t.Errorf("%s holds %q, which run.Released does not declare", what, k)
				}
				if !rel.Whole {
					walk(e)
				}
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
}

// With --release-unprotected a dp-sgd run writes its training statistics,
// and says so everywhere: the log's first line and result.json say
// "private": false and why, every record that holds one lists it under
// "unprotected", and stdout lists the fields ε does not cover. Without it,
// --log-norms and --sampling shuffle (with a secret seed) are refused.
func TestDPReleaseUnprotected(t *testing.T) {
	args := dpCommands(t)["train images"]
	out := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := runCLI(append(slices.Clone(args), "--out", out, "--release-unprotected", "--log-norms")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "unprotected (ε does not cover them): ") || !strings.Contains(stdout, "train_acc") ||
		!strings.Contains(stdout, "private: false ("+runlayer.BecauseUnprotected+")") || !strings.Contains(stderr, "NOT private") {
		t.Errorf("stdout does not list the unprotected fields and say why the run is not private:\n%s\nstderr:\n%s", stdout, stderr)
	}
	b, err := os.ReadFile(filepath.Join(out, runlayer.LogFile))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	if want := `{"private":false,"not_private_because":["` + runlayer.BecauseUnprotected + `"]}`; string(lines[0]) != want {
		t.Errorf("log opens with %s, want %s", lines[0], want)
	}
	for _, l := range lines[1:] {
		var rec struct {
			Unprotected []string `json:"unprotected"`
		}
		if err := json.Unmarshal(l, &rec); err != nil || len(rec.Unprotected) == 0 {
			t.Errorf("a log line lists no unprotected fields (%v): %.200s", err, l)
		}
	}
	var res struct {
		Private     bool     `json:"private"`
		Because     []string `json:"not_private_because"`
		Unprotected []string `json:"unprotected"`
		TrainAcc    *float64 `json:"train_acc"`
	}
	if b, err = os.ReadFile(filepath.Join(out, runlayer.ResultFile)); err == nil {
		err = json.Unmarshal(b, &res)
	}
	if err != nil || res.Private || !slices.Equal(res.Because, []string{runlayer.BecauseUnprotected}) || !slices.Contains(res.Unprotected, "train_acc") || res.TrainAcc == nil {
		t.Errorf("result.json (%v): private %v because %v, unprotected %v, train_acc %v", err, res.Private, res.Because, res.Unprotected, res.TrainAcc)
	}
	for _, tc := range []struct {
		extra []string
		flag  string
	}{
		{[]string{"--log-norms"}, "--log-norms"},
		{[]string{"--sampling", "shuffle"}, "--sampling"},
	} {
		a := slices.DeleteFunc(slices.Clone(args), func(s string) bool { return s == "--micro-batch" || s == "5" })
		code, _, stderr := runCLI(append(append(a, "--out", t.TempDir()), tc.extra...)...)
		if code != 2 || !strings.Contains(stderr, tc.flag) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, want 2 naming %s in one line: %s", tc.extra, code, tc.flag, stderr)
		}
	}
}
