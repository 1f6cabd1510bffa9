package run

import (
	"errors"
	"fmt"
	"github.com/psclip/psclip/train"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/psclip/psclip/checkpoint"
	"github.com/psclip/psclip/dist"
	"github.com/psclip/psclip/internal/atomicfile"
)

// The files of a run directory.
const (
	// LogFile is the JSON-lines log: the trainer's records, in the order
	// they happened.
	LogFile = "log.jsonl"
	// CheckpointFile is the latest checkpoint; the one before it is kept
	// as checkpoint.PrevPath(CheckpointFile).
	CheckpointFile = "ckpt.safetensors"
	// ResultFile is a finished run's result (Run.Finish).
	ResultFile = "result.json"
	// LockFile holds the lock of the process using the directory, its PID
	// and, on a second line, the kind of the directory (Options.Kind). It
	// is never removed: removing a lock file another process has open
	// would let two processes hold "the" lock.
	LockFile = "psclip.lock"
)

// runFiles are the files that make a directory hold a run, and
// experimentFiles those that make it hold an experiment: a directory holds
// one or the other.
var (
	runFiles        = []string{LogFile, CheckpointFile, checkpoint.PrevPath(CheckpointFile), ResultFile}
	experimentFiles = []string{ResultsFile, RunsDir}
)

// Options say where a run writes and how it reports: what every trainer's
// run options hold.
type Options struct {
	// Out is the run directory, created if missing. Empty: no files, no
	// checkpoints, no resume.
	Out string
	// Resume continues the run checkpointed in Out, exactly: the result is
	// bit-identical to an uninterrupted run's. Restart deliberately starts
	// the run in Out over, discarding it. With neither, Out must not hold a
	// run (*ExistsError).
	Resume, Restart bool
	// Progress, if set, receives a progress line about once a second, and
	// warnings.
	Progress io.Writer
	// Label prefixes the progress lines.
	Label string
	// LogNorms logs the per-sample gradient norms of every step (see
	// Run.Norms); it needs an estimator that computes them.
	LogNorms bool
	// PerSampleMemory bounds the per-sample gradients a per-sample step
	// materialises (train.Config.PerSampleMemory); a ratio is to the plain
	// step's memory as the run estimates it before it allocates (the
	// models' TrainingBytes), and the run's memory check counts the
	// budget. Like Comm it is how the run computes, not what: it changes
	// the order of the clipped gradient's float32 additions, so a run
	// resumed under another budget continues exactly only up to that
	// order. It needs a per-sample estimator.
	PerSampleMemory train.MemoryBudget
	// AfterStep, if set, is called after every step with the number of
	// steps done (tests: interrupt a run at a chosen step).
	AfterStep func(done int)
	// ReadOnly reads Out (its checkpoint, with Resume) but neither locks
	// nor writes it: for the processes of a data-parallel run other than
	// the one that writes, which restore the same state and check the same
	// data but leave the directory to it.
	ReadOnly bool
	// Kind is the kind of the directory Out, such as "gpt run" or "gpt
	// experiment" (New sets a run's from Spec.Kind): recorded in its
	// LockFile, it keeps the directory to runs of that kind (a
	// *DirKindError). Empty: not checked, not recorded.
	Kind string
	// Comm makes the run data-parallel: its ranks train one model (each
	// passes Comm to its train.Trainer), rank 0 writes the directory and
	// reports progress, the others read it as with ReadOnly. nil: one
	// process. A checkpoint holds nothing of the ranks, so a run resumes
	// on any number of them.
	Comm dist.Comm
}

// OutputError is an output path that cannot be used: not a directory, or
// not writable.
type OutputError struct {
	Path string
	Err  error
}

func (e *OutputError) Error() string { return fmt.Sprintf("output %s %v", e.Path, e.Err) }
func (e *OutputError) Unwrap() error { return e.Err }

// Dir is a run directory held by this process (see OpenDir).
type Dir struct {
	Path string
	lock *os.File // nil where there is no file locking
}

