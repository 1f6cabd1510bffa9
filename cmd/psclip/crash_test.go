package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/psclip/psclip/checkpoint"
)

// Checkpoint file names in a training run's --out directory.
const (
	ckptName = "ckpt.safetensors"
	prevName = "ckpt.prev.safetensors"
)

// crashAndResume runs "psclip args --out dir" and kills it with SIGKILL,
// kills times, each time starting again with --resume once a checkpoint
// exists; then it lets the last session finish. It returns how many kills
// hit a running process and how many sessions resumed from a checkpoint.
//
// The kill instants are drawn from seed in terms of progress, so that they
// do not depend on the machine's speed or load: a session is killed once
// its log has grown past a random line before the end of the whole run's
// log (total lines), plus a random part of the time a line takes (unit).
// Its log grows past where the previous session's stopped, so every
// session gets further, and kills land during steps, evaluations and
// checkpoint writes alike.
func crashAndResume(t *testing.T, args []string, dir string, seed uint64, kills, total int, unit time.Duration) (landed, resumed int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 0))
	logPath := filepath.Join(dir, "log.jsonl")
	for session := 0; ; session++ {
		a := append(append([]string{}, args...), "--out", dir)
		switch {
		case hasCheckpoint(dir):
			a = append(a, "--resume")
			resumed++
		case exists(logPath): // killed before its first checkpoint: nothing to keep
			a = append(a, "--restart")
		}
		n0 := lineCount(logPath)
		cmd := exec.Command(binary(t), a...)
		var errOut bytes.Buffer
		cmd.Stderr = &errOut
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		if session < kills && n0 < total-1 {
			target := n0 + 1 + rng.IntN(total-1-n0)
			extra := time.Duration(rng.Int64N(int64(unit)))
		wait:
			for lineCount(logPath) < target {
				select {
				case <-done:
					break wait
				case <-time.After(2 * time.Millisecond):
				}
			}
			select {
			case <-done:
			case <-time.After(extra):
				cmd.Process.Kill()
			}
		}
		<-done
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			landed++
			continue
		}
		if code := cmd.ProcessState.ExitCode(); code != 0 {
			t.Fatalf("session %d (psclip %s): exit %d\n%s", session, strings.Join(a, " "), code, errOut.String())
		}
		return landed, resumed // finished (before its kill, or unkilled)
	}
}

// lineCount is the number of complete lines in the file at path (0 if
// there is no such file).
func lineCount(path string) int {
	b, _ := os.ReadFile(path)
	return bytes.Count(b, []byte("\n"))
}

// exists reports whether there is a file at path.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// hasCheckpoint reports whether a run directory holds a checkpoint (the
// latest or the previous one) to resume from.
func hasCheckpoint(dir string) bool {
	for _, n := range []string{ckptName, prevName} {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			return true
		}
	}
	return false
}

// timed runs psclip args into a fresh directory, uninterrupted, and returns
// the directory and the run's wall time.
func timed(t *testing.T, args ...string) (string, time.Duration) {
	t.Helper()
	dir := t.TempDir()
	start := time.Now()
	mustRun(t, nil, append(args, "--out", dir)...)
	return dir, time.Since(start)
}

// logRecords reads a JSON-lines log without what no two runs share: timing
// fields (names ending in "_s": elapsed_s, img_per_s, tokens_per_s, ...)
// and the header a session writes when it starts or resumes.
func logRecords(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var recs []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if _, header := m["resumed"]; header {
			continue
		}
		for k := range m {
			if strings.HasSuffix(k, "_s") {
				delete(m, k)
			}
		}
		recs = append(recs, m)
	}
	return recs
}

// sameLog fails the test unless the logs at a and b hold the same records
// apart from timings.
func sameLog(t *testing.T, a, b string) {
	t.Helper()
	ra, rb := logRecords(t, a), logRecords(t, b)
	for i := range max(len(ra), len(rb)) {
		switch {
		case i >= len(ra) || i >= len(rb):
			t.Errorf("%s has %d records, %s %d", a, len(ra), b, len(rb))
			return
		case !reflect.DeepEqual(ra[i], rb[i]):
			t.Errorf("log record %d differs:\n%s: %v\n%s: %v", i, a, ra[i], b, rb[i])
			return
		}
	}
}

// onlyFiles fails the test if dir holds anything but the given files:
// in particular no temporary file left by a killed checkpoint write.
func onlyFiles(t *testing.T, dir string, want ...string) {
	t.Helper()
	got := dirEntries(t, dir)
	for _, n := range got {
		if !strings.Contains(strings.Join(want, "\x00")+"\x00", n+"\x00") {
			t.Errorf("%s holds %s; want only %v", dir, n, want)
		}
	}
}

