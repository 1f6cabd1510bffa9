package regfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, size, err := Open(path)
	if err != nil || size != 5 {
		t.Fatalf("Open of a 5-byte file: size %d, %v", size, err)
	}
	f.Close()
	var nr *NotRegularError
	if _, _, err := Open(dir); !errors.As(err, &nr) || nr.Path != dir {
		t.Errorf("Open of a directory: %v", err)
	}
	if _, _, err := Open(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open of a missing file: %v", err)
	}
}
