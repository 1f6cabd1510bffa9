package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestWriteReplacesOnlyOnSuccess(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.json")
	if err := WriteFile(path, []byte("first")); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := Write(path, func(f *os.File) error {
		f.Write([]byte("partial"))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	got, _ := os.ReadFile(path)
	if string(got) != "first" {
		t.Fatalf("destination = %q after failed write, want %q", got, "first")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("temporary file left behind: %v", entries)
	}
}

func TestWriteIntoMissingDirectoryFails(t *testing.T) {
	if err := WriteFile(filepath.Join(t.TempDir(), "no", "such", "f"), nil); err == nil {
		t.Fatal("expected an error for a missing directory")
	}
}

func TestWriteMakesReadableFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.json")
	if err := WriteFile(path, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != 0o644 {
		t.Fatalf("mode %v, want 0644", got)
	}
}

// TestRemoveStale removes the temporaries of killed Writes to one path, and
// nothing else: not the destination, not other files' temporaries, not
// look-alike names.
func TestRemoveStale(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ckpt.safetensors")
	keep := []string{"ckpt.safetensors", ".other.tmp123", ".ckpt.safetensors.tmp", ".ckpt.safetensors.tmpx1", "ckpt.safetensors.tmp12"}
	for _, n := range append([]string{".ckpt.safetensors.tmp123", ".ckpt.safetensors.tmp4567890"}, keep...) {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A real one, left as a killed Write leaves it.
	f, err := os.CreateTemp(dir, tempPrefix(path)+"*")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := RemoveStale(path); err != nil {
		t.Fatal(err)
	}
	var left []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		left = append(left, e.Name())
	}
	slices.Sort(keep)
	if !slices.Equal(left, keep) {
		t.Errorf("left %v, want %v", left, keep)
	}
	if err := RemoveStale(filepath.Join(dir, "no", "such", "f")); err != nil {
		t.Errorf("missing directory: %v", err)
	}
}
