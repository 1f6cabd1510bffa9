package kernels

import (
	"syscall"
	"time"
)

// threadCPU is the CPU time the calling thread has used (RUSAGE_THREAD).
func threadCPU() time.Duration {
	const rusageThread = 1
	var r syscall.Rusage
	if syscall.Getrusage(rusageThread, &r) != nil {
		return 0
	}
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}
