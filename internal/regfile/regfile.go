// Package regfile opens input files that must be regular files, refusing
// anything else (a FIFO, a device, a directory) without blocking on it.
package regfile

import (
	"fmt"
	"io/fs"
	"os"
)

// NotRegularError reports a path that is not a regular file.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	kind := "not a regular file"
	switch {
	case e.Mode.IsDir():
		kind = "a directory, not a regular file"
	case e.Mode&fs.ModeNamedPipe != 0:
		kind = "a named pipe, not a regular file"
	case e.Mode&fs.ModeDevice != 0:
		kind = "a device, not a regular file"
	}
	return fmt.Sprintf("%s is %s", e.Path, kind)
}

// Open opens path for reading and returns it with its size. The path is
// checked with Stat before it is opened, because opening a FIFO for reading
// blocks until a writer appears; the opened file is checked again, so that
// a file swapped in between is refused too.
func Open(path string) (*os.File, int64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, &NotRegularError{path, fi.Mode()}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	got, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if !got.Mode().IsRegular() || !os.SameFile(fi, got) {
		f.Close()
		return nil, 0, &NotRegularError{path, got.Mode()}
	}
	return f, got.Size(), nil
}
