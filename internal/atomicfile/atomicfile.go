// Package atomicfile writes files so that a reader never sees a partial one:
// the data goes to a temporary file in the same directory, is synced to disk,
// and is renamed over the destination only when complete.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Write calls fill with a file open for writing and, if fill succeeds,
// atomically replaces path with what it wrote, with mode 0644. On any error the destination
// is left untouched and the temporary file is removed.
func Write(path string, fill func(f *os.File) error) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, tempPrefix(path)+"*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	// CreateTemp makes the file private (0600); outputs are ordinary files
	// that other users and tools read.
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = fill(f); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	// Sync the directory so the rename itself survives a crash.
	if d, derr := os.Open(dir); derr == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// WriteFile atomically replaces path with data. Files are created with mode
// 0644, like the outputs of most tools.
func WriteFile(path string, data []byte) error {
	return Write(path, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	})
}

// tempPrefix starts the names of Write's temporary files for path;
// os.CreateTemp appends a random decimal number.
func tempPrefix(path string) string { return "." + filepath.Base(path) + ".tmp" }

// RemoveStale removes the temporary files that Writes to path left behind
// when their process was killed before the rename. A writer of large files
// that may be killed, such as a checkpoint, calls it before Write so that
// every crash does not leave a copy behind. No other process may be writing
// path at the time.
func RemoveStale(path string) error {
	dir, prefix := filepath.Dir(path), tempPrefix(path)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || rest == "" || strings.Trim(rest, "0123456789") != "" || !e.Type().IsRegular() {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}
