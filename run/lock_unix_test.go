//go:build unix

package run

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestLock: a second process (here: a second open) is refused at once
// with the holder's PID; a holder killed with SIGKILL leaves no stale lock.
func TestLock(t *testing.T) {
	if dir := os.Getenv("PSCLIP_RUN_TEST_HOLD"); dir != "" { // the holder's side
		if _, err := OpenDir(Options{Out: dir, Restart: true}); err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		fmt.Println("locked")
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	dir := t.TempDir()
	d, err := OpenDir(Options{Out: dir})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = OpenDir(Options{Out: dir, Restart: true})
	var le *LockedError
	if !errors.As(err, &le) || le.PID != os.Getpid() || !strings.Contains(err.Error(), fmt.Sprint(os.Getpid())) || time.Since(start) > 2*time.Second {
		t.Fatalf("second open: %v after %v, want a *LockedError naming PID %d at once", err, time.Since(start), os.Getpid())
	}
	d.Close()

	cmd := exec.Command(os.Args[0], "-test.run=^TestLock$")
	cmd.Env = append(os.Environ(), "PSCLIP_RUN_TEST_HOLD="+dir)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 7)
	if _, err := out.Read(buf); err != nil || string(buf) != "locked\n" {
		t.Fatalf("holder: %q, %v", buf, err)
	}
	_, err = OpenDir(Options{Out: dir, Restart: true})
	if !errors.As(err, &le) || le.PID != cmd.Process.Pid {
		t.Errorf("while another process holds it: %v, want its PID %d", err, cmd.Process.Pid)
	}
	cmd.Process.Kill()
	cmd.Wait()
	d, err = OpenDir(Options{Out: dir, Restart: true})
	if err != nil {
		t.Fatalf("after the holder was killed: %v", err)
	}
	d.Close()
}
