package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/psclip/psclip/checkpoint"
)

// TestDivergedRunStops drives each trainer into non-finite gradients the
// way a user does, with an absurd learning rate: after the first update
// every loss overflows. With --max-bad-steps 3 the run must stop after
// step 4 (one good step, three bad) with exit status 1, a one-line error
// saying why, and a checkpoint of step 4 in which no weight or optimizer
// state is NaN or infinite: the bad steps changed nothing. With
// --max-bad-steps 0 it must run to the end and report the skipped steps.
func TestDivergedRunStops(t *testing.T) {
	cifarArgs := []string{"train", "cifar", "--data", cifarData(t), "--width-div", "32", "--batch", "32", "--epochs", "2",
		"--augment", "none", "--lr", "1e30"}
	gptArgs := []string{"train", "gpt", "--text", textCorpus(t), "--n-layer", "1", "--n-embd", "16", "--n-head", "2",
		"--block-size", "16", "--micro-batch", "4", "--accum", "2", "--steps", "12", "--warmup", "1", "--eval-iters", "1",
		"--lr", "1e30"}
	for _, tc := range []struct {
		name  string
		args  []string
		total int // steps of the whole run
	}{
		{"cifar/sgd", append(cifarArgs, "--estimator", "sgd"), 18},
		{"cifar/clip-sgd", append(cifarArgs, "--estimator", "clip-sgd"), 18},
		{"cifar/ps-clip-sgd", append(cifarArgs, "--estimator", "ps-clip-sgd"), 18},
		{"gpt/global", append(gptArgs, "--clip-mode", "global"), 12},
		{"gpt/micro-batch", append(gptArgs, "--clip-mode", "micro-batch"), 12},
		{"gpt/per-sample", append(gptArgs, "--clip-mode", "per-sample"), 12},
		{"gpt/none", append(gptArgs, "--clip-mode", "none"), 12},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			r := psclip(t, "", nil, append(tc.args, "--out", dir, "--max-bad-steps", "3")...)
			if r.code != 1 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "3 consecutive steps had a non-finite gradient or only non-finite samples (last: step 4); stopped") {
				t.Fatalf("exit %d, stderr %q; want 1 and one line about 3 consecutive bad steps", r.code, r.stderr)
			}
			l, err := checkpoint.Load(filepath.Join(dir, ckptName))
			if err != nil {
				t.Fatal(err)
			}
			if l.Step != 4 || l.Fallback != nil {
				t.Errorf("checkpoint at step %d (fallback %v), want the latest one, at step 4", l.Step, l.Fallback)
			}
			for name, x := range l.Model {
				allFinite(t, name, x.Data)
			}
			for name, x := range l.Optimizer.Tensors {
				allFinite(t, "optimizer."+name, x.Data)
			}
			if _, err := os.Stat(filepath.Join(dir, "result.json")); err == nil {
				t.Error("a stopped run wrote result.json")
			}
			if strings.HasPrefix(tc.name, "gpt/") {
				recs := logRecords(t, filepath.Join(dir, "log.jsonl"))
				skipped := 0
				for _, rec := range recs {
					if rec["skipped"] == true {
						skipped++
					}
				}
				if skipped != 3 {
					t.Errorf("log.jsonl shows %d skipped steps, want 3", skipped)
				}
			}

			// No limit: the run goes on to the end and reports the bad steps.
			r = mustRun(t, nil, append(tc.args, "--out", t.TempDir(), "--max-bad-steps", "0")...)
			if want := fmt.Sprintf("%d skipped steps", tc.total-1); !strings.Contains(r.stdout, want) {
				t.Errorf("stdout %q does not report %q", r.stdout, want)
			}
		})
	}
}

// allFinite fails the test if x holds a NaN or an infinity.
func allFinite(t *testing.T, what string, x []float32) {
	t.Helper()
	for i, v := range x {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			t.Fatalf("%s[%d] = %v", what, i, v)
		}
	}
}
