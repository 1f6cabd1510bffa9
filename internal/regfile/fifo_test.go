//go:build unix

package regfile

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestFIFORefusedWithoutBlocking opens a FIFO no one writes to: os.Open
// would wait forever.
func TestFIFORefusedWithoutBlocking(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skip("cannot make a FIFO:", err)
	}
	done := make(chan error, 1)
	go func() { _, _, err := Open(path); done <- err }()
	select {
	case err := <-done:
		var nr *NotRegularError
		if !errors.As(err, &nr) || nr.Path != path {
			t.Errorf("Open of a FIFO: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Open blocked on a FIFO")
	}
}
