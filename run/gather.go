package run

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// gather copies into the experiment directory out, of kind kind, the runs
// of the experiments in parts: each a directory psclip made for an
// experiment of the same kind (the parts of a study split by method, seed
// or learning rate to train in parallel), held with its lock while it is
// read so that none of them may still be running. A run is a directory
// under a part's RunsDir that holds a RecordFile; it is copied to the same
// path under out's RunsDir unless out holds one there already (out's own
// run, or an earlier part's, is kept), into a hidden sibling first and
// renamed into place, so that a copy cut short leaves no run behind. The
// copied runs are then the experiment's as if it had trained them: a
// finished one is read back only if it was made with the configuration and
// data the experiment asks of it (Reuse), an unfinished one continues from
// its checkpoint. How many runs each part gave goes to progress.
func gather(out, kind string, parts []string, progress io.Writer) error {
	own, err := filepath.Abs(out)
	if err != nil {
		return &OutputError{out, err}
	}
	for _, part := range parts {
		abs, err := filepath.Abs(part)
		if err != nil {
			return &OutputError{part, err}
		}
		if abs == own {
			return &GatherError{Part: part, Reason: "it is the experiment's own directory"}
		}
		n, err := gatherPart(out, kind, part)
		if err != nil {
			return err
		}
		if progress != nil {
			fmt.Fprintf(progress, "gathered %d runs from %s\n", n, part)
		}
	}
	return nil
}

// gatherPart copies the runs of one part (see gather) and returns how many.
func gatherPart(out, kind, part string) (int, error) {
	fi, err := os.Stat(part)
	switch {
	case err != nil:
		return 0, &GatherError{Part: part, Reason: err.Error()}
	case !fi.IsDir():
		return 0, &GatherError{Part: part, Reason: "not a directory"}
	}
	rec, err := readRecord(part)
	if err != nil {
		return 0, err
	}
	switch {
	case rec == nil:
		return 0, &GatherError{Part: part, Reason: "psclip made no experiment there (no " + RecordFile + ")"}
	case rec.Kind != kind:
		return 0, &DirKindError{Dir: part, Kind: rec.Kind, Want: kind}
	}
	l, err := lock(filepath.Join(part, LockFile), kind)
	if err != nil {
		var le *LockedError
		if errors.As(err, &le) {
			le.Dir = part
			return 0, le
		}
		return 0, &OutputError{part, err}
	}
	defer l.Close() // closing the descriptor releases the lock
	from := filepath.Join(part, RunsDir)
	n := 0
	err = filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil || !d.IsDir() || path == from:
			return err
		case d.Name()[0] == '.':
			return fs.SkipDir // a copy an earlier gather left unfinished
		}
		r, err := readRecord(path)
		if err != nil || r == nil {
			return err // a directory of runs: look inside
		}
		if r.Owner != kind {
			return &OwnerError{Dir: path, Owner: r.Owner, Experiment: part, Want: kind}
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		dst := filepath.Join(out, RunsDir, rel)
		switch _, err := os.Lstat(dst); {
		case err == nil:
			return fs.SkipDir // the experiment holds this run already
		case !errors.Is(err, fs.ErrNotExist):
			return &OutputError{dst, err}
		}
		if err := copyRun(path, dst); err != nil {
			return &OutputError{dst, err}
		}
		n++
		return fs.SkipDir
	})
	if errors.Is(err, fs.ErrNotExist) && n == 0 {
		return 0, nil // a part that has not started a run yet
	}
	return n, err
}

// copyRun copies the run directory src to dst through a hidden sibling of
// dst, renamed into place once whole; a copy an earlier gather left there
// is removed first. The run's lock file stays behind: the lock is the
// holder's, and the copy takes its own when it is opened.
func copyRun(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	tmp := filepath.Join(filepath.Dir(dst), "."+filepath.Base(dst)+".gather")
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	if err := os.CopyFS(tmp, os.DirFS(src)); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	if err := os.Remove(filepath.Join(tmp, LockFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		os.RemoveAll(tmp)
		return err
	}
	return os.Rename(tmp, dst)
}

// GatherError is a directory given to an experiment to gather runs from
// that is not an experiment psclip made (see Options.Gather). Nothing has
// been copied from it.
type GatherError struct {
	Part   string
	Reason string
}

func (e *GatherError) Error() string {
	return fmt.Sprintf("cannot gather the runs of %s: %s", e.Part, e.Reason)
}
