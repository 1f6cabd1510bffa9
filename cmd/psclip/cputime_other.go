//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package main

import "time"

// cpuTime is 0 where the process's CPU time is not available: bench step
// then reports wall times only.
func cpuTime() time.Duration { return 0 }
