package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/psclip/psclip/data/cifar"
)

func TestDataSynthCIFAR(t *testing.T) {
	root := t.TempDir()
	args := func(out string) []string {
		return []string{"data", "synth-cifar", "--out", out, "--train", "20", "--test", "5", "--classes", "4", "--seed", "3", "--outliers", "0.25"}
	}
	for _, dir := range []string{"a", "b"} {
		if code, _, errOut := runCLI(args(filepath.Join(root, dir, "nested"))...); code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
	}
	train, test, err := cifar.Load(filepath.Join(root, "a", "nested"))
	if err != nil {
		t.Fatal(err)
	}
	if train.Len() != 20 || test.Len() != 5 || train.Classes != 4 {
		t.Errorf("wrote %d training, %d test images of %d classes; want 20, 5, 4", train.Len(), test.Len(), train.Classes)
	}
	for _, f := range []string{"train.bin", "test.bin", "fine_label_names.txt", "coarse_label_names.txt"} {
		a, errA := os.ReadFile(filepath.Join(root, "a", "nested", f))
		b, errB := os.ReadFile(filepath.Join(root, "b", "nested", f))
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			t.Errorf("%s differs between two runs with the same flags (%v, %v)", f, errA, errB)
		}
	}
}

func TestDataSynthCIFARBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--train", "0"}, "0 training images"},
		{[]string{"--test", "-1"}, "-1 test images"},
		{[]string{"--classes", "1"}, "1 classes"},
		{[]string{"--classes", "101"}, "101 classes"},
		{[]string{"--outliers", "1"}, "outlier fraction 1"},
		{[]string{"--outliers", "-0.1"}, "outlier fraction -0.1"},
		{[]string{"--outliers", "NaN"}, "outlier fraction NaN"},
		{[]string{"--noise", "-1"}, "noise -1"},
		{[]string{"--outlier-kind", "some"}, `unknown outlier kind "some"`},
		{[]string{"--train", "many"}, "invalid value"},
		{[]string{"extra"}, `unexpected argument "extra"`},
	} {
		out := filepath.Join(t.TempDir(), "out")
		args := append([]string{"data", "synth-cifar", "--out", out}, tc.args...)
		code, _, errOut := runCLI(args...)
		if code != 2 || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line containing %q", tc.args, code, errOut, tc.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: created %s", tc.args, out)
		}
	}
	if code, _, errOut := runCLI("data", "synth-cifar"); code != 2 || !strings.Contains(errOut, "--out is required") {
		t.Errorf("no --out: exit %d, stderr %q", code, errOut)
	}
}

func TestDataSynthCIFAROutputErrors(t *testing.T) {
	small := []string{"--train", "4", "--test", "2", "--classes", "2"}
	// --out names a file: refused, the file untouched.
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, []byte("keep"), 0o644)
	code, _, errOut := runCLI(append([]string{"data", "synth-cifar", "--out", file}, small...)...)
	if b, _ := os.ReadFile(file); code != 2 || !strings.Contains(errOut, "is a file") || strings.Count(errOut, "\n") != 1 || string(b) != "keep" {
		t.Errorf("--out a file: exit %d, stderr %q, file now %q", code, errOut, b)
	}
	// test.bin cannot be written (--force: the directory is not empty):
	// train.bin must not be left behind alone, nor any temporary file.
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "test.bin", "x"), 0o755)
	code, _, errOut = runCLI(append([]string{"data", "synth-cifar", "--out", dir, "--force"}, small...)...)
	entries, _ := os.ReadDir(dir)
	if code != 1 || len(entries) != 1 || strings.Count(errOut, "\n") != 1 {
		t.Errorf("unwritable test.bin: exit %d, stderr %q, %d entries left", code, errOut, len(entries))
	}
}
