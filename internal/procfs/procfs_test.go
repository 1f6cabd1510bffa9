package procfs

import (
	"os"
	"path/filepath"
	"testing"
)

func TestField(t *testing.T) {
	path := filepath.Join(t.TempDir(), "meminfo")
	os.WriteFile(path, []byte("MemTotal:       24576000 kB\nMemFree:  100 kB\nVmHWM:\n"), 0o644)
	for _, tc := range []struct {
		name string
		want float64
		ok   bool
	}{{"MemTotal:", 24576000, true}, {"MemFree:", 100, true}, {"VmHWM:", 0, false}, {"Nope:", 0, false}} {
		if v, ok := Field(path, tc.name); v != tc.want || ok != tc.ok {
			t.Errorf("%s: %v, %v; want %v, %v", tc.name, v, ok, tc.want, tc.ok)
		}
	}
	if _, ok := Field(filepath.Join(t.TempDir(), "missing"), "MemTotal:"); ok {
		t.Error("a missing file has a field")
	}
}
