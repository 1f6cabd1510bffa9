//go:build unix

package run

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// lock takes an exclusive advisory lock (flock) on the file at path,
// creating it, and records this process and kind in it (writePID),
// without waiting: a lock another process holds is a
// *LockedError with its PID. The kernel releases the lock when the process
// ends, however it ends, so a killed run leaves no stale lock.
func lock(path, kind string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NONBLOCK, 0o644)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, errors.New(path + " is not a regular file")
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err != syscall.EINTR {
			break
		}
	}
	if errors.Is(err, syscall.EWOULDBLOCK) {
		f.Close()
		// The holder writes its PID just after locking: give it a moment.
		pid := holder(path)
		for i := 0; pid == 0 && i < 10; i++ {
			time.Sleep(10 * time.Millisecond)
			pid = holder(path)
		}
		return nil, &LockedError{PID: pid}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	if err := writePID(f, kind); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
