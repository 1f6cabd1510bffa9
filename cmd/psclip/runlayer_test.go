package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/psclip/psclip/safetensors"
)

// Small runs of each trainer, for the run-layer tests.
func tinyCIFAR(t *testing.T) []string {
	return []string{"train", "cifar", "--data", cifarData(t), "--width-div", "32", "--batch", "50", "--epochs", "1", "--augment", "none"}
}

func tinyGPT(t *testing.T, text string, steps int) []string {
	return []string{"train", "gpt", "--text", text, "--n-layer", "1", "--n-embd", "16", "--n-head", "2", "--block-size", "16",
		"--micro-batch", "2", "--steps", strconv.Itoa(steps), "--warmup", "2", "--eval-interval", "5", "--eval-iters", "1"}
}

// refusedWith fails unless r exited with code and a single stderr line
// containing every one of want.
func refusedWith(t *testing.T, what string, r result, code int, want ...string) {
	t.Helper()
	if r.code != code || strings.Count(r.stderr, "\n") != 1 || strings.Contains(r.stderr, "goroutine") {
		t.Errorf("%s: exit %d, stderr %q; want %d and one line", what, r.code, r.stderr, code)
		return
	}
	for _, w := range want {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("%s: stderr %q lacks %q", what, r.stderr, w)
		}
	}
}

// TestFreshRunIntoRunRefused: a run started without --resume into a
// directory that holds a run (a forgotten --resume after a crash) is refused
// with exit 2, naming --resume and --restart, and leaves the directory byte
// for byte as it was; --restart starts it over.
func TestFreshRunIntoRunRefused(t *testing.T) {
	for _, args := range [][]string{
		tinyCIFAR(t),
		tinyGPT(t, textCorpus(t), 6),
		{"experiment", "gpt", "--text", textCorpus(t), "--n-layer", "1", "--n-embd", "16", "--n-head", "2", "--block-size", "16",
			"--micro-batch", "2", "--steps", "4", "--warmup", "1", "--eval-interval", "2", "--eval-iters", "1", "--lrs", "1e-3", "--seeds", "1",
			"--clip-modes", "global"},
	} {
		name := strings.Join(args[:2], " ")
		dir := t.TempDir()
		mustRun(t, nil, append(args, "--out", dir)...)
		before := snapshot(t, dir)
		r := psclip(t, "", nil, append(args, "--out", dir)...)
		refusedWith(t, name+" into a run", r, 2, "--resume", "--restart", dir)
		if after := snapshot(t, dir); !slices.Equal(before, after) {
			t.Errorf("%s: the refused run changed %s:\n%v\nthen\n%v", name, dir, before, after)
		}
		mustRun(t, nil, append(args, "--out", dir, "--restart")...)
	}
}

// TestSecondProcessRefused: while a run trains, a second process on the
// same directory is refused at once with the first one's PID; the first
// goes on undisturbed.
func TestSecondProcessRefused(t *testing.T) {
	dir := t.TempDir()
	args := append(tinyGPT(t, textCorpus(t), 100000), "--out", dir)
	first := exec.Command(binary(t), args...)
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { first.Process.Kill(); first.Wait() }()
	for deadline := time.Now().Add(30 * time.Second); lineCount(filepath.Join(dir, "log.jsonl")) < 2; {
		if time.Now().After(deadline) {
			t.Fatal("the first run wrote no log")
		}
		time.Sleep(5 * time.Millisecond)
	}
	start := time.Now()
	r := psclip(t, "", nil, append(args, "--restart")...)
	refusedWith(t, "second process", r, 1, "in use by process "+strconv.Itoa(first.Process.Pid))
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the second process took %v to be refused", took)
	}
	if first.ProcessState != nil {
		t.Error("the first run stopped")
	}
}