// TestCrashResumeCIFAR kills "train cifar" with SIGKILL at random points,
// resumes it each time, and checks that the final checkpoint (weights and
// momentum), result and log are those of an uninterrupted run, bit for bit.
func TestCrashResumeCIFAR(t *testing.T) {
	if testing.Short() {
		t.Skip("kills and resumes a training process several times")
	}
	args := []string{"train", "cifar", "--data", cifarData(t), "--width-div", "32", "--batch", "64", "--epochs", "8",
		"--lr", "0.05", "--augment", "cropflip", "--dropout", "0.5", "--estimator", "ps-clip-sgd", "--clip", "1"}
	ref, took := timed(t, args...)
	lines := lineCount(filepath.Join(ref, "log.jsonl"))
	dir := t.TempDir()
	landed, resumed := crashAndResume(t, args, dir, 1, 4, lines, took/time.Duration(lines))
	t.Logf("uninterrupted run %v; %d kills landed, %d sessions resumed", took.Round(time.Millisecond), landed, resumed)
	if landed == 0 || resumed == 0 {
		t.Fatal("no kill landed after a checkpoint: nothing was resumed")
	}
	sameTensors(t, filepath.Join(ref, ckptName), filepath.Join(dir, ckptName))
	sameLog(t, filepath.Join(ref, "log.jsonl"), filepath.Join(dir, "log.jsonl"))
	var want, got struct {
		TrainAcc, ValAcc, TestAcc, TestLoss float64
	}
	for _, x := range []struct {
		dir string
		v   any
	}{{ref, &want}, {dir, &got}} {
		b, err := os.ReadFile(filepath.Join(x.dir, "result.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, x.v); err != nil {
			t.Fatal(err)
		}
	}
	if got != want {
		t.Errorf("result after crashes %+v, uninterrupted %+v", got, want)
	}
	onlyFiles(t, dir, ckptName, prevName, "log.jsonl", "result.json", "psclip.lock", "psclip.json")
}

// TestCrashResumeGPT kills "train gpt" with SIGKILL at random points,
// resumes it each time, and checks that the final checkpoint (weights, AdamW
// moments) and the log are those of an uninterrupted run, bit for bit. The
// run uses dropout and gradient accumulation, so the data order, schedule
// position and dropout stream must all be restored.
func TestCrashResumeGPT(t *testing.T) {
	if testing.Short() {
		t.Skip("kills and resumes a training process several times")
	}
	args := []string{"train", "gpt", "--text", textCorpus(t), "--n-layer", "1", "--n-embd", "32", "--n-head", "2",
		"--block-size", "32", "--micro-batch", "4", "--accum", "2", "--steps", "120", "--warmup", "10", "--lr", "3e-3",
		"--dropout", "0.1", "--clip-mode", "per-sample", "--clip", "0.5", "--eval-interval", "20", "--eval-iters", "2",
		"--ckpt-interval", "7"}
	ref, took := timed(t, args...)
	lines := lineCount(filepath.Join(ref, "log.jsonl"))
	dir := t.TempDir()
	landed, resumed := crashAndResume(t, args, dir, 2, 4, lines, took/time.Duration(lines))
	t.Logf("uninterrupted run %v; %d kills landed, %d sessions resumed", took.Round(time.Millisecond), landed, resumed)
	if landed == 0 || resumed == 0 {
		t.Fatal("no kill landed after a checkpoint: nothing was resumed")
	}
	sameTensors(t, filepath.Join(ref, ckptName), filepath.Join(dir, ckptName))
	sameLog(t, filepath.Join(ref, "log.jsonl"), filepath.Join(dir, "log.jsonl"))
	onlyFiles(t, dir, ckptName, prevName, "log.jsonl", "result.json", "psclip.lock", "psclip.json")
}

// TestDamagedCheckpointFallsBack damages the latest checkpoint of a
// finished run (a flipped byte, a truncation) and resumes: psclip must say
// so on stderr, resume from the previous checkpoint, and end with the
// uninterrupted run's weights ("sample" too must say so, and use the
// previous one). With both checkpoints damaged it must refuse
// with a one-line error.
func TestDamagedCheckpointFallsBack(t *testing.T) {
	trainers := []struct {
		name string
		args []string
	}{
		{"cifar", []string{"train", "cifar", "--data", cifarData(t), "--width-div", "32", "--batch", "32", "--epochs", "2",
			"--augment", "none", "--estimator", "clip-sgd", "--clip", "1"}},
		{"gpt", []string{"train", "gpt", "--text", textCorpus(t), "--n-layer", "1", "--n-embd", "16", "--n-head", "2",
			"--block-size", "16", "--micro-batch", "4", "--steps", "20", "--warmup", "2", "--eval-iters", "1",
			"--eval-interval", "10", "--ckpt-interval", "5", "--clip-mode", "micro-batch", "--accum", "2"}},
	}
	damages := []struct {
		name string
		do   func(b []byte) []byte
	}{
		{"flipped byte", func(b []byte) []byte { b[len(b)-3] ^= 0x10; return b }},
		{"truncated", func(b []byte) []byte { return b[:len(b)/2] }},
		{"emptied", func(b []byte) []byte { return nil }},
	}
	for _, tr := range trainers {
		ref, _ := timed(t, tr.args...)
		for _, dm := range damages {
			t.Run(tr.name+"/"+dm.name, func(t *testing.T) {
				dir := t.TempDir()
				mustRun(t, nil, append(tr.args, "--out", dir)...)
				damage(t, filepath.Join(dir, ckptName), dm.do)
				if tr.name == "gpt" {
					r := mustRun(t, nil, "sample", "--ckpt", dir, "--tokens", "5")
					if !strings.HasPrefix(r.stderr, "warning:") || !strings.Contains(r.stderr, "previous checkpoint") {
						t.Errorf("sample from a damaged checkpoint said nothing about it:\n%s", r.stderr)
					}
				}
				r := mustRun(t, nil, append(tr.args, "--out", dir, "--resume")...)
				if !strings.Contains(r.stderr, "warning:") || !strings.Contains(r.stderr, "previous checkpoint") {
					t.Errorf("resume from a damaged checkpoint said nothing about it:\n%s", r.stderr)
				}
				sameTensors(t, filepath.Join(ref, ckptName), filepath.Join(dir, ckptName))

				damage(t, filepath.Join(dir, ckptName), dm.do)
				damage(t, filepath.Join(dir, prevName), dm.do)
				before := dirEntries(t, dir)
				r = psclip(t, "", nil, append(tr.args, "--out", dir, "--resume")...)
				if r.code == 0 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "unusable") {
					t.Errorf("resume with both checkpoints damaged: exit %d, stderr %q; want a failure and one line", r.code, r.stderr)
				}
				if after := dirEntries(t, dir); !reflect.DeepEqual(before, after) {
					t.Errorf("a refused resume changed the directory: %v, then %v", before, after)
				}
			})
		}
	}
}

