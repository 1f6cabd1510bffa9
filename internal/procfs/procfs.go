// Package procfs reads the numbers Linux reports in /proc, where there is
// one: lines of the form "Name:   value [unit]", as in /proc/meminfo and
// /proc/self/status.
package procfs

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
)

// Field returns the number after name (e.g. "MemTotal:") in the file at
// path, in the file's unit (kB for the memory fields), and whether it was
// found.
func Field(path, name string) (float64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) >= 2 && f[0] == name {
			v, err := strconv.ParseFloat(f[1], 64)
			return v, err == nil
		}
	}
	return 0, false
}
