// Package provenance records where and how a result was made, so that a
// number in a README can be traced to a file and rerun: the command, the
// commit of the binary, the CPU and the vector width its kernels used, the
// thread count and the machine's load before and after.
//
// Every results file psclip's commands write as evidence carries one
// Record under the JSON key "provenance".
package provenance

import (
	"cmp"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/psclip/psclip/kernels"
)

// Record is the provenance of one result.
type Record struct {
	// Command is the command line, with the program's path reduced to its
	// base name.
	Command []string `json:"command"`
	// Commit is the VCS revision the binary was built from, with
	// "+dirty" when the tree had changes; for a binary built without VCS
	// information (go run, go test, GOFLAGS=-buildvcs=false) the commit
	// set at link time (buildCommit), or "unknown".
	Commit string `json:"commit"`
	// GoVersion, GOOS and GOARCH describe the build.
	GoVersion string `json:"go_version"`
	GOOS      string `json:"goos"`
	GOARCH    string `json:"goarch"`
	// CPU is the processor's model name ("unknown" where /proc does not
	// tell) and Kernel the GEMM micro-kernel that ran ("avx512", "avx2",
	// "neon", "go"), which sets the vector width.
	CPU    string `json:"cpu"`
	Kernel string `json:"kernel"`
	// Threads is GOMAXPROCS and CPUs the machine's logical CPUs.
	Threads int `json:"threads"`
	CPUs    int `json:"cpus"`
	// LoadBefore and LoadAfter are the one-minute load averages when the
	// work began and when Finish was called (0 where /proc does not tell):
	// a timing on a loaded machine means little without them.
	LoadBefore float64 `json:"load_before"`
	LoadAfter  float64 `json:"load_after"`
	// Started and Finished bound the work.
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished,omitzero"`
}

// New starts a record of the running process.
func New() Record {
	args := slices.Clone(os.Args)
	if len(args) > 0 {
		args[0] = filepath.Base(args[0])
	}
	return Record{
		Command:    args,
		Commit:     Commit(),
		GoVersion:  runtime.Version(),
		GOOS:       runtime.GOOS,
		GOARCH:     runtime.GOARCH,
		CPU:        cpuModel(),
		Kernel:     kernels.Name(),
		Threads:    runtime.GOMAXPROCS(0),
		CPUs:       runtime.NumCPU(),
		LoadBefore: Load(),
		Started:    time.Now().UTC().Truncate(time.Second),
	}
}

// Finish notes the load and the time at the end of the work.
func (r *Record) Finish() {
	r.LoadAfter = Load()
	r.Finished = time.Now().UTC().Truncate(time.Second)
}

// buildCommit names the commit where the binary carries no VCS
// information (GOFLAGS=-buildvcs=false, a build outside git): set it at
// link time with
//
//	go build -ldflags "-X github.com/psclip/psclip/provenance.buildCommit=$(git rev-parse HEAD)"
//
// as bench/evidence/run.sh does.
var buildCommit string

// Commit is the commit psclip was built from ("+dirty" with uncommitted
// changes), or "unknown".
func Commit() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return cmp.Or(buildCommit, "unknown")
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return cmp.Or(buildCommit, "unknown")
	}
	if dirty {
		rev += "+dirty"
	}
	return rev
}

// cpuModel is /proc/cpuinfo's first "model name" (x86) or, on arm64,
// its "CPU part" line, or "unknown".
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	for _, key := range []string{"model name", "CPU part"} {
		for line := range strings.Lines(string(b)) {
			k, v, ok := strings.Cut(line, ":")
			if ok && strings.TrimSpace(k) == key {
				return strings.TrimSpace(v)
			}
		}
	}
	return "unknown"
}

// Load is the system's one-minute load average, or 0 where /proc does not
// tell.
func Load() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	l, _ := strconv.ParseFloat(f[0], 64)
	return l
}
