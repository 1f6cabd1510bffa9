package provenance

import (
	"encoding/json"
	"runtime"
	"slices"
	"testing"
	"time"
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

func TestMerge(t *testing.T) {
	at := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	gather := Record{Command: []string{"psclip", "experiment"}, Commit: "g", CPU: "here", Kernel: "go", Threads: 2, LoadBefore: 9, LoadAfter: 9,
		Started: at("2026-01-02T00:00:00Z"), Finished: at("2026-01-02T00:00:01Z")}
	a := Record{Command: []string{"a"}, Commit: "c1", CPU: "EPYC", Kernel: "avx2", Threads: 1, LoadBefore: 1, LoadAfter: 3,
		Started: at("2026-01-01T01:00:00Z"), Finished: at("2026-01-01T02:00:00Z")}
	b := Record{Command: []string{"b"}, Commit: "c1", CPU: "EPYC", Kernel: "avx2", Threads: 1, LoadBefore: 5, LoadAfter: 2,
		Started: at("2026-01-01T00:00:00Z"), Finished: at("2026-01-01T03:00:00Z")}
	old := Record{} // a run written before provenance was recorded
	dirty := a
	dirty.Commit, dirty.Kernel, dirty.Threads = "c2+dirty", "avx512", 2
	for _, tc := range []struct {
		name string
		runs []Record
		want Record
	}{
		{"no runs", nil, gather},
		{"agreeing runs", []Record{a, b}, Record{Command: gather.Command, Commit: "c1", CPU: "EPYC", Kernel: "avx2", Threads: 1,
			LoadBefore: 1, LoadAfter: 2, LoadMax: 5, Started: b.Started, Finished: b.Finished, Runs: 2}},
		{"mixed runs", []Record{a, dirty, old}, Record{Command: gather.Command, Commit: "c1, c2+dirty, unknown", CPU: "EPYC, unknown",
			Kernel: "avx2, avx512, unknown", Threads: 2, LoadBefore: 1, LoadAfter: 0, LoadMax: 3, Started: a.Started, Finished: a.Finished, Runs: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Merge(gather, tc.runs...)
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(tc.want)
			if string(g) != string(w) {
				t.Errorf("Merge:\n got %s\nwant %s", g, w)
			}
		})
	}
}
