// Package regfile opens input files that must be regular files, without
// ever blocking: a FIFO, a device or a directory given where a file is
// expected is refused with a *NotRegularError instead of being read, since
// opening a FIFO waits for a writer that may never come and reading a device
// may never end.
package regfile

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
)

// NotRegularError is an input path that is not a regular file.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	what := ""
	switch {
	case e.Mode&fs.ModeNamedPipe != 0:
		what = " (a named pipe)"
	case e.Mode.IsDir():
		what = " (a directory)"
	case e.Mode&(fs.ModeDevice|fs.ModeCharDevice) != 0:
		what = " (a device)"
	case e.Mode&fs.ModeSocket != 0:
		what = " (a socket)"
	}
	return fmt.Sprintf("%s is not a regular file%s", e.Path, what)
}

// Open opens the regular file at path for reading and returns it with its
// size. It checks the file's type before opening it, and opens it
// non-blocking and checks again that it is the same regular file, so that
// a file replaced in between by a FIFO cannot block either.
func Open(path string) (*os.File, int64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, &NotRegularError{path, fi.Mode()}
	}
	f, err := os.OpenFile(path, os.O_RDONLY|nonBlock, 0)
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

// ReadFile reads the regular file at path whole, as os.ReadFile does, but
// refuses anything else without blocking.
func ReadFile(path string) ([]byte, error) {
	f, size, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var b bytes.Buffer
	b.Grow(int(size) + bytes.MinRead)
	if _, err := b.ReadFrom(f); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
