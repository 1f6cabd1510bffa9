package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	runlayer "github.com/psclip/psclip/run"
)

// Issue 34: a directory is psclip's by the record psclip writes into it
// first (psclip.json), never by the names of the files it holds. Files a
// user made are neither started over (--restart), resumed nor mixed with a
// fresh run's, however they are named; every refusal is exit 2, names the
// files and changes nothing.
func TestUserFilesAreNotRuns(t *testing.T) {
	idx := writeIDX(t, filepath.Join(t.TempDir(), "idx"), 40, 8)
	imagesRun := []string{"train", "images", "--data", idx, "--epochs", "1", "--batch", "8"}
	imagesExp := []string{"experiment", "images", "--data", idx, "--epochs", "1", "--batch", "8", "--methods", "sgd", "--seeds", "1"}
	gpt := tinyGPT(t, textCorpus(t), 2)
	for _, c := range []struct {
		name  string
		files []string // the user's files in --out
		args  []string
	}{
		{"train gpt over a user's log and result", []string{"log.jsonl", "result.json"}, gpt},
		{"train gpt into a directory of notes", []string{"notes.txt"}, gpt},
		{"train images over a user's log", []string{"log.jsonl", "result.json"}, imagesRun},
		{"experiment images over a user's tables", []string{"table.md", "results.json"}, imagesExp},
	} {
		dir := t.TempDir()
		for _, f := range c.files {
			if err := os.WriteFile(filepath.Join(dir, f), []byte("the user's own\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		before := snapshot(t, dir)
		for _, start := range []string{"--restart", "--resume", ""} {
			args := append(slices.Clone(c.args), "--out", dir)
			if start != "" {
				args = append(args, start)
			}
			r := psclip(t, "", nil, args...)
			refusedWith(t, c.name+" "+start, r, 2, append([]string{"--out " + dir + " holds files psclip did not make ("}, c.files...)...)
		}
		if after := snapshot(t, dir); !slices.Equal(before, after) {
			t.Errorf("%s: changed the directory: %v, then %v", c.name, before, after)
		}
	}

	// A fresh run into the data set's own directory.
	before := snapshot(t, idx)
	r := psclip(t, "", nil, append(slices.Clone(imagesRun), "--out", idx)...)
	refusedWith(t, "train images --out <its data>", r, 2, "holds files psclip did not make", "train-images-idx3-ubyte")
	if after := snapshot(t, idx); !slices.Equal(before, after) {
		t.Errorf("train images --out <its data> changed the data: %v, then %v", before, after)
	}
}

// Issue 34: an experiment's runs belong to the experiment: another command
// neither starts one over, resumes it nor adds a run among them, and the
// experiment resumes afterwards as before.
func TestExperimentRunsBelongToExperiment(t *testing.T) {
	text := textCorpus(t)
	idx := writeIDX(t, filepath.Join(t.TempDir(), "idx"), 40, 8)
	for _, c := range []struct {
		exp, run []string
		runDir   string // the experiment's run, under runs/
	}{
		{
			[]string{"experiment", "gpt", "--text", text, "--n-layer", "1", "--n-embd", "16", "--n-head", "2", "--block-size", "16",
				"--micro-batch", "2", "--steps", "2", "--warmup", "1", "--eval-interval", "2", "--eval-iters", "1", "--lrs", "1e-3", "--seeds", "1",
				"--clip-modes", "global"},
			tinyGPT(t, text, 2), "lr=0.001/global/seed=1",
		},
		{
			[]string{"experiment", "images", "--data", idx, "--epochs", "1", "--batch", "8", "--methods", "sgd", "--seeds", "1"},
			[]string{"train", "images", "--data", idx, "--epochs", "1", "--batch", "8"}, "sgd/seed=1",
		},
	} {
		name := strings.Join(c.exp[:2], " ")
		exp := filepath.Join(t.TempDir(), "exp")
		mustRun(t, nil, append(slices.Clone(c.exp), "--out", exp)...)
		runDir := filepath.Join(exp, "runs", filepath.FromSlash(c.runDir))
		var rec runlayer.Record
		if b, err := os.ReadFile(filepath.Join(runDir, runlayer.RecordFile)); err != nil || json.Unmarshal(b, &rec) != nil {
			t.Fatalf("%s: the run's record: %v", name, err)
		}
		if want := strings.TrimPrefix(name, "experiment ") + " experiment"; name == "experiment gpt" && rec.Owner != want {
			t.Errorf("%s: the run's record %+v, want owner %q", name, rec, want)
		}
		before := snapshot(t, exp)
		for _, tc := range []struct{ out, start string }{
			{runDir, "--restart"}, {runDir, "--resume"}, {runDir, ""},
			{filepath.Join(exp, "runs", "mine"), ""},
		} {
			args := append(slices.Clone(c.run), "--out", tc.out)
			if tc.start != "" {
				args = append(args, tc.start)
			}
			r := psclip(t, "", nil, args...)
			refusedWith(t, name+": "+strings.Join(c.run[:2], " ")+" "+tc.start+" into its run", r, 2, "belongs to the", "experiment in "+exp)
		}
		if after := snapshot(t, exp); !slices.Equal(before, after) {
			t.Errorf("%s: the refused runs changed the experiment: %v, then %v", name, before, after)
		}
		mustRun(t, nil, append(slices.Clone(c.exp), "--out", exp, "--resume")...)
	}
}

// Issue 34: a start that fails, here on a file size limit of 0 (a full
// disk: no byte can be written) or a parent without write permission,
// leaves nothing behind: no new directory, no empty lock. (The file size
// limit is the full disk of a test: writes fail, as with ENOSPC, while
// empty files and directories are still made.)
func TestFailedStartLeavesNothing(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh to set a file size limit")
	}
	for _, args := range [][]string{
		tinyGPT(t, textCorpus(t), 2),
		{"experiment", "gpt", "--text", textCorpus(t), "--n-layer", "1", "--n-embd", "16", "--n-head", "2", "--block-size", "16",
			"--micro-batch", "2", "--steps", "2", "--warmup", "1", "--lrs", "1e-3", "--seeds", "1", "--clip-modes", "global"},
	} {
		name := strings.Join(args[:2], " ")
		parent := t.TempDir()
		out := filepath.Join(parent, "new", "run")
		cmd := exec.Command("sh", append([]string{"-c", `ulimit -f 0 && exec "$0" "$@"`, binary(t)}, append(args, "--out", out)...)...)
		b, err := cmd.CombinedOutput()
		if err == nil {
			t.Errorf("%s on a full disk: exit 0", name)
		}
		if es := dirEntries(t, parent); len(es) != 0 {
			t.Errorf("%s on a full disk (%s) left %v", name, strings.TrimSpace(string(b)), es)
		}

		// The run directory exists, empty, but takes no file.
		if os.Geteuid() == 0 {
			continue // root writes anywhere
		}
		empty := filepath.Join(parent, "empty")
		if err := os.Mkdir(empty, 0o555); err != nil {
			t.Fatal(err)
		}
		r := psclip(t, "", nil, append(slices.Clone(args), "--out", empty)...)
		if r.code == 0 {
			t.Errorf("%s into a read-only directory: exit 0", name)
		}
		if es := dirEntries(t, empty); len(es) != 0 {
			t.Errorf("%s into a read-only directory left %v", name, es)
		}
	}
}

// Issue 34: a run made by an earlier psclip, which wrote no record, is
// told by the lock file psclip has always left in a run directory: it
// resumes and starts over as before, and gains its record.
func TestEarlierRunsMigrate(t *testing.T) {
	args := append(tinyGPT(t, textCorpus(t), 6), "--ckpt-interval", "3")
	dir := t.TempDir()
	mustRun(t, nil, append(slices.Clone(args), "--out", dir)...)
	if err := os.Remove(filepath.Join(dir, runlayer.RecordFile)); err != nil { // as an earlier psclip left it
		t.Fatal(err)
	}
	mustRun(t, nil, append(slices.Clone(args), "--out", dir, "--resume")...)
	if _, err := os.Stat(filepath.Join(dir, runlayer.RecordFile)); err != nil {
		t.Errorf("the resumed run has no record: %v", err)
	}
	os.Remove(filepath.Join(dir, runlayer.RecordFile))
	mustRun(t, nil, append(slices.Clone(args), "--out", dir, "--restart")...)
}

// Issue 34: an --out that is a symbolic link to nothing is named as such.
func TestDanglingSymlinkOut(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "out")
	if err := os.Symlink(filepath.Join(dir, "nowhere"), link); err != nil {
		t.Skip(err)
	}
	for _, args := range [][]string{
		tinyGPT(t, textCorpus(t), 2),
		{"tail", "quadratic", "--runs", "50", "--T", "20000"}, // an output directory that is no run's
	} {
		r := psclip(t, "", nil, append(args, "--out", link)...)
		refusedWith(t, strings.Join(args[:2], " ")+" --out <dangling link>", r, 2, "--out "+link+" is a symbolic link to "+filepath.Join(dir, "nowhere")+", which does not exist")
	}
}
