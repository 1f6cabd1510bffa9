package run

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/psclip/psclip/internal/atomicfile"
	"github.com/psclip/psclip/internal/regfile"
	"github.com/psclip/psclip/provenance"
)

// RecordFile is the record psclip writes into every run or experiment
// directory it makes or takes, before any other file of it (Record): what
// makes the directory psclip's, of one kind and one owner.
const RecordFile = "psclip.json"

// UserCommand is the owner of a directory that a command made for itself
// (Options.Owner empty), rather than an experiment for one of its runs.
const UserCommand = "user command"

// Record is what psclip records about a directory it made, in RecordFile.
// A run directory is psclip's, and of its kind and owner, by this record,
// never by the names of the files it holds: a run is started over
// (Options.Restart) only where psclip recorded that it made a run of the
// same kind for the same owner.
type Record struct {
	// Kind is the directory's kind ("gpt run", "cifar experiment").
	Kind string `json:"kind"`
	// Owner is who made it: UserCommand, or the kind of the experiment
	// ("gpt experiment") whose run it is, under that experiment's RunsDir.
	Owner string `json:"owner"`
	// Created is when the directory was made, or last started over.
	Created time.Time `json:"created"`
	// Psclip is the commit of the psclip that made it (provenance.Commit).
	Psclip string `json:"psclip"`
	// Config is an experiment's configuration (ConfigMap), which a resumed
	// experiment must match; nil for a run, whose checkpoint holds it.
	Config map[string]string `json:"config,omitempty"`
}

// readRecord reads dir's RecordFile; nil, nil if there is none.
func readRecord(dir string) (*Record, error) {
	b, err := regfile.ReadFile(filepath.Join(dir, RecordFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, &OutputError{dir, err}
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil || r.Owner == "" {
		return nil, &OutputError{dir, fmt.Errorf("holds a damaged %s (move it away to let psclip take the directory over)", RecordFile)}
	}
	return &r, nil
}

// writeRecord writes r to dir's RecordFile, atomically.
func writeRecord(dir string, r Record) error {
	r.Created, r.Psclip = time.Now().UTC().Truncate(time.Second), provenance.Commit()
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(dir, RecordFile), append(b, '\n'))
}

// experimentOf finds the experiment whose RunsDir holds dir: the nearest
// ancestor E with dir under E/RunsDir that psclip recorded as an
// experiment's (its RecordFile, or the LockFile of an earlier psclip). It
// returns E and the experiment's kind; "", "" if there is none.
func experimentOf(dir string) (exp, kind string) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", ""
	}
	for p := filepath.Dir(abs); p != filepath.Dir(p); p = filepath.Dir(p) {
		if filepath.Base(p) != RunsDir {
			continue
		}
		e := filepath.Dir(p)
		k := dirKind(e)
		if r, err := readRecord(e); err == nil && r != nil {
			k = r.Kind
		}
		if strings.HasSuffix(k, "experiment") {
			return e, k
		}
	}
	return "", ""
}

// configDiffs lists how the configuration now differs from the one
// recorded, was: "settings=… (was …)"; nil if they are the same.
func configDiffs(was, now map[string]string) []string {
	var diffs []string
	keys := maps.Clone(was)
	maps.Copy(keys, now)
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		w, inWas := was[k]
		n, inNow := now[k]
		switch {
		case !inWas:
			diffs = append(diffs, fmt.Sprintf("%s=%s (not set before)", k, n))
		case !inNow:
			diffs = append(diffs, fmt.Sprintf("%s not set (was %s)", k, w))
		case w != n:
			diffs = append(diffs, fmt.Sprintf("%s=%s (was %s)", k, n, w))
		}
	}
	return diffs
}

// entries lists the names of what dir holds.
func entries(dir string) ([]string, error) {
	es, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(es))
	for i, e := range es {
		names[i] = e.Name()
	}
	return names, nil
}
