package main

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// eval gpt on the training's own evaluation batches (seed 1337, the same
// number of batches) reproduces the final val_loss of the training log, and
// other draws give other, nearby estimates.
func TestEvalGPT(t *testing.T) {
	corpus := writeCorpus(t, strings.Repeat("to be or not to be, that is the question.\n", 60))
	out := filepath.Join(t.TempDir(), "run")
	args := append([]string{"train", "gpt", "--text", corpus, "--out", out, "--exact-gelu"}, tinyGPTFlags...)
	if code, _, stderr := runCLI(args...); code != 0 {
		t.Fatalf("train gpt: exit %d: %s", code, stderr)
	}
	want := lastValLoss(t, filepath.Join(out, "log.jsonl"))

	code, stdout, stderr := runCLI("eval", "gpt", "--ckpt", out, "--text", corpus, "--eval-iters", "2", "--seeds", "1337,7", "--json")
	if code != 0 {
		t.Fatalf("eval gpt: exit %d: %s", code, stderr)
	}
	var res evalResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("%v in %s", err, stdout)
	}
	if res.Step != 3 || len(res.Losses) != 4 {
		t.Fatalf("step %d, %d losses; want step 3 and 2 splits × 2 draws", res.Step, len(res.Losses))
	}
	if l := res.Losses[0]; l.Split != "val" || l.Seed != 1337 || math.Abs(l.Loss-want) > 1e-12*want {
		t.Errorf("first estimate %+v, want val at seed 1337 = the log's %v", l, want)
	}
	if l := res.Losses[1]; l.Loss == res.Losses[0].Loss || math.Abs(l.Loss-want) > 0.5 {
		t.Errorf("seed 7 gives %v: want another estimate near %v", l.Loss, want)
	}

	// A different text has a different vocabulary: scoring it would be
	// meaningless.
	other := writeCorpus(t, strings.Repeat("xyz uvw\n", 100))
	wider := writeCorpus(t, strings.Repeat("ABCDEFGHIJKLMNOPQRSTUVWXYZ abcdefghijklmnopqrstuvwxyz 0123456789!?\n", 40))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--text", other}, "vocabulary"},
		// Issue 26: the message names the real problem, not a flag eval
		// gpt does not have; a split listed twice and --corpus-bytes
		// beside --text, which nothing would read, are refused.
		{[]string{"--text", wider}, "the corpus does not fit the checkpoint: the model's vocabulary size is"},
		{[]string{"--text", corpus, "--splits", "val,train,val"}, `--splits "val,train,val": split val is listed twice`},
		{[]string{"--text", corpus, "--corpus-bytes", "1000"}, "--corpus-bytes applies to the Go source corpus, not to --text or --data"},
		{[]string{"--text", corpus, "--splits", "test"}, "--splits"},
		{[]string{"--text", corpus, "--seeds", "1,x"}, "--seeds"},
		{[]string{"--text", corpus, "--eval-iters", "0"}, "--eval-iters"},
	} {
		code, _, stderr := runCLI(append([]string{"eval", "gpt", "--ckpt", out}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, "--vocab-size") {
			t.Errorf("%v: exit %d, %q; want 2 naming %q", tc.args, code, stderr, tc.want)
		}
	}
	if code, _, stderr := runCLI("eval", "gpt", "--ckpt", filepath.Join(out, "nothing"), "--text", corpus); code != 2 || !strings.Contains(stderr, "no checkpoint") {
		t.Errorf("missing checkpoint: exit %d, %q", code, stderr)
	}
}

// lastValLoss returns the last val_loss in a training log.
func lastValLoss(t *testing.T, path string) float64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v := math.NaN()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r struct {
			ValLoss *float64 `json:"val_loss"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err == nil && r.ValLoss != nil {
			v = *r.ValLoss
		}
	}
	if math.IsNaN(v) {
		t.Fatalf("%s has no val_loss", path)
	}
	return v
}

// train gpt --test-fraction reports the final test loss, on stdout and in
// result.json, and eval gpt --splits test with the same fraction gives it
// again from the checkpoint, on the training's evaluation batches.
func TestEvalGPTTestSplit(t *testing.T) {
	var text strings.Builder
	for i := range 80 {
		text.WriteString(strings.Repeat("to be or not to be, that is the question.\n", 1+i%3))
	}
	corpus := writeCorpus(t, text.String())
	out := filepath.Join(t.TempDir(), "run")
	args := append([]string{"train", "gpt", "--text", corpus, "--test-fraction", "0.2", "--out", out}, tinyGPTFlags...)
	code, stdout, stderr := runCLI(args...)
	if code != 0 {
		t.Fatalf("train gpt: exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Val  float64  `json:"final_val_loss"`
		Test *float64 `json:"final_test_loss"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if res.Test == nil || *res.Test == res.Val || !strings.Contains(stdout, "final test loss ") {
		t.Fatalf("final test loss %v (validation %v); stdout %q", res.Test, res.Val, stdout)
	}
	code, stdout, stderr = runCLI("eval", "gpt", "--ckpt", out, "--text", corpus, "--test-fraction", "0.2", "--eval-iters", "2", "--splits", "test,val", "--json")
	if code != 0 {
		t.Fatalf("eval gpt: exit %d: %s", code, stderr)
	}
	var ev evalResult
	if err := json.Unmarshal([]byte(stdout), &ev); err != nil {
		t.Fatalf("%v in %s", err, stdout)
	}
	if len(ev.Losses) != 2 || ev.Losses[0].Split != "test" || ev.Losses[0].Loss != *res.Test || ev.Losses[1].Loss != res.Val {
		t.Errorf("eval gpt: %+v; want test %v and val %v, the run's", ev.Losses, *res.Test, res.Val)
	}
}
