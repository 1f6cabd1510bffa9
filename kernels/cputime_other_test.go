//go:build !linux

package kernels

import "time"

// threadCPU is 0 where the thread's CPU time is not read: benchmarks then
// report wall-clock rates only.
func threadCPU() time.Duration { return 0 }
