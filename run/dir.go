package run

import (
	"cmp"
	"errors"
	"fmt"
	"github.com/psclip/psclip/train"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
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
	// materialises (train.Config.PerSampleMemory); a ratio, the zero
	// value's 1.3 included, is to the plain step's memory as the run
	// measures it on its model (train.MemoryBudget.For), the same on a
	// resume, and the run's memory check, before anything is allocated,
	// counts the budget of the lower bound (the models' TrainingBytes).
	// Like Comm it is how the run computes, not what: it changes the
	// order of the clipped gradient's float32 additions, so a run resumed
	// under another budget continues exactly only up to that order. A
	// budget other than the zero value needs a per-sample estimator.
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
	// RecordFile (and its LockFile, for earlier psclip versions), it keeps
	// the directory to runs of that kind (a *DirKindError). Empty: not
	// checked.
	Kind string
	// Owner is who the directory Out is for: empty for the command that
	// runs (UserCommand), or the kind of the experiment whose run it is
	// (Experiment.RunOptions sets it). Recorded in its RecordFile, it keeps
	// an experiment's runs to that experiment (*OwnerError).
	Owner string
	// Gather names, for an experiment (OpenExperiment), other experiments
	// of its kind whose runs it takes over before it trains any: the parts
	// of one study split to run in parallel, gathered into one directory.
	// Their runs are copied in (each part held by its lock meanwhile) and
	// then reused as with Resume: a finished run is read back if it has the
	// configuration and data asked of it, an unfinished one continues.
	// Excludes Restart.
	Gather []string
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
	// made is the outermost directory OpenDir made ("" if it made none),
	// claimed whether it wrote the first RecordFile, newLock whether it
	// made the LockFile: what a start that leaves no other file removes
	// again.
	made             string
	claimed, newLock bool
}

// OpenDir creates the directory o.Out if needed and locks it for this
// process, for a run that keeps the files named files in it.
//
// A directory is psclip's by the Record psclip wrote into it (RecordFile)
// when it made it, before any other file: its kind (o.Kind) and its owner
// (o.Owner: the user's command, or the experiment whose run it is). A
// directory of an earlier psclip, which wrote no record, is told by the
// LockFile psclip has always left in it, and its kind by the lock's second
// line or by its files; OpenDir then writes its record. So:
//
//   - a fresh run (neither o.Resume nor o.Restart) needs a new or empty
//     directory, or one of psclip's of its kind and owner that holds none
//     of files (*ExistsError otherwise);
//   - o.Restart starts over only a run psclip made, of the same kind and
//     owner, and o.Resume continues only such a run (*NotResumableError
//     when it holds none of files);
//   - a non-empty directory that is not psclip's is a *NotOwnedError, one
//     of another kind a *DirKindError, and a run of an experiment (under
//     its RunsDir) given to anything but that experiment an *OwnerError;
//   - another process holding the directory is a *LockedError.
//
// Every refusal comes before anything is written, and a start that fails
// (a full disk) removes what it made: no new directory, no empty lock.
// Holding the lock, OpenDir removes the temporary files that a killed
// write of one of files left.
func OpenDir(o Options, files ...string) (*Dir, error) {
	return openDir(o, nil, files...)
}

