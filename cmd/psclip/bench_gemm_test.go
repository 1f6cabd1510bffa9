package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestBenchGemmJSON(t *testing.T) {
	var code int
	var stderr string
	var out string
	code, out, stderr = runCLI("bench", "gemm", "--m", "37", "--n", "20", "--k", "64", "--trans-b", "--threads", "2", "--runs", "3", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res map[string]float64
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("output %q is not JSON: %v", out, err)
	}
	if len(res) != 5 || res["m"] != 37 || res["n"] != 20 || res["k"] != 64 || !(res["gflops"] > 0) || !(res["ms_median"] > 0) {
		t.Errorf("got %v, want exactly m=37 n=20 k=64 and positive gflops and ms_median", res)
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
	} {
		code, _, stderr := runCLI(append([]string{"bench", "gemm"}, args...)...)
		if code != 2 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line", args, code, stderr)
		}
	}
}