// OpenDir creates the directory o.Out if needed and locks it for this
// process, for a run that keeps the files named files in it: a fresh run
// (neither o.Resume nor o.Restart) is refused with an *ExistsError when any
// of them exists, o.Resume with a *NotResumableError when none does, and
// either before anything is written. Another process holding the directory
// is a *LockedError. A directory of another kind than o.Kind (recorded in
// its LockFile, or, for an older one, told by the files it holds: a run's
// or an experiment's) is a *DirKindError. Once it holds the lock, it
// removes the temporary files that a killed write of one of files left.
func OpenDir(o Options, files ...string) (*Dir, error) {
	if o.Resume && o.Restart {
		return nil, errors.New("run: Resume and Restart exclude each other")
	}
	fi, err := os.Stat(o.Out)
	switch {
	case err == nil && !fi.IsDir():
		return nil, &OutputError{o.Out, errNotDir}
	case errors.Is(err, fs.ErrNotExist) && o.Resume:
		return nil, &NotResumableError{o.Out, "the directory does not exist"}
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(o.Out, 0o755); err != nil {
			return nil, &OutputError{o.Out, err}
		}
	case err != nil:
		return nil, &OutputError{o.Out, err}
	}
	if err := checkKind(o.Out, o.Kind); err != nil {
		return nil, err
	}
	found := present(o.Out, files)
	switch {
	case !o.Resume && !o.Restart && len(found) > 0:
		return nil, &ExistsError{o.Out, found}
	case o.Resume && len(found) == 0:
		return nil, &NotResumableError{o.Out, "it holds no run (no checkpoint)"}
	}
	d := &Dir{Path: o.Out}
	if d.lock, err = lock(filepath.Join(o.Out, LockFile), o.Kind); err != nil {
		var le *LockedError
		if errors.As(err, &le) {
			le.Dir = o.Out
			return nil, le
		}
		return nil, &OutputError{o.Out, err}
	}
	// Another process may have started a run between the check and the
	// lock.
	if found := present(o.Out, files); !o.Resume && !o.Restart && len(found) > 0 {
		d.Close()
		return nil, &ExistsError{o.Out, found}
	}
	// Holding the lock, no other process writes these files: the
	// temporary copies a killed write of one of them left are stale.
	for _, f := range files {
		if err := atomicfile.RemoveStale(filepath.Join(o.Out, f)); err != nil {
			d.Close()
			return nil, &OutputError{o.Out, err}
		}
	}
	return d, nil
}

// checkKind refuses dir for a run or experiment of kind want (nothing to
// check if empty) when it belongs to another kind: the one its LockFile
// records, or, where it records none, a run when want is an experiment's
// and the directory holds a run's files, or the other way round.
func checkKind(dir, want string) error {
	if want == "" {
		return nil
	}
	if k := dirKind(dir); k != "" {
		if k != want {
			return &DirKindError{Dir: dir, Kind: k, Want: want}
		}
		return nil
	}
	other, what := experimentFiles, "an experiment"
	if strings.HasSuffix(want, "experiment") {
		other, what = runFiles, "a run"
	}
	if len(present(dir, other)) > 0 {
		return &DirKindError{Dir: dir, Kind: what, Want: want}
	}
	return nil
}

// dirKind is the kind of directory its LockFile records; "" if none.
func dirKind(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, LockFile))
	if err != nil {
		return ""
	}
	return lockKind(b)
}

// lockKind is the kind a lock file's content b records on its second
// line; "" if none.
func lockKind(b []byte) string {
	_, rest, _ := strings.Cut(string(b), "\n")
	kind, _, _ := strings.Cut(rest, "\n")
	return strings.TrimSpace(kind)
}

// present lists the files of names that exist in dir.
func present(dir string, names []string) []string {
	var found []string
	for _, n := range names {
		if _, err := os.Lstat(filepath.Join(dir, n)); err == nil {
			found = append(found, n)
		}
	}
	return found
}

// Remove removes the named files from the directory, for a restart; files
// that do not exist are no error.
func (d *Dir) Remove(files ...string) error {
	for _, n := range files {
		if err := os.Remove(filepath.Join(d.Path, n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// Close releases the directory's lock. It may be called more than once.
func (d *Dir) Close() error {
	if d == nil || d.lock == nil {
		return nil
	}
	err := d.lock.Close() // closing the descriptor releases the flock
	d.lock = nil
	return err
}

// holder reads the PID a lock's holder wrote into path; 0 if unreadable.
func holder(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	first, _, _ := strings.Cut(string(b), "\n")
	pid, _ := strconv.Atoi(strings.TrimSpace(first))
	return pid
}

// writePID records this process as the lock's holder in f and, if kind is
// set, the kind of the directory; a kind recorded earlier is kept when
// kind is empty.
func writePID(f *os.File, kind string) error {
	if kind == "" {
		b, err := io.ReadAll(io.NewSectionReader(f, 0, 1<<10))
		if err != nil {
			return err
		}
		kind = lockKind(b)
	}
	if err := f.Truncate(0); err != nil {
		return err
	}
	s := strconv.Itoa(os.Getpid()) + "\n"
	if kind != "" {
		s += kind + "\n"
	}
	_, err := f.WriteAt([]byte(s), 0)
	return err
}
