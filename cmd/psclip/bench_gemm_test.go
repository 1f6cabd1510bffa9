package main

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/psclip/psclip/provenance"
)

func TestBenchGemmJSON(t *testing.T) {
	var code int
	var stderr string
	var out string
	code, out, stderr = runCLI("bench", "gemm", "--m", "37", "--n", "20", "--k", "64", "--trans-b", "--threads", "2", "--runs", "3", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res struct {
		M, N, K    int
		TransA     bool `json:"trans_a"`
		TransB     bool `json:"trans_b"`
		Runs       int
		GFLOPS     float64
		MsMedian   float64 `json:"ms_median"`
		Against    *json.RawMessage
		Provenance provenance.Record
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("output %q is not JSON: %v", out, err)
	}
	if res.M != 37 || res.N != 20 || res.K != 64 || res.TransA || !res.TransB || res.Runs != 3 || !(res.GFLOPS > 0) || !(res.MsMedian > 0) || res.Against != nil {
		t.Errorf("got %+v, want m=37 n=20 k=64 nt, 3 runs, positive gflops and ms_median, no other library", res)
	}
	if p := res.Provenance; p.Threads != 2 || p.Kernel == "" || len(p.Command) == 0 || p.Finished.IsZero() {
		t.Errorf("provenance %+v: want 2 threads, a kernel, the command, a finish time", p)
	}
	// 2·37·20·64 flops in ms_median milliseconds.
	if want := 2 * 37 * 20 * 64 / res.MsMedian / 1e6; math.Abs(res.GFLOPS-want) > 1e-9*want {
		t.Errorf("gflops %v, want %v from ms_median", res.GFLOPS, want)
	}
}

func TestBenchGemmText(t *testing.T) {
	var code int
	var out string
	code, out, _ = runCLI("bench", "gemm", "--m", "8", "--n", "8", "--k", "8", "--trans-a", "--runs", "1")
	if code != 0 || !strings.Contains(out, "sgemm tn 8×8×8") || !strings.Contains(out, "GFLOP/s") {
		t.Errorf("exit %d, output %q", code, out)
	}
}

func TestBenchGemmBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--m", "0"}, {"--k", "-3"}, {"--threads", "0"}, {"--runs", "0"}, {"--m", "100000", "--k", "100000"}, {"--size", "3"}, {"extra"},
		{"--against", "mkl"},
	} {
		code, _, stderr := runCLI(append([]string{"bench", "gemm"}, args...)...)
		if code != 2 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line", args, code, stderr)
		}
	}
}

// --against openblas alternates with OpenBLAS in a binary built with
// -tags openblas; without it, it is a usage error that says how to build
// one that has it.
func TestBenchGemmAgainstOpenBLAS(t *testing.T) {
	code, out, stderr := runCLI("bench", "gemm", "--m", "8", "--n", "8", "--k", "8", "--runs", "1", "--against", "openblas", "--json")
	if openBLAS == nil {
		if code != 2 || out != "" || !strings.Contains(stderr, "-tags openblas") {
			t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 naming -tags openblas", code, out, stderr)
		}
		return
	}
	var res struct {
		MsMedian    float64 `json:"ms_median"`
		CPUMsMedian float64 `json:"cpu_ms_median"`
		Against     struct {
			Library, Core string
			MsMedian      float64 `json:"ms_median"`
			CPUMsMedian   float64 `json:"cpu_ms_median"`
			Speed         float64
			CPUSpeed      float64 `json:"cpu_speed"`
		}
	}
	if err := json.Unmarshal([]byte(out), &res); code != 0 || err != nil {
		t.Fatalf("exit %d, %v: %s %s", code, err, out, stderr)
	}
	if a := res.Against; a.Library != "openblas" || a.Core == "" || math.Abs(a.Speed-a.MsMedian/res.MsMedian) > 1e-12*a.Speed ||
		(res.CPUMsMedian > 0 && math.Abs(a.CPUSpeed-a.CPUMsMedian/res.CPUMsMedian) > 1e-12*a.CPUSpeed) {
		t.Errorf("against %+v, psclip %v ms", a, res.MsMedian)
	}
}
