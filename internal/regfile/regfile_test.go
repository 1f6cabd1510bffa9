package regfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	want := strings.Repeat("psclip\n", 1000)
	os.WriteFile(path, []byte(want), 0o644)
	if b, err := ReadFile(path); err != nil || string(b) != want {
		t.Errorf("regular file: %d bytes, %v", len(b), err)
	}
	var nr *NotRegularError
	if _, err := ReadFile(dir); !errors.As(err, &nr) || !strings.Contains(err.Error(), "not a regular file (a directory)") {
		t.Errorf("directory: %v", err)
	}
	if _, err := ReadFile(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}
