package run

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGather: an experiment split into parts that ran apart is gathered
// into one directory: a finished run of a part is read back, not trained;
// an interrupted one continues exactly; a run no part holds is trained; a
// second gather copies nothing; the parts keep their runs. A part that is
// not an experiment of the kind, or is still running, is refused before
// anything is copied, with a typed error, and a fresh experiment that was
// refused leaves no directory.
func TestGather(t *testing.T) {
	const kind = "toy experiment"
	type study struct{ Parts string }
	noCheck := func() error { return nil }
	cfg := toyConfig{Steps: 7}
	root := t.TempDir()
	// part trains the runs named in path (a stop > 0 interrupts it there)
	// as an experiment of its own.
	part := func(name string, runs map[string]int) string {
		dir := filepath.Join(root, name)
		x, err := OpenExperiment(Options{Out: dir, Kind: kind}, study{name}, noCheck)
		if err != nil {
			t.Fatal(err)
		}
		defer x.Close()
		for path, stop := range runs {
			trainToy(t, cfg, x.RunOptions(path, strings.Split(path, "/")...), stop)
		}
		return dir
	}
	a := part("a", map[string]int{"a/seed=1": 0, "a/seed=2": 4})
	b := part("b", map[string]int{"b/seed=1": 0})
	whole := trainToy(t, cfg, Options{Out: filepath.Join(root, "whole")}, 0).w.Value.Data[0]
	before := map[string]string{a: snapshotRuns(t, a), b: snapshotRuns(t, b)}

	all := filepath.Join(root, "all")
	gathered := func(o Options) {
		t.Helper()
		x, err := OpenExperiment(o, study{"all"}, noCheck)
		if err != nil {
			t.Fatal(err)
		}
		defer x.Close()
		for _, c := range []struct {
			path    string
			trained bool
		}{{"a/seed=1", false}, {"a/seed=2", true}, {"b/seed=1", false}, {"c/seed=1", true}} {
			ro := x.RunOptions(c.path, strings.Split(c.path, "/")...)
			trained := false
			r, err := Reuse(ro, cfg, toyData, func(ro Options) (*map[string]any, error) {
				trained = true
				m, err := newToy(t, cfg, toyData, ro)
				if err != nil {
					return nil, err
				}
				if err := m.train(context.Background()); err != nil {
					return nil, err
				}
				return &map[string]any{"w": float64(m.w.Value.Data[0])}, nil
			})
			switch {
			case err != nil:
				t.Fatalf("%s: %v", c.path, err)
			case trained != c.trained && !o.Resume:
				t.Errorf("%s: trained %v, want %v", c.path, trained, c.trained)
			case trained && o.Resume:
				t.Errorf("%s: trained again in a resumed gather", c.path)
			case float32((*r)["w"].(float64)) != whole:
				t.Errorf("%s: w %v, want the uninterrupted run's %v", c.path, (*r)["w"], whole)
			}
		}
	}
	gathered(Options{Out: all, Kind: kind, Gather: []string{a, b}})
	gathered(Options{Out: all, Kind: kind, Gather: []string{a, b}, Resume: true})
	for dir, s := range before {
		if snapshotRuns(t, dir) != s {
			t.Errorf("gathering changed the runs of %s", dir)
		}
	}

	// Refusals.
	mine := filepath.Join(root, "mine")
	os.MkdirAll(filepath.Join(mine, RunsDir), 0o755)
	other := filepath.Join(root, "other")
	if x, err := OpenExperiment(Options{Out: other, Kind: "gpt experiment"}, study{}, noCheck); err != nil {
		t.Fatal(err)
	} else {
		os.Mkdir(filepath.Join(other, RunsDir), 0o755)
		x.Close()
	}
	busy := filepath.Join(root, "busy")
	held, err := OpenExperiment(Options{Out: busy, Kind: kind}, study{}, noCheck)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	var (
		ge *GatherError
		de *DirKindError
		le *LockedError
	)
	for _, c := range []struct {
		name string
		o    Options
		want any
	}{
		{"someone's directory", Options{Gather: []string{mine}}, &ge},
		{"a missing part", Options{Gather: []string{filepath.Join(root, "none")}}, &ge},
		{"another kind", Options{Gather: []string{other}}, &de},
		{"a part still running", Options{Gather: []string{busy}}, &le},
		{"itself", Options{Gather: []string{filepath.Join(root, "fresh")}}, &ge},
	} {
		c.o.Out, c.o.Kind = filepath.Join(root, "fresh"), kind
		x, err := OpenExperiment(c.o, study{}, noCheck)
		if !errors.As(err, c.want) {
			t.Errorf("%s: %v, want a %T", c.name, err, c.want)
		}
		if x != nil {
			x.Close()
		}
		if _, err := os.Stat(c.o.Out); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: refused, but left %s", c.name, c.o.Out)
		}
	}
	if _, err := OpenExperiment(Options{Out: all, Kind: kind, Gather: []string{a}, Restart: true}, study{"all"}, noCheck); err == nil {
		t.Error("a gather that starts over opened")
	}
}

// snapshotRuns is snapshot of dir's runs, without the lock files, which a
// gather takes.
func snapshotRuns(t *testing.T, dir string) string {
	t.Helper()
	var keep []string
	for _, l := range strings.Split(snapshot(t, filepath.Join(dir, RunsDir)), "\n") {
		if !strings.Contains(l, LockFile) {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}
