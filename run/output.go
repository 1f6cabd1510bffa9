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
// its work, not after, that it cannot save the results. It leaves nothing
// behind: a command refused later for another reason leaves the file
// system as it was. A failure is an *OutputError.
func PrepareDir(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case err == nil && !fi.IsDir():
		return &OutputError{dir, errNotDir}
	case err == nil:
		return probe(dir, dir)
	case !errors.Is(err, fs.ErrNotExist):
		return &OutputError{dir, err}
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

// errNotDir is an output directory that exists as something else.
var errNotDir = errors.New("is a file, not a directory")

// PrepareFile checks that the output file at path can be written: its
// directory exists and takes new files, and path is not a directory. It
// creates nothing that stays. A failure is an *OutputError.
func PrepareFile(path string) error {
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.IsDir():
		return &OutputError{path, errors.New("is a directory, not a file")}
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return &OutputError{path, err}
	}
	return probe(filepath.Dir(path), path)
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