// TestResumeRefusesOtherData: --resume on other data (another CIFAR
// directory, another corpus of the same vocabulary), in train and in
// experiment, is refused naming what changed.
func TestResumeRefusesOtherData(t *testing.T) {
	other := filepath.Join(t.TempDir(), "cifar")
	mustRun(t, nil, "data", "synth-cifar", "--out", other, "--train", "300", "--test", "100", "--classes", "10", "--seed", "9")
	dir := t.TempDir()
	mustRun(t, nil, append(tinyCIFAR(t), "--out", dir)...)
	// The lock file records its latest holder; everything else must stay.
	unlocked := func() []string {
		return slices.DeleteFunc(snapshot(t, dir), func(s string) bool { return strings.HasPrefix(s, "psclip.lock ") })
	}
	before := unlocked()
	args := tinyCIFAR(t)
	args[3] = other // --data
	r := psclip(t, "", nil, append(args, "--out", dir, "--resume")...)
	refusedWith(t, "train cifar --resume on other data", r, 2, "other data", "train: sha256", other)
	if !slices.Equal(before, unlocked()) {
		t.Error("the refused resume changed the run")
	}

	// A corpus of the same characters in another order: the same
	// vocabulary, other tokens.
	text := textCorpus(t)
	b, _ := os.ReadFile(text)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	slices.Reverse(lines)
	shuffled := filepath.Join(t.TempDir(), "corpus.txt")
	os.WriteFile(shuffled, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	gdir := t.TempDir()
	mustRun(t, nil, append(tinyGPT(t, text, 6), "--out", gdir)...)
	r = psclip(t, "", nil, append(tinyGPT(t, shuffled, 6), "--out", gdir, "--resume")...)
	refusedWith(t, "train gpt --resume on another corpus", r, 2, "other data", "train: sha256")

	exp := []string{"experiment", "gpt", "--n-layer", "1", "--n-embd", "16", "--n-head", "2", "--block-size", "16",
		"--micro-batch", "2", "--steps", "4", "--warmup", "1", "--eval-interval", "2", "--eval-iters", "1", "--lrs", "1e-3", "--seeds", "1",
		"--clip-modes", "global"}
	edir := t.TempDir()
	mustRun(t, nil, append(exp, "--text", text, "--out", edir)...)
	r = psclip(t, "", nil, append(exp, "--text", shuffled, "--out", edir, "--resume")...)
	refusedWith(t, "experiment gpt --resume on another corpus", r, 2, "other data", "train: sha256")
}

// TestCheckpointOfAnotherCommand: sample on a CIFAR run says it is a CIFAR
// checkpoint.
func TestCheckpointOfAnotherCommand(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, nil, append(tinyCIFAR(t), "--out", dir)...)
	r := psclip(t, "", nil, "sample", "--ckpt", dir, "--tokens", "5")
	refusedWith(t, "sample --ckpt on a CIFAR run", r, 2, "is a cifar checkpoint, not a gpt one")
}

// Issue 26: a resume from another program's safetensors file (no psclip
// checkpoint) is bad input, exit 2, as it is for sample and eval gpt.
func TestResumeFromForeignSafetensors(t *testing.T) {
	dir := t.TempDir()
	w := []safetensors.Tensor{safetensors.New("weight", []int{2}, []float32{1, 2})}
	if err := safetensors.WriteFile(filepath.Join(dir, "ckpt.safetensors"), w, map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
	// A run directory psclip made (its lock: an earlier psclip's), whose
	// checkpoint was replaced.
	for name, b := range map[string]string{"log.jsonl": "{}\n", "psclip.lock": "1\ngpt run\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := psclip(t, "", nil, append(tinyGPT(t, textCorpus(t), 4), "--out", dir, "--resume")...)
	refusedWith(t, "train gpt --resume from a foreign file", r, 2, "a safetensors file, but not a psclip checkpoint")
}

// TestSizesThatCannotFit: sizes beyond the machine's memory are refused
// in one line with the estimate and the machine's memory, at once and
// without a Go stack trace. (A batch larger than the training split is
// the split, and fits: TestBatchLargerThanData.)
func TestSizesThatCannotFit(t *testing.T) {
	gpt := tinyGPT(t, textCorpus(t), 5)
	for _, tc := range [][]string{
		append(slices.Clone(gpt), "--n-embd", "200000", "--n-head", "1"),
		append(slices.Clone(gpt), "--micro-batch", "100000000"),
		append(slices.Clone(gpt), "--n-layer", "100000000"),
		{"persample", "--batch", "100000000"},
		{"bench", "step", "--micro-batch", "100000000"},
	} {
		if tc[0] != "bench" {
			tc = append(tc, "--out", t.TempDir())
		}
		start := time.Now()
		r := psclip(t, "", nil, tc...)
		refusedWith(t, strings.Join(tc, " "), r, 2, "more than this machine's", "need about")
		if took := time.Since(start); took > 20*time.Second {
			t.Errorf("%s: refused after %v", strings.Join(tc, " "), took)
		}
	}
}

// TestOutputCheckedBeforeWork: an output that cannot be written is refused
// before the work, not after it.
func TestOutputCheckedBeforeWork(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, []byte("x"), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"tail", "quadratic", "--norms-log", filepath.Join(file, "norms.jsonl"), "--runs", "50", "--T", "20000"}, "--norms-log"},
		{[]string{"tail", "quadratic", "--norms-log", dir, "--runs", "50", "--T", "20000"}, "is a directory"},
		{[]string{"tail", "quadratic", "--out", filepath.Join(file, "out"), "--runs", "50", "--T", "20000"}, "--out"},
		{append(tinyCIFAR(t), "--out", filepath.Join(file, "out")), "--out"},
	} {
		start := time.Now()
		r := psclip(t, "", nil, tc.args...)
		refusedWith(t, strings.Join(tc.args, " "), r, 2, tc.want)
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("%s: refused after %v, after the work", strings.Join(tc.args, " "), took)
		}
	}
}

