package run

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// PrepareDir checks that the output directory dir can be created (if it
// does not exist) and takes new files, so that a command finds out before
// its work, not after, that it cannot save the results. An output
// directory is a fresh place: one that does not exist or is empty, or,
// with replace, one whose files the command may replace. A run directory
// (one holding LockFile) is never one: it belongs to its run. PrepareDir
// leaves nothing behind: a command refused later for another reason leaves
// the file system as it was. A failure is an *OutputError, an
// *OverwriteError or a *DirKindError.
func PrepareDir(dir string, replace bool) error {
	fi, err := os.Stat(dir)
	switch {
	case err == nil && !fi.IsDir():
		return &OutputError{dir, errNotDir}
	case err == nil:
		if err := notRunDir(dir); err != nil {
			return err
		}
		if !replace {
			entries, err := os.ReadDir(dir)
			if err != nil {
				return &OutputError{dir, err}
			}
			if len(entries) > 0 {
				names := make([]string, len(entries))
				for i, e := range entries {
					names[i] = e.Name()
				}
				return &OverwriteError{Path: dir, Files: names}
			}
		}
		return probe(dir, dir)
	case !errors.Is(err, fs.ErrNotExist):
		return &OutputError{dir, err}
	}
	if err := danglingLink(dir); err != nil {
		return err
	}
	// The nearest existing ancestor must be a directory that takes the
	// new one.
	for p := filepath.Dir(dir); ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		switch {
		case err == nil && !fi.IsDir():
			return &OutputError{dir, fmt.Errorf("%s is a file, not a directory", p)}
		case err == nil:
			return probe(p, dir)
		case !errors.Is(err, fs.ErrNotExist) || p == filepath.Dir(p):
			return &OutputError{dir, err}
		}
	}
}

// danglingLink is an *OutputError if path, which does not exist, is a
// symbolic link to nothing: the directory cannot be made there.
func danglingLink(path string) error {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		target, _ := os.Readlink(path)
		return &OutputError{path, fmt.Errorf("is a symbolic link to %s, which does not exist", target)}
	}
	return nil
}

// errNotDir is an output directory that exists as something else.
var errNotDir = errors.New("is a file, not a directory")

// PrepareFile checks that the output file at path can be written: its
// directory exists, takes new files and is not a run directory (one
// holding LockFile, whose files belong to its run), and path is not a
// directory, nor, unless replace, an existing file (*OverwriteError). It
// creates nothing that stays. A failure is an *OutputError, an
// *OverwriteError or a *DirKindError.
func PrepareFile(path string, replace bool) error {
	fi, err := os.Lstat(path)
	switch {
	case err == nil && fi.IsDir():
		return &OutputError{path, errors.New("is a directory, not a file")}
	case err == nil && !replace:
		return &OverwriteError{Path: path}
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return &OutputError{path, err}
	}
	if err := notRunDir(filepath.Dir(path)); err != nil {
		return err
	}
	return probe(filepath.Dir(path), path)
}

// OverwriteError is an output that would replace files the command did not
// make in this invocation: an output directory that is not empty (Files
// lists what it holds), or an output file that exists (Files is empty).
// Nothing has been changed.
type OverwriteError struct {
	Path  string
	Files []string
}

func (e *OverwriteError) Error() string {
	if len(e.Files) == 0 {
		return fmt.Sprintf("%s exists; an output replaces a file only when asked to", e.Path)
	}
	return fmt.Sprintf("%s is not empty (%s); an output replaces files only when asked to", e.Path, fileList(e.Files))
}

// notRunDir refuses dir if it is a run or experiment directory: one that
// holds RecordFile or LockFile.
func notRunDir(dir string) error {
	if r, err := readRecord(dir); err != nil || r != nil {
		kind := ""
		if r != nil {
			kind = r.Kind
		}
		return &DirKindError{Dir: dir, Kind: kind}
	}
	if _, err := os.Lstat(filepath.Join(dir, LockFile)); err == nil {
		return &DirKindError{Dir: dir, Kind: dirKind(dir)}
	}
	return nil
}

// probe creates and removes a file in dir, the directory of the output
// path.
func probe(dir, path string) error {
	f, err := os.CreateTemp(dir, ".psclip-probe*")
	if err != nil {
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
			err = pe.Err // the path named is the output's, not the probe's
		}
		return &OutputError{path, err}
	}
	f.Close()
	return os.Remove(f.Name())
}
