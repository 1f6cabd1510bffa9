//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package bench

import (
	"syscall"
	"time"
)

// CPUTime is the CPU time, user and system, the process has used so far.
func CPUTime() time.Duration {
	var r syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &r) != nil {
		return 0
	}
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}