// damage rewrites the file at path with f applied to its content.
func damage(t *testing.T, path string, f func([]byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, f(b), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestInterruptSavesAndResumes stops each trainer with SIGINT (Ctrl-C), and
// the GPT trainer with SIGHUP (a closed terminal) too, in the middle of its
// run: it must save a checkpoint of the step in flight,
// say so, and exit with 128 + the signal's number as shells expect (issue
// 26: 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP); resuming must then end exactly where an
// uninterrupted run does. For CIFAR the interrupt lands mid-epoch, so the
// epoch's running statistics and data position are restored too.
func TestInterruptSavesAndResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("interrupts and resumes a training process")
	}
	gptArgs := []string{"train", "gpt", "--text", textCorpus(t), "--n-layer", "1", "--n-embd", "32", "--n-head", "2",
		"--block-size", "32", "--micro-batch", "4", "--steps", "400", "--warmup", "10", "--dropout", "0.1",
		"--eval-interval", "50", "--eval-iters", "2", "--ckpt-interval", "0"}
	for _, tc := range []struct {
		name  string
		args  []string
		lines int           // interrupt once log.jsonl has this many lines,
		after time.Duration // and this much later
		sig   os.Signal
	}{
		{"cifar", []string{"train", "cifar", "--data", cifarData(t), "--width-div", "32", "--batch", "32", "--epochs", "12",
			"--augment", "cropflip", "--estimator", "ps-clip-sgd", "--clip", "1"}, 1, 150 * time.Millisecond, os.Interrupt},
		{"gpt", gptArgs, 20, 0, os.Interrupt},
		{"gpt SIGHUP", gptArgs, 20, 0, syscall.SIGHUP},
		{"gpt SIGTERM", gptArgs, 20, 0, syscall.SIGTERM},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ref, _ := timed(t, tc.args...)
			dir := t.TempDir()
			cmd := exec.Command(binary(t), append(tc.args, "--out", dir)...)
			var errOut bytes.Buffer
			cmd.Stderr = &errOut
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
		poll:
			for {
				select {
				case <-done:
					t.Fatal("the run ended before it could be interrupted")
				case <-time.After(5 * time.Millisecond):
					if b, _ := os.ReadFile(filepath.Join(dir, "log.jsonl")); bytes.Count(b, []byte("\n")) >= tc.lines {
						break poll
					}
				}
			}
			time.Sleep(tc.after)
			cmd.Process.Signal(tc.sig)
			<-done
			want := 128 + int(tc.sig.(syscall.Signal))
			if code := cmd.ProcessState.ExitCode(); code != want || !strings.Contains(errOut.String(), "interrupted; checkpoint saved") {
				t.Fatalf("interrupted run: exit %d, stderr %q; want %d", code, errOut.String(), want)
			}
			l, err := checkpoint.Load(filepath.Join(dir, ckptName))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("interrupted after step %d", l.Step)
			mustRun(t, nil, append(tc.args, "--out", dir, "--resume")...)
			sameTensors(t, filepath.Join(ref, ckptName), filepath.Join(dir, ckptName))
			sameLog(t, filepath.Join(ref, "log.jsonl"), filepath.Join(dir, "log.jsonl"))
		})
	}
}
