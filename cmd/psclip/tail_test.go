package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTailQuadraticAndTrace(t *testing.T) {
	dir := t.TempDir()
	out, log := filepath.Join(dir, "out"), filepath.Join(dir, "norms.jsonl")
	var code int
	var errOut string
	var table string
	code, table, errOut = runCLI("tail", "quadratic", "--T", "40", "--runs", "1", "--p", "1.5", "--window", "256", "--out", out, "--norms-log", log)
	if code != 0 || errOut != "" {
		t.Fatalf("tail quadratic: exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"untuned ps-clip-sgd", "tuned ps-clip-sgd", "ps-clip-auto η=0.05", "auto-clip η=0.01", "p̂ at t=10"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	for _, f := range []string{"tail-quadratic.json", "tail-quadratic.png", "tail-quadratic.svg", "tail-phat.png", "tail-phat.svg"} {
		if fi, err := os.Stat(filepath.Join(out, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	traceOut := filepath.Join(dir, "trace")
	code, table, errOut = runCLI("tail", "--from", log, "--window", "256", "--rows", "3", "--out", traceOut)
	if code != 0 || errOut != "" || strings.Count(table, "\n") != 5 || !strings.Contains(table, "p̂") {
		t.Fatalf("tail --from: exit %d, stderr %q, table:\n%s", code, errOut, table)
	}
	for _, f := range []string{"tail.json", "tail.png", "tail.svg"} {
		if _, err := os.Stat(filepath.Join(traceOut, f)); err != nil {
			t.Error(err)
		}
	}
}

func TestTailBadInput(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	truncated := filepath.Join(dir, "cut.jsonl")
	os.WriteFile(file, nil, 0o644)
	os.WriteFile(truncated, []byte(`{"step":1,"sample_norms":[1,2`), 0o644)
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"tail"}, 2, "--from is required"},
		{[]string{"tail", "--from", file, "--rows", "0"}, 2, "--rows 0"},
		{[]string{"tail", "--from", file, "--out", file}, 2, "is a file"},
		// Issue 26: a missing or malformed log is bad input: exit 2.
		{[]string{"tail", "--from", filepath.Join(dir, "missing")}, 2, "missing: no such file or directory"},
		{[]string{"tail", "--from", file}, 2, "no per-sample norms"},
		{[]string{"tail", "--from", truncated}, 2, "line 1"},
		{[]string{"tail", "quadratic", "--p", "1.3"}, 2, "no tuned ps-clip-sgd at p = 1.3"},
		{[]string{"tail", "quadratic", "--window", "10"}, 2, "--window = 10"},
		{[]string{"tail", "quadratic", "--T", "0"}, 2, "T = 0"},
	}
	for _, tt := range tests {
		code, _, errOut := runCLI(tt.args...)
		if code != tt.code || !strings.Contains(errOut, tt.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("psclip %s: exit %d, stderr %q; want %d and one line containing %q", strings.Join(tt.args, " "), code, errOut, tt.code, tt.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); err == nil {
		t.Error("an output directory was created for a failed run")
	}
}