// TestLongLogLinesResume: per-sample norms of a large step make log lines
// over 1 MiB; a resume reads them back (no line-length limit) and leaves
// the log as it was.
func TestLongLogLinesResume(t *testing.T) {
	dir := t.TempDir()
	args := []string{"train", "gpt", "--text", textCorpus(t), "--n-layer", "1", "--n-embd", "8", "--n-head", "1", "--block-size", "2",
		"--micro-batch", "6000", "--accum", "10", "--clip-mode", "per-sample", "--log-norms", "--steps", "2", "--warmup", "1",
		"--eval-interval", "2", "--eval-iters", "1", "--ckpt-interval", "1", "--out", dir}
	mustRun(t, nil, args...)
	before, _ := os.ReadFile(filepath.Join(dir, "log.jsonl"))
	longest := 0
	for _, l := range strings.Split(string(before), "\n") {
		longest = max(longest, len(l))
	}
	if longest <= 1<<20 {
		t.Fatalf("longest log line %d bytes, want over 1 MiB", longest)
	}
	mustRun(t, nil, append(args, "--resume")...)
	if after, _ := os.ReadFile(filepath.Join(dir, "log.jsonl")); string(after) != string(before) {
		t.Error("the resume changed the log")
	}
}

// TestResumeRefusesForeignLog: a run whose log is missing, shorter than
// its checkpoint, or another run's is refused on --resume, never continued.
func TestResumeRefusesForeignLog(t *testing.T) {
	args := append(tinyGPT(t, textCorpus(t), 6), "--ckpt-interval", "3")
	dir, other := t.TempDir(), t.TempDir()
	mustRun(t, nil, append(args, "--out", dir)...)
	mustRun(t, nil, append(args, "--out", other, "--seed", "2")...)
	log := filepath.Join(dir, "log.jsonl")
	b, _ := os.ReadFile(log)
	foreign, _ := os.ReadFile(filepath.Join(other, "log.jsonl"))
	for _, tc := range []struct {
		what    string
		content []byte // nil: no log
		want    string
	}{
		{"missing", nil, "log.jsonl is missing"},
		{"shorter", b[:bytes.IndexByte(b, '\n')+1], "complete lines"},
		{"another run's", foreign, "another run"},
	} {
		os.Remove(log)
		if tc.content != nil {
			os.WriteFile(log, tc.content, 0o644)
		}
		r := psclip(t, "", nil, append(args, "--out", dir, "--resume")...)
		refusedWith(t, "--resume with a log "+tc.what, r, 2, tc.want, "--restart")
	}
}

// Issue 26: a directory belongs to one kind of run: a training run into an
// experiment's directory, an experiment into a training run's, a run of
// one trainer into another's are refused (exit 2) and change nothing,
// whether the directory records its kind (its lock file) or tells it by
// its files (an older one).
func TestDirKindsDoNotMix(t *testing.T) {
	idxData := writeIDX(t, filepath.Join(t.TempDir(), "idx"), 40, 8)
	gptExp := []string{"experiment", "gpt", "--text", textCorpus(t), "--n-layer", "1", "--n-embd", "16", "--n-head", "2", "--block-size", "16",
		"--micro-batch", "2", "--steps", "2", "--warmup", "1", "--lrs", "1e-3", "--seeds", "1", "--clip-modes", "global"}
	imagesRun := []string{"train", "images", "--data", idxData, "--epochs", "1", "--batch", "8"}
	for _, c := range []struct {
		name  string
		files map[string]string
		args  []string
		want  string
	}{
		{"train images into an experiment", map[string]string{"psclip.lock": "1\ncifar experiment\n", "results.json": "{}"}, imagesRun, "is the directory of a cifar experiment, not of a cifar run"},
		{"train images into an older experiment", map[string]string{"results.json": "{}", "runs/x": ""}, imagesRun, "is the directory of an experiment, not of a cifar run"},
		{"train images into a gpt run", map[string]string{"psclip.lock": "1\ngpt run\n"}, imagesRun, "is the directory of a gpt run, not of a cifar run"},
		{"experiment gpt into a gpt run", map[string]string{"psclip.lock": "1\ngpt run\n", "log.jsonl": "{}\n"}, gptExp, "is the directory of a gpt run, not of a gpt experiment"},
		{"experiment gpt into an older run", map[string]string{"log.jsonl": "{}\n"}, gptExp, "is the directory of a run, not of a gpt experiment"},
		{"experiment gpt into an images experiment", map[string]string{"psclip.lock": "1\ncifar experiment\n"}, gptExp, "is the directory of a cifar experiment, not of a gpt experiment"},
	} {
		dir := t.TempDir()
		for name, b := range c.files {
			os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
			if err := os.WriteFile(filepath.Join(dir, name), []byte(b), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		before := snapshot(t, dir)
		for _, start := range []string{"--restart", "--resume", ""} {
			args := append(append([]string{}, c.args...), "--out", dir)
			if start != "" {
				args = append(args, start)
			}
			r := psclip(t, "", nil, args...)
			refusedWith(t, c.name+" "+start, r, 2, "--out "+dir+" "+c.want)
		}
		if after := snapshot(t, dir); !slices.Equal(before, after) {
			t.Errorf("%s: changed the directory: %v, then %v", c.name, before, after)
		}
	}
}
