package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"runtime"

	"github.com/psclip/psclip/kernels"
)

func init() {
	register(&command{
		name:  "bench gemm",
		short: "time the float32 GEMM kernel (median of several runs after a warm-up)",
		run:   runBenchGemm,
	})
}

// gemmResult is the output of "bench gemm --json".
type gemmResult struct {
	M        int     `json:"m"`
	N        int     `json:"n"`
	K        int     `json:"k"`
	GFLOPS   float64 `json:"gflops"`
	MsMedian float64 `json:"ms_median"`
}

// maxThreads bounds --threads: the GEMM splits its work into at most so
// many goroutines, and far more than any machine's cores only adds
// overhead (or exhausts memory).
const maxThreads = 1024

// maxGemmElems bounds each operand (1 GiB of float32) so that a typo in a
// dimension is an error rather than an out-of-memory crash.
const maxGemmElems = 1 << 28

func runBenchGemm(fs *flag.FlagSet, args []string) error {
	m := fs.Int("m", 1024, "rows of op(A) and C")
	n := fs.Int("n", 1024, "columns of op(B) and C")
	k := fs.Int("k", 1024, "columns of op(A), rows of op(B)")
	transA := fs.Bool("trans-a", false, "A is stored k×m and used transposed")
	transB := fs.Bool("trans-b", false, "B is stored n×k and used transposed")
	threads := fs.Int("threads", runtime.GOMAXPROCS(0), "goroutines the GEMM may use (GOMAXPROCS)")
	runs := fs.Int("runs", 10, "timed runs; the median is reported")
	asJSON := fs.Bool("json", false, "print JSON instead of a line of text")
	if err := parse(fs, args); err != nil {
		return err
	}
	for _, d := range []struct {
		name string
		v    int
	}{{"m", *m}, {"n", *n}, {"k", *k}, {"threads", *threads}, {"runs", *runs}} {
		if d.v < 1 {
			return usagef("--%s %d: need at least 1", d.name, d.v)
		}
	}
	// Divided, not multiplied: a product of two sizes may overflow.
	if *m > maxGemmElems / *k || *k > maxGemmElems / *n || *m > maxGemmElems / *n {
		return usagef("--m %d --n %d --k %d: an operand would exceed %d elements", *m, *n, *k, maxGemmElems)
	}
	if *threads > maxThreads {
		return usagef("--threads %d: want at most %d", *threads, maxThreads)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(*threads))
	med := kernels.TimeSgemm(*transA, *transB, *m, *n, *k, *runs)
	res := gemmResult{M: *m, N: *n, K: *k, MsMedian: med.Seconds() * 1e3,
		GFLOPS: 2 * float64(*m) * float64(*n) * float64(*k) / med.Seconds() / 1e9}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(res)
	}
	op := func(t bool) string {
		if t {
			return "t"
		}
		return "n"
	}
	_, err := fmt.Fprintf(stdout, "sgemm %s%s %d×%d×%d, %d threads: %.3f ms median of %d, %.1f GFLOP/s\n",
		op(*transA), op(*transB), res.M, res.N, res.K, *threads, res.MsMedian, *runs, res.GFLOPS)
	return err
}
