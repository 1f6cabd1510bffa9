package run

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOwnership: a directory is psclip's by its record, of one kind and one
// owner. Files psclip did not make are neither started over, resumed nor
// mixed with a fresh run's; an experiment's runs are the experiment's; an
// experiment resumes only with its own configuration; a start that wrote
// nothing leaves nothing. Every refusal is typed and changes nothing.
func TestOwnership(t *testing.T) {
	const kind = "gpt run"
	var (
		notOwned *NotOwnedError
		owner    *OwnerError
		dirKind  *DirKindError
		changed  *ConfigChangedError
	)
	// A run of the user's command, with a log.
	userRun := t.TempDir()
	d, err := OpenDir(Options{Out: userRun, Kind: kind}, runFiles...)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(userRun, LogFile), []byte("{}\n"), 0o644)
	d.Close()
	var rec Record
	if b, err := os.ReadFile(filepath.Join(userRun, RecordFile)); err != nil || json.Unmarshal(b, &rec) != nil ||
		rec.Kind != kind || rec.Owner != UserCommand || rec.Created.IsZero() || rec.Psclip == "" {
		t.Fatalf("the record %+v (%v)", rec, err)
	}

	// An experiment and one of its runs.
	exp := filepath.Join(t.TempDir(), "exp")
	type study struct{ Settings []float64 }
	x, err := OpenExperiment(Options{Out: exp, Kind: "gpt experiment"}, study{[]float64{0.25}}, func() error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	ro := x.RunOptions("seed=1", "seed=1")
	ro.Kind = kind
	d, err = OpenDir(ro, runFiles...)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(ro.Out, LogFile), []byte("{}\n"), 0o644)
	d.Close()
	x.Close()

	// Someone's own files.
	mine := t.TempDir()
	os.WriteFile(filepath.Join(mine, LogFile), []byte("mine\n"), 0o644)
	os.WriteFile(filepath.Join(mine, ResultFile), []byte("mine\n"), 0o644)

	for _, c := range []struct {
		name string
		o    Options
		want any // nil: opened
	}{
		{"restart of the user's run", Options{Out: userRun, Kind: kind, Restart: true}, nil},
		{"restart of it as another kind", Options{Out: userRun, Kind: "cifar run", Restart: true}, &dirKind},
		{"restart of it by an experiment", Options{Out: userRun, Kind: kind, Restart: true, Owner: "gpt experiment"}, &owner},
		{"fresh into someone's files", Options{Out: mine, Kind: kind}, &notOwned},
		{"restart over someone's files", Options{Out: mine, Kind: kind, Restart: true}, &notOwned},
		{"resume of someone's files", Options{Out: mine, Kind: kind, Resume: true}, &notOwned},
		{"restart of an experiment's run", Options{Out: ro.Out, Kind: kind, Restart: true}, &owner},
		{"resume of an experiment's run", Options{Out: ro.Out, Kind: kind, Resume: true}, &owner},
		{"a new run among an experiment's", Options{Out: filepath.Join(exp, RunsDir, "mine"), Kind: kind}, &owner},
		{"restart of an experiment's run by it", Options{Out: ro.Out, Kind: kind, Restart: true, Owner: "gpt experiment"}, nil},
	} {
		before := snapshot(t, filepath.Dir(c.o.Out))
		d, err := OpenDir(c.o, runFiles...)
		switch {
		case c.want == nil && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != nil && !errors.As(err, c.want):
			t.Errorf("%s: %v, want a %T", c.name, err, c.want)
		case c.want != nil && snapshot(t, filepath.Dir(c.o.Out)) != before:
			t.Errorf("%s: refused, but changed the directory", c.name)
		}
		d.Close()
	}

	// An experiment resumes only with its own configuration.
	for _, c := range []struct {
		config study
		want   any
	}{{study{[]float64{0.5}}, &changed}, {study{[]float64{0.25}}, nil}} {
		x, err := OpenExperiment(Options{Out: exp, Kind: "gpt experiment", Resume: true}, c.config, func() error { return nil })
		if c.want == nil && err != nil || c.want != nil && !errors.As(err, c.want) {
			t.Errorf("resume with %v: %v, want %T", c.config, err, c.want)
		}
		if x != nil {
			x.Close()
		}
	}

	// A run that wrote nothing leaves nothing: not its directory, not the
	// record or the lock in an empty one.
	parent := t.TempDir()
	for _, out := range []string{filepath.Join(parent, "new", "run"), parent} {
		d, err := OpenDir(Options{Out: out, Kind: kind}, runFiles...)
		if err != nil {
			t.Fatal(err)
		}
		d.Close()
		if es, _ := os.ReadDir(parent); len(es) != 0 {
			t.Errorf("%s: a run that wrote nothing left %v", out, es)
		}
	}
	// A directory that cannot be made (a name too long, after "a" was
	// made) leaves none of the ones above it.
	if _, err := OpenDir(Options{Out: filepath.Join(parent, "a", strings.Repeat("x", 300), "run"), Kind: kind}); err == nil {
		t.Error("a run under a name too long opened")
	}
	if _, err := os.Stat(filepath.Join(parent, "a")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a failed start left %s/a (%v)", parent, err)
	}
}
