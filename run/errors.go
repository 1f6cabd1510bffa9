package run

import (
	"fmt"
	"strings"
)

// ExistsError is returned for a fresh run (neither Options.Resume nor
// Options.Restart) into a directory that already holds a run. Nothing in
// the directory has been changed.
type ExistsError struct {
	Dir   string
	Files []string // the run's files found there
}

func (e *ExistsError) Error() string {
	return fmt.Sprintf("%s already holds a run (%s): resume it, or restart it to start over", e.Dir, strings.Join(e.Files, ", "))
}

// LockedError is returned when another process holds the run directory's
// lock.
type LockedError struct {
	Dir string
	PID int // the holder's process id; 0 when it could not be read
}

func (e *LockedError) Error() string {
	who := "another process"
	if e.PID > 0 {
		who = fmt.Sprintf("process %d", e.PID)
	}
	return fmt.Sprintf("%s is in use by %s (one process per run directory)", e.Dir, who)
}

// NotResumableError is returned when a run cannot be resumed: there is no
// run or no checkpoint, or the log is missing or does not match the
// checkpoint, or the checkpoint was written without the run state a safe
// resume needs. Nothing in the directory has been changed.
type NotResumableError struct {
	Dir    string
	Reason string
}

func (e *NotResumableError) Error() string {
	return fmt.Sprintf("cannot resume the run in %s: %s", e.Dir, e.Reason)
}

// DataChangedError is returned when a run is resumed on data other than the
// data it was trained on.
type DataChangedError struct {
	Dir      string
	Was, Now string   // the sources of the run's data and of the data given now
	Changes  []string // what differs (Data.Diff)
}

func (e *DataChangedError) Error() string {
	return fmt.Sprintf("the run in %s was trained on other data (%s; now %s): %s", e.Dir, e.Was, e.Now, strings.Join(e.Changes, "; "))
}

// ConfigChangedError is returned when a run or an experiment is resumed,
// or a finished run reused, with a configuration other than its own.
type ConfigChangedError struct {
	Dir        string
	Changes    []string // "lr=0.1 (run 0.01)"
	Experiment bool     // Dir is an experiment's
}

func (e *ConfigChangedError) Error() string {
	what := "run"
	if e.Experiment {
		what = "experiment"
	}
	return fmt.Sprintf("the %s in %s has another configuration: %s", what, e.Dir, strings.Join(e.Changes, ", "))
}

// KindError is returned for a checkpoint written by another trainer than
// the one reading it.
type KindError struct {
	Path string
	Kind string // the trainer that wrote it ("cifar", "gpt"); "" if unknown
	Want string
}

func (e *KindError) Error() string {
	if e.Kind == "" {
		return fmt.Sprintf("%s is not a %s checkpoint", e.Path, e.Want)
	}
	return fmt.Sprintf("%s is a %s checkpoint, not a %s one", e.Path, e.Kind, e.Want)
}

// ResourceError is returned when a run would need more memory than the
// machine has, before anything is allocated.
type ResourceError struct {
	What string  // what needs the memory, e.g. "the model, its optimizer state and a batch's activations"
	Need float64 // bytes, estimated
	Have float64 // bytes the machine (or its memory limit) offers
}

func (e *ResourceError) Error() string {
	return fmt.Sprintf("%s need about %s, more than this machine's %s", e.What, bytesString(e.Need), bytesString(e.Have))
}

// bytesString formats a byte count in binary units.
func bytesString(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i := 0
	for b >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	if b >= 1e6 { // beyond EiB: say so plainly
		return fmt.Sprintf("%.3g %s", b, units[i])
	}
	return fmt.Sprintf("%.1f %s", b, units[i])
}

// DirKindError is returned for a directory that belongs to another kind of
// run than the one given it: a directory holds one kind of run or
// experiment, and an output that is not a run's goes into none of them.
type DirKindError struct {
	Dir  string
	Kind string // what the directory holds ("gpt run"); "" if unknown
	Want string // what was to use it; "" for an output that is no run's
}

func (e *DirKindError) Error() string {
	what := "a run directory"
	if e.Kind != "" {
		what = "the directory of " + article(e.Kind)
	}
	if e.Want == "" {
		return fmt.Sprintf("%s is %s, which holds only its run's files", e.Dir, what)
	}
	return fmt.Sprintf("%s is %s, not of %s: a directory holds one kind of run", e.Dir, what, article(e.Want))
}

// article prefixes a kind with "a" or "an", unless it has one.
func article(kind string) string {
	switch {
	case strings.HasPrefix(kind, "a "), strings.HasPrefix(kind, "an "):
		return kind
	case strings.ContainsRune("aeiou", rune(kind[0])):
		return "an " + kind
	}
	return "a " + kind
}

// NotOwnedError is returned for a directory that holds files psclip did
// not make: it has no RecordFile, nor the LockFile an earlier psclip left
// in its run directories. No run or experiment starts, starts over or
// resumes there. Nothing has been changed.
type NotOwnedError struct {
	Dir   string
	Files []string // what it holds
}

func (e *NotOwnedError) Error() string {
	return fmt.Sprintf("%s holds files psclip did not make (%s); a run needs a new or empty directory", e.Dir, fileList(e.Files))
}

// OwnerError is returned for a run directory that belongs to an
// experiment, given to anything but that experiment: another command, or
// another experiment. Nothing has been changed.
type OwnerError struct {
	Dir        string
	Owner      string // the experiment's kind ("gpt experiment")
	Experiment string // the experiment's directory; "" if not found
	Want       string // who wanted it: UserCommand, or another experiment's kind
}

func (e *OwnerError) Error() string {
	where := ""
	if e.Experiment != "" {
		where = " in " + e.Experiment
	}
	return fmt.Sprintf("%s belongs to the %s%s: only that experiment trains, resumes or starts over its runs", e.Dir, e.Owner, where)
}

// fileList names the first few of files, and says how many more there are.
func fileList(files []string) string {
	const show = 3
	if len(files) <= show {
		return strings.Join(files, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(files[:show], ", "), len(files)-show)
}
