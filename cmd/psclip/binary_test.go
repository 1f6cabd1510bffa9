package main

// The integration suite (crash_test.go, determinism_test.go,
// badinput_test.go) drives the psclip binary as a user would: as a separate
// process, with its own GOMAXPROCS, killed with SIGKILL, judged by its exit
// status, its stderr and the files it leaves. This file builds the binary
// once per test run and holds the fixtures the suite shares.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/psclip/psclip/safetensors"
)

// suiteDir holds the binary and the shared fixtures; TestMain removes it.
var suiteDir string

func TestMain(m *testing.M) {
	code := m.Run()
	if suiteDir != "" {
		os.RemoveAll(suiteDir)
	}
	os.Exit(code)
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// binary returns the path of a psclip binary built from this package with
// "go build"; the test is skipped where there is no go command.
func binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		if suiteDir, buildErr = os.MkdirTemp("", "psclip-cli-test"); buildErr == nil {
			binPath, buildErr = build("psclip", nil)
		}
	})
	return built(t, binPath, buildErr)
}

// build builds this package into suiteDir/name with "go build", the extra
// environment variables env and the given flags.
func build(name string, env []string, flags ...string) (string, error) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return "", err
	}
	path := filepath.Join(suiteDir, name)
	cmd := exec.Command(goCmd, append(append([]string{"build"}, flags...), "-o", path, ".")...)
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return path, nil
}

// built returns the binary build built at path, skipping t where there is
// no go command.
func built(t testing.TB, path string, err error) string {
	t.Helper()
	var notFound *exec.Error
	if errors.As(err, &notFound) {
		t.Skip("no go command to build psclip with:", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// result is how one psclip process ended.
type result struct {
	code           int // exit status; -1 when killed by a signal
	stdout, stderr string
}

// psclip runs the binary with args in dir (the current directory if empty),
// with extra environment variables env ("GOMAXPROCS=1"), and fails the test
// if it runs longer than a minute.
func psclip(t testing.TB, dir string, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("psclip %s: still running after a minute", strings.Join(args, " "))
	}
	r := result{code: cmd.ProcessState.ExitCode(), stdout: out.String(), stderr: errOut.String()}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("psclip %s: %v", strings.Join(args, " "), err)
	}
	return r
}

// mustRun runs psclip and fails the test unless it exits 0.
func mustRun(t testing.TB, env []string, args ...string) result {
	t.Helper()
	r := psclip(t, "", env, args...)
	if r.code != 0 {
		t.Fatalf("psclip %s: exit %d\n%s", strings.Join(args, " "), r.code, r.stderr)
	}
	return r
}

var (
	cifarOnce sync.Once
	cifarDir  string
	cifarErr  string
)

// cifarData returns a directory with a small synthetic CIFAR-100 data set
// (10 classes, 300 training and 100 test images) written by
// "psclip data synth-cifar". Tests must not change it.
func cifarData(t testing.TB) string {
	t.Helper()
	bin := binary(t)
	cifarOnce.Do(func() {
		dir := filepath.Join(suiteDir, "cifar")
		out, err := exec.Command(bin, "data", "synth-cifar", "--out", dir, "--train", "300", "--test", "100", "--classes", "10").CombinedOutput()
		if err != nil {
			cifarErr = fmt.Sprintf("data synth-cifar: %v\n%s", err, out)
			return
		}
		cifarDir = dir
	})
	if cifarErr != "" {
		t.Fatal(cifarErr)
	}
	return cifarDir
}

var (
	textOnce sync.Once
	textPath string
)

// textCorpus returns a text file of about 24 kB for "train gpt --text":
// seeded random sentences over a small vocabulary, so that the suite needs
// no data set. Tests must not change it.
func textCorpus(t testing.TB) string {
	t.Helper()
	binary(t) // creates suiteDir
	textOnce.Do(func() {
		words := strings.Fields("the of and to in a is that for it as was with be by on not he this are or his from at which but have an they you were her she there one all we their")
		rng := rand.New(rand.NewPCG(7, 7))
		var b strings.Builder
		for b.Len() < 24<<10 {
			n := 3 + rng.IntN(10)
			for i := range n {
				w := words[rng.IntN(len(words))]
				if i == 0 {
					w = strings.ToUpper(w[:1]) + w[1:]
				}
				b.WriteString(w)
				if i < n-1 {
					b.WriteByte(' ')
				}
			}
			b.WriteString(".\n")
		}
		path := filepath.Join(suiteDir, "corpus.txt")
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err == nil {
			textPath = path
		}
	})
	if textPath == "" {
		t.Fatal("cannot write the text corpus")
	}
	return textPath
}

// tensorsOf reads every tensor of a safetensors file (model and, in a
// checkpoint, optimizer state) as raw bytes by name.
func tensorsOf(t testing.TB, path string) map[string][]byte {
	t.Helper()
	f, err := safetensors.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := make(map[string][]byte, len(f.Tensors))
	for _, x := range f.Tensors {
		m[x.Name] = x.Data
	}
	return m
}

// sameTensors fails the test unless the safetensors files a and b hold the
// same tensors, bit for bit.
func sameTensors(t testing.TB, a, b string) {
	t.Helper()
	ta, tb := tensorsOf(t, a), tensorsOf(t, b)
	if len(ta) == 0 {
		t.Fatalf("%s holds no tensors", a)
	}
	for name, x := range ta {
		y, ok := tb[name]
		switch {
		case !ok:
			t.Errorf("%s has no tensor %s", b, name)
		case !bytes.Equal(x, y):
			t.Errorf("tensor %s differs between %s and %s", name, a, b)
		}
	}
	for name := range tb {
		if _, ok := ta[name]; !ok {
			t.Errorf("%s has no tensor %s", a, name)
		}
	}
}

// dirEntries lists the names in dir, sorted; nil if dir does not exist.
func dirEntries(t testing.TB, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}
