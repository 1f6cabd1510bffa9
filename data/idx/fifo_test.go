//go:build unix

package idx

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/psclip/psclip/internal/regfile"
)

// TestFIFORefused puts a FIFO no one writes to in place of the training
// images: Load must refuse it at once instead of waiting for a writer.
func TestFIFORefused(t *testing.T) {
	dir := writeSet(t, 3, 2, 28, 28)
	path := filepath.Join(dir, trainImages+".gz")
	os.Remove(path)
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skip("cannot make a FIFO:", err)
	}
	done := make(chan error, 1)
	go func() { _, _, err := Load(dir); done <- err }()
	select {
	case err := <-done:
		var nr *regfile.NotRegularError
		if !errors.As(err, &nr) || nr.Path != path {
			t.Errorf("error %v, want one naming the FIFO %s", err, path)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Load blocked on a FIFO")
	}
}
