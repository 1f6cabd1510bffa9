//go:build unix

package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFIFOInputsRefused: a named pipe given as a data file, a corpus or a
// checkpoint is refused at once instead of blocking on it.
func TestFIFOInputsRefused(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no named pipes here:", err)
	}
	bin := filepath.Join(dir, "bin")
	os.Mkdir(bin, 0o755)
	syscall.Mkfifo(filepath.Join(bin, "train.bin"), 0o644)
	os.WriteFile(filepath.Join(bin, "val.bin"), make([]byte, 64), 0o644)
	cifarFIFO := filepath.Join(dir, "cifar")
	os.Mkdir(cifarFIFO, 0o755)
	syscall.Mkfifo(filepath.Join(cifarFIFO, "train.bin"), 0o644)
	os.WriteFile(filepath.Join(cifarFIFO, "test.bin"), make([]byte, 3073), 0o644)
	for _, args := range [][]string{
		{"train", "gpt", "--text", fifo, "--out", filepath.Join(dir, "o1")},
		{"train", "gpt", "--data", bin, "--out", filepath.Join(dir, "o2")},
		{"train", "cifar", "--data", cifarFIFO, "--out", filepath.Join(dir, "o3")},
		{"sample", "--ckpt", fifo},
		{"tail", "--from", fifo},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		cmd := exec.CommandContext(ctx, binary(t), args...)
		var errOut bytes.Buffer
		cmd.Stderr = &errOut
		cmd.Run()
		blocked := ctx.Err() == context.DeadlineExceeded
		cancel()
		if blocked {
			t.Errorf("psclip %s: blocked on the FIFO", strings.Join(args, " "))
			continue
		}
		if code := cmd.ProcessState.ExitCode(); code == 0 || !strings.Contains(errOut.String(), "not a regular file") {
			t.Errorf("psclip %s: exit %d, stderr %q", strings.Join(args, " "), code, errOut.String())
		}
	}
}
