package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// readmeCommands returns the shell commands of README.md's indented code
// blocks: each line that starts with "./psclip " or "go ", joined with the
// lines it continues onto (a trailing backslash).
func readmeCommands(readme string) []string {
	var cmds []string
	var cur strings.Builder
	inCmd := false
	for line := range strings.SplitSeq(readme, "\n") {
		body, indented := strings.CutPrefix(line, "    ")
		if !inCmd {
			if !indented || !(strings.HasPrefix(body, "./psclip ") || strings.HasPrefix(body, "go ")) {
				continue
			}
			cur.Reset()
		}
		body = strings.TrimSpace(body)
		more := strings.HasSuffix(body, `\`)
		cur.WriteString(strings.TrimSuffix(body, `\`))
		if inCmd = more; !more {
			cmds = append(cmds, strings.Join(strings.Fields(cur.String()), " "))
		}
	}
	return cmds
}

// stepLine is how a training run reports a step on stderr
// ("gpt per-sample: step 256/2000 …").
var stepLine = regexp.MustCompile(`\bstep \d+/\d+`)

// finished is the progress of a run that took its last step.
var finished = regexp.MustCompile(`\bstep (\d+)/(\d+)\b[^\n]*\n?$`)

// TestREADMECommands runs every command README.md shows, in order, as a
// user types it into a shell in a fresh clone: after the set-up's
// "go build -o psclip ./cmd/psclip" (the build the suite makes, linked as
// ./psclip), each command runs through sh in a directory that holds the
// repository's files (linked) and nothing else. A training
// run (train, experiment) is interrupted as Ctrl-C would once it has
// reported a step, and must then have saved a checkpoint and exited 130:
// it accepted its flags, found its data and trained. Every other command
// must exit 0. The set-up's "go test" is the command that runs this test. Commands reading Fashion-MNIST are skipped where Debian's
// dataset-fashion-mnist is not installed, except under CI=true.
func TestREADMECommands(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the README's commands")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	cmds := readmeCommands(string(readme))
	if len(cmds) < 5 || cmds[0] != "go build -o psclip ./cmd/psclip" || cmds[1] != "go test ./..." {
		t.Fatalf("README.md's commands %q do not start with the set-up this test emulates", cmds)
	}
	clone := t.TempDir()
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		switch e.Name() {
		case ".git", "psclip":
			continue
		}
		if err := os.Symlink(filepath.Join(root, e.Name()), filepath.Join(clone, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(binary(t), filepath.Join(clone, "psclip")); err != nil {
		t.Fatal(err)
	}
	const fashion = "/usr/share/datasets/fashion-mnist"
	_, noFashion := os.Stat(fashion)
	for _, c := range cmds {
		switch {
		case strings.HasPrefix(c, "go "): // the set-up, checked above
			continue
		case strings.Contains(c, fashion) && noFashion != nil && os.Getenv("CI") != "true":
			t.Logf("skipped (no %s): %s", fashion, c)
			continue
		}
		training := regexp.MustCompile(`^\./psclip (train|experiment) `).MatchString(c)
		start := time.Now()
		code, stderr := runTyped(t, clone, c, training)
		t.Logf("%.1f s, exit %d: %s", time.Since(start).Seconds(), code, c)
		if m := finished.FindStringSubmatch(stderr); training && code == 0 && m != nil && m[1] == m[2] {
			// A fast machine trained the whole run before its first
			// progress line, which a run not on a terminal prints less
			// often: nothing was left to interrupt.
			t.Logf("%s: finished (step %s/%s) before Ctrl-C could interrupt it", c, m[1], m[2])
			continue
		}
		switch {
		case training && code != 130:
			t.Errorf("%s\nexit %d before or after its first step, want 130 after Ctrl-C; stderr:\n%s", c, code, stderr)
		case training && !strings.Contains(stderr, "checkpoint saved"):
			t.Errorf("%s\ninterrupted without saving a checkpoint; stderr:\n%s", c, stderr)
		case !training && code != 0:
			t.Errorf("%s\nexit %d; stderr:\n%s", c, code, stderr)
		}
	}
}

// runTyped runs the shell command c in dir and returns its exit status and
// stderr. With interrupt, the command gets SIGINT once its stderr reports
// a step. It fails the test when the command runs longer than five minutes.
func runTyped(t *testing.T, dir, c string, interrupt bool) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", "exec "+c)
	cmd.Dir = dir
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	sc := bufio.NewScanner(pipe)
	sc.Buffer(nil, 1<<20)
	signalled := false
	for sc.Scan() {
		stderr.Write(append(sc.Bytes(), '\n'))
		if interrupt && !signalled && stepLine.Match(sc.Bytes()) {
			signalled = true
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
		}
	}
	err = cmd.Wait()
	if ctx.Err() != nil {
		t.Fatalf("%s: still running after five minutes", c)
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("%s: %v", c, err)
	}
	return cmd.ProcessState.ExitCode(), stderr.String()
}
