//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package bench

import "time"

// CPUTime is 0 where the process's CPU time is not available: Interleave
// then reports wall times only.
func CPUTime() time.Duration { return 0 }