// openDir is OpenDir for a directory whose record holds config (an
// experiment's).
func openDir(o Options, config map[string]string, files ...string) (_ *Dir, err error) {
	if o.Resume && o.Restart {
		return nil, errors.New("run: Resume and Restart exclude each other")
	}
	owner := cmp.Or(o.Owner, UserCommand)
	fi, err := os.Stat(o.Out)
	if errors.Is(err, fs.ErrNotExist) {
		if err := danglingLink(o.Out); err != nil {
			return nil, err
		}
	}
	// The owner of a run is known before anything is made: a run under an
	// experiment's RunsDir is that experiment's.
	exp, expKind := experimentOf(o.Out)
	if exp != "" && expKind != owner {
		return nil, &OwnerError{Dir: o.Out, Owner: expKind, Experiment: exp, Want: owner}
	}
	d := &Dir{Path: o.Out}
	switch {
	case err == nil && !fi.IsDir():
		return nil, &OutputError{o.Out, errNotDir}
	case errors.Is(err, fs.ErrNotExist) && o.Resume:
		return nil, &NotResumableError{o.Out, "the directory does not exist"}
	case errors.Is(err, fs.ErrNotExist):
		if d.made, err = mkdirAll(o.Out); err != nil {
			return nil, &OutputError{o.Out, err}
		}
	case err != nil:
		return nil, &OutputError{o.Out, err}
	}
	// A start that fails from here on removes what it made.
	defer func() {
		if err != nil {
			d.undo()
		}
	}()
	rec, err := claim(o, owner)
	if err != nil {
		return nil, err
	}
	found := present(o.Out, files)
	switch {
	case !o.Resume && !o.Restart && len(found) > 0:
		return nil, &ExistsError{o.Out, found}
	case o.Resume && len(found) == 0:
		return nil, &NotResumableError{o.Out, "it holds no run (no checkpoint)"}
	case o.Resume && rec != nil && rec.Config != nil && config != nil:
		if diffs := configDiffs(rec.Config, config); diffs != nil {
			return nil, &ConfigChangedError{Dir: o.Out, Changes: diffs, Experiment: true}
		}
	}
	// The record comes first: a directory psclip takes is marked as its
	// own before it holds any other file of psclip's.
	newRecord := Record{Kind: o.Kind, Owner: owner, Config: config}
	if rec == nil {
		if err = writeRecord(o.Out, newRecord); err != nil {
			return nil, &OutputError{o.Out, err}
		}
		d.claimed = true
	}
	lockPath := filepath.Join(o.Out, LockFile)
	_, lerr := os.Lstat(lockPath)
	d.newLock = errors.Is(lerr, fs.ErrNotExist)
	if d.lock, err = lock(lockPath, o.Kind); err != nil {
		var le *LockedError
		if errors.As(err, &le) {
			d.made, d.claimed, d.newLock = "", false, false // the directory is another process's now
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
	// A restart records the run it starts, once the directory is its.
	if rec != nil && o.Restart {
		if err = writeRecord(o.Out, newRecord); err != nil {
			d.Close()
			return nil, &OutputError{o.Out, err}
		}
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

// claim checks that the directory o.Out may be used by owner for a run or
// experiment of kind o.Kind, and returns its record; nil if
// it has none yet (a new or empty directory, or one of an earlier psclip,
// told by its LockFile).
func claim(o Options, owner string) (*Record, error) {
	rec, err := readRecord(o.Out)
	if err != nil {
		return nil, err
	}
	if rec != nil {
		switch {
		case o.Kind != "" && rec.Kind != o.Kind:
			return nil, &DirKindError{Dir: o.Out, Kind: rec.Kind, Want: o.Kind}
		case rec.Owner != owner:
			exp, _ := experimentOf(o.Out)
			return nil, &OwnerError{Dir: o.Out, Owner: rec.Owner, Experiment: exp, Want: owner}
		}
		return rec, nil
	}
	if err := checkKind(o.Out, o.Kind); err != nil {
		return nil, err
	}
	names, err := entries(o.Out)
	if err != nil {
		return nil, &OutputError{o.Out, err}
	}
	if _, err := os.Lstat(filepath.Join(o.Out, LockFile)); len(names) > 0 && err != nil {
		return nil, &NotOwnedError{Dir: o.Out, Files: names}
	}
	return nil, nil
}

// checkKind refuses dir, which has no record, for a run or experiment of
// kind want (nothing to check if empty) when it belongs to another kind:
// the one its LockFile records, or, where it records none, a run when want
// is an experiment's and the directory holds a run's files, or the other
// way round.
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

// mkdirAll is os.MkdirAll, returning the outermost directory it made; on
// failure it removes what it made.
func mkdirAll(dir string) (made string, err error) {
	dir = filepath.Clean(dir)
	for p := dir; ; p = filepath.Dir(p) {
		if _, err := os.Lstat(p); err == nil || p == filepath.Dir(p) {
			break
		}
		made = p
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		(&Dir{Path: dir, made: made}).undo()
		return "", err
	}
	return made, nil
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

// Close releases the directory's lock. A directory that OpenDir made and
// that holds nothing but psclip's record and lock (a run that failed or was
// refused before it wrote a file) is removed: a start that did not happen
// leaves nothing behind. It may be called more than once.
func (d *Dir) Close() error {
	if d == nil || d.lock == nil {
		return nil
	}
	d.undo()
	err := d.lock.Close() // closing the descriptor releases the flock
	d.lock = nil
	return err
}

// undo removes what OpenDir made in d, if d holds nothing else: the
// record it wrote first, the lock file it made and the directories it
// made. A directory that holds another file stays.
func (d *Dir) undo() {
	names, err := entries(d.Path)
	switch {
	case err != nil: // not made, or only some of the directories above it
	case slices.ContainsFunc(names, func(n string) bool { return n != RecordFile && n != LockFile }):
		return
	default:
		if d.claimed {
			os.Remove(filepath.Join(d.Path, RecordFile))
		}
		if d.newLock {
			os.Remove(filepath.Join(d.Path, LockFile))
		}
	}
	if d.made == "" {
		return
	}
	// os.Remove leaves a directory that holds anything.
	made := filepath.Clean(d.made)
	for p := filepath.Clean(d.Path); ; p = filepath.Dir(p) {
		os.Remove(p)
		if p == made || p == filepath.Dir(p) {
			return
		}
	}
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
