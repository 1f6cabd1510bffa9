package provenance

import (
	"encoding/json"
	"runtime"
	"slices"
	"testing"
)

func TestNew(t *testing.T) {
	r := New()
	if r.Threads != runtime.GOMAXPROCS(0) || r.CPUs != runtime.NumCPU() || r.GOARCH != runtime.GOARCH {
		t.Errorf("threads %d, cpus %d, arch %s: not this process's", r.Threads, r.CPUs, r.GOARCH)
	}
	if !slices.Contains([]string{"avx512", "avx2", "neon", "go"}, r.Kernel) {
		t.Errorf("kernel %q is none of the micro-kernels", r.Kernel)
	}
	if r.CPU == "" || r.Commit == "" || len(r.Command) == 0 || r.Started.IsZero() {
		t.Errorf("incomplete record %+v", r)
	}
	r.Finish()
	if r.Finished.Before(r.Started) {
		t.Errorf("finished %v before started %v", r.Finished, r.Started)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"command", "commit", "cpu", "kernel", "threads", "load_before", "load_after"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON has no key %q: %s", k, b)
		}
	}
}
