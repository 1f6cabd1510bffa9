package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"runtime"

	"github.com/psclip/psclip/bench"
	"github.com/psclip/psclip/kernels"
	"github.com/psclip/psclip/provenance"
)

func init() {
	register(&command{
		name:  "bench gemm",
		short: "time the float32 GEMM kernel (median of several runs after a warm-up), or alternate it with OpenBLAS's",
		run:   runBenchGemm,
	})
}

// gemmResult is the output of "bench gemm --json".
type gemmResult struct {
	M        int     `json:"m"`
	N        int     `json:"n"`
	K        int     `json:"k"`
	TransA   bool    `json:"trans_a"`
	TransB   bool    `json:"trans_b"`
	Runs     int     `json:"runs"`
	GFLOPS   float64 `json:"gflops"`
	MsMedian float64 `json:"ms_median"`
	// CPUMsMedian is the median of the CPU time the process used during
	// each timed call: on a shared machine, the time without the waits
	// for a core (0 where the process's CPU time is not read).
	CPUMsMedian float64 `json:"cpu_ms_median"`
	// Against is the other library's timing on the same operands, in the
	// same process, alternating with psclip's (--against).
	Against *againstResult `json:"against,omitempty"`
	// Provenance names the command, commit, CPU, psclip's micro-kernel,
	// the threads and the load.
	Provenance provenance.Record `json:"provenance"`
}

// maxThreads bounds --threads: the GEMM splits its work into at most so
// many goroutines, and far more than any machine's cores only adds
// overhead (or exhausts memory).
const maxThreads = 1024

// againstResult is another library's side of "bench gemm --against".
type againstResult struct {
	// Library is "openblas"; Core the CPU core its kernels were chosen
	// for (the vector width that ran) and Config its build line.
	Library     string  `json:"library"`
	Core        string  `json:"core"`
	Config      string  `json:"config"`
	GFLOPS      float64 `json:"gflops"`
	MsMedian    float64 `json:"ms_median"`
	CPUMsMedian float64 `json:"cpu_ms_median"`
	// Speed is the other library's median time over psclip's: above 1,
	// psclip is faster. CPUSpeed is the same in CPU time.
	Speed    float64 `json:"speed"`
	CPUSpeed float64 `json:"cpu_speed"`
}

// library is another GEMM library as bench gemm --against calls it: its
// GEMM, its thread setting, its core and its build line.
type library struct {
	sgemm      bench.Gemm
	setThreads func(int)
	core       func() string
	config     func() string
}

// openBLAS is OpenBLAS in a binary built with -tags openblas
// (bench_gemm_openblas.go), nil otherwise.
var openBLAS *library

// maxGemmElems bounds each operand (1 GiB of float32) so that a typo in a
// dimension is an error rather than an out-of-memory crash.
const maxGemmElems = 1 << 28

func runBenchGemm(fs *flag.FlagSet, args []string) error {
	m := fs.Int("m", 1024, "rows of op(A) and C")
	n := fs.Int("n", 1024, "columns of op(B) and C")
	k := fs.Int("k", 1024, "columns of op(A), rows of op(B)")
	transA := fs.Bool("trans-a", false, "A is stored k×m and used transposed")
	transB := fs.Bool("trans-b", false, "B is stored n×k and used transposed")
	threads := fs.Int("threads", runtime.GOMAXPROCS(0), "goroutines the GEMM may use (GOMAXPROCS), and the other library's threads")
	runs := fs.Int("runs", 10, "timed runs; the median is reported")
	against := fs.String("against", "", `time another library's GEMM too, alternating with psclip's in this process: "openblas" (needs a psclip built with CGO_ENABLED=1 -tags openblas)`)
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
	switch {
	case *against != "" && *against != "openblas":
		return usagef("--against %q: the only other library is openblas", *against)
	case *against == "openblas" && openBLAS == nil:
		return usagef("--against openblas: this psclip was built without OpenBLAS (build it with CGO_ENABLED=1 go build -tags openblas)")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(*threads))
	rec := provenance.New()
	flops := 2 * float64(*m) * float64(*n) * float64(*k)
	res := gemmResult{M: *m, N: *n, K: *k, TransA: *transA, TransB: *transB, Runs: *runs}
	gemms := []bench.Gemm{kernels.Sgemm}
	if *against != "" {
		openBLAS.setThreads(*threads)
		gemms = append(gemms, openBLAS.sgemm)
	}
	ms, cpu := bench.AlternateGemm(gemms, *transA, *transB, *m, *n, *k, *runs)
	res.MsMedian, res.CPUMsMedian = bench.Median(ms[0]), bench.Median(cpu[0])
	if *against != "" {
		o, oc := bench.Median(ms[1]), bench.Median(cpu[1])
		res.Against = &againstResult{Library: "openblas", Core: openBLAS.core(), Config: openBLAS.config(),
			MsMedian: o, CPUMsMedian: oc, GFLOPS: flops / o / 1e6, Speed: o / res.MsMedian}
		if res.CPUMsMedian > 0 {
			res.Against.CPUSpeed = oc / res.CPUMsMedian
		}
	}
	res.GFLOPS = flops / res.MsMedian / 1e6
	rec.Finish()
	res.Provenance = rec
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	op := func(t bool) string {
		if t {
			return "t"
		}
		return "n"
	}
	_, err := fmt.Fprintf(stdout, "sgemm %s%s %d×%d×%d, %d threads: %.3f ms median of %d, %.1f GFLOP/s\n",
		op(*transA), op(*transB), res.M, res.N, res.K, *threads, res.MsMedian, *runs, res.GFLOPS)
	if err == nil && res.Against != nil {
		a := res.Against
		_, err = fmt.Fprintf(stdout, "openblas (%s core): %.3f ms median, %.1f GFLOP/s; psclip %.2f× OpenBLAS's speed (%.2f× in CPU time)\n",
			a.Core, a.MsMedian, a.GFLOPS, a.Speed, a.CPUSpeed)
	}
	return err
}
