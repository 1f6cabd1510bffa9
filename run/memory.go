package run

import (
	"os"
	"strconv"
	"strings"

	"github.com/psclip/psclip/internal/procfs"
)

// CheckMemory returns a *ResourceError when need bytes, an estimate of
// what is needed to train, exceed the memory of this machine (or the
// memory limit of its control group), so that a run that cannot fit is
// refused before it allocates. Where the machine's memory is unknown it
// returns nil.
func CheckMemory(what string, need float64) error {
	if have := MachineMemory(); have > 0 && need > have {
		return &ResourceError{What: what, Need: need, Have: have}
	}
	return nil
}

// MachineMemory is the memory available to this process in bytes: the
// machine's total memory, or its control group's limit if lower; 0 where
// neither can be read.
func MachineMemory() float64 {
	total := meminfoTotal()
	for _, path := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		if limit, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64); err == nil && limit > 0 && (total == 0 || limit < total) {
			total = limit
		}
	}
	return total
}

// meminfoTotal is MemTotal of /proc/meminfo in bytes, 0 if unreadable.
func meminfoTotal() float64 {
	kb, _ := procfs.Field("/proc/meminfo", "MemTotal:")
	return kb * 1024
}
