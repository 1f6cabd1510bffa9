package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Issue 26: a command writes its outputs into a fresh place (a new or empty
// directory, a new file) or replaces files only when asked (--force), and
// never into a run directory, even when asked: for every command that
// writes outputs outside a run directory.
func TestOutputsDoNotOverwrite(t *testing.T) {
	quick := map[string][]string{
		"quadratic":        {"quadratic", "--T", "5", "--runs", "1", "--p", "1.5"},
		"highprob":         {"highprob", "--runs", "2", "--T", "5", "--p", "1.5", "--tuned"},
		"tail quadratic":   {"tail", "quadratic", "--T", "5", "--runs", "1", "--p", "1.5", "--window", "256"},
		"persample":        {"persample", "--width-div", "16", "--classes", "4", "--batch", "2"},
		"data synth-cifar": {"data", "synth-cifar", "--train", "4", "--test", "2", "--classes", "2"},
	}
	// A norms log to read, for tail --out.
	logDir := t.TempDir()
	log := filepath.Join(logDir, "norms.jsonl")
	if code, _, errOut := runCLI(append(quick["tail quadratic"], "--norms-log", log)...); code != 0 {
		t.Fatalf("tail quadratic --norms-log: exit %d: %s", code, errOut)
	}
	quick["tail"] = []string{"tail", "--from", log, "--window", "256"}

	// full is a directory of someone else's files, runDir a run directory
	// (its lock file records its kind), file a file of someone else.
	fixture := func(t *testing.T) (full, runDir, file string) {
		root := t.TempDir()
		full, runDir, file = filepath.Join(root, "full"), filepath.Join(root, "run"), filepath.Join(root, "file.jsonl")
		for p, b := range map[string]string{
			filepath.Join(full, "results.csv"):        "keep",
			filepath.Join(runDir, "psclip.lock"):      "1\ngpt run\n",
			filepath.Join(runDir, "log.jsonl"):        "{}\n",
			filepath.Join(runDir, "ckpt.safetensors"): "x",
			file: "keep",
		} {
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte(b), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return full, runDir, file
	}
	for _, name := range []string{"quadratic", "highprob", "tail quadratic", "tail", "persample", "data synth-cifar"} {
		t.Run(name, func(t *testing.T) {
			full, runDir, file := fixture(t)
			root := filepath.Dir(full)
			for _, c := range []struct {
				args []string
				code int
				want string
			}{
				{[]string{"--out", full}, 2, "--out " + full + " is not empty (results.csv): name a new directory, or pass --force"},
				{[]string{"--out", runDir}, 2, "--out: " + runDir + " is the directory of a gpt run"},
				{[]string{"--out", runDir, "--force"}, 2, "--out: " + runDir + " is the directory of a gpt run"},
				{[]string{"--out", full, "--force"}, 0, ""},
			} {
				before := snapshot(t, root)
				code, _, errOut := runCLI(append(quick[name], c.args...)...)
				if code != c.code || !strings.Contains(errOut, c.want) {
					t.Errorf("%s: exit %d, stderr %q; want %d and %q", strings.Join(c.args, " "), code, errOut, c.code, c.want)
				}
				if after := snapshot(t, root); c.code != 0 && !reflect.DeepEqual(before, after) {
					t.Errorf("%s: refused, but changed the files: %v, then %v", strings.Join(c.args, " "), before, after)
				}
			}
			if b, err := os.ReadFile(filepath.Join(full, "results.csv")); err != nil || string(b) != "keep" {
				t.Errorf("--force removed or changed a file it did not write: %q, %v", b, err)
			}
			if name != "tail quadratic" {
				return
			}
			for _, c := range []struct {
				args []string
				code int
				want string
			}{
				{[]string{"--norms-log", file}, 2, "--norms-log " + file + " exists: name a new file, or pass --force"},
				{[]string{"--norms-log", filepath.Join(runDir, "log.jsonl"), "--force"}, 2, "--norms-log: " + runDir + " is the directory of a gpt run"},
				{[]string{"--norms-log", filepath.Join(runDir, "new.jsonl"), "--force"}, 2, "--norms-log: " + runDir + " is the directory of a gpt run"},
				{[]string{"--norms-log", file, "--force"}, 0, ""},
			} {
				before := snapshot(t, root)
				code, _, errOut := runCLI(append(quick[name], c.args...)...)
				if code != c.code || !strings.Contains(errOut, c.want) {
					t.Errorf("%s: exit %d, stderr %q; want %d and %q", strings.Join(c.args, " "), code, errOut, c.code, c.want)
				}
				if after := snapshot(t, root); c.code != 0 && !reflect.DeepEqual(before, after) {
					t.Errorf("%s: refused, but changed the files", strings.Join(c.args, " "))
				}
			}
		})
	}
}
