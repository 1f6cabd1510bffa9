//go:build openblas && linux

package kernels

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/psclip/psclip/internal/openblas"
)

// Run with:
//
//	CGO_ENABLED=1 go test -tags openblas -run OpenBLAS -v ./kernels/
//
// (Debian: apt-get install libopenblas-dev.) Select threads and shapes with
// subtest patterns, e.g. -run 'OpenBLASRatio/threads=1/alexnet/fc', and the
// micro-kernel with PSCLIP_KERNEL (avx2 times the AVX2 path on an AVX-512
// machine; set OPENBLAS_CORETYPE=Haswell to match).

// TestOpenBLASAgrees checks Sgemm against cblas_sgemm, an independent
// implementation, on every model shape's first product.
func TestOpenBLASAgrees(t *testing.T) {
	for _, s := range modelShapes {
		_, with := s.setup()
		var ours, theirs []float32
		with(func(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
			if ours != nil {
				return
			}
			ours, theirs = make([]float32, m*ldc), make([]float32, m*ldc)
			Sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, ours, ldc)
			openblas.Sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, theirs, ldc)
		})
		for i := range ours {
			// Both sum k products of unit normals in float32, in different orders.
			if d := math.Abs(float64(ours[i] - theirs[i])); d > 1e-5*float64(s.k) {
				t.Fatalf("%s: C[%d] = %v, OpenBLAS %v", s.name, i, ours[i], theirs[i])
			}
		}
	}
}

// BenchmarkOpenBLAS is BenchmarkSgemm with cblas_sgemm on GOMAXPROCS
// threads, one product after another. Run in its own process, alternating
// with BenchmarkSgemm, it times each library without the other's threads:
// OpenBLAS's keep a core busy for a while after every call, which slows
// whatever runs next in the same process.
//
//	go test -tags openblas -run X -bench 'OpenBLAS$' -cpu 2 ./kernels/
func BenchmarkOpenBLAS(b *testing.B) {
	openblas.SetThreads(runtime.GOMAXPROCS(0))
	for _, s := range modelShapes {
		b.Run(s.name, func(b *testing.B) {
			_, with := s.setup()
			for b.Loop() {
				with(openblas.Sgemm)
			}
			reportGFLOPs(b, s.flops())
		})
	}
}

// TestOpenBLASRatio times Sgemm and cblas_sgemm with one and two threads
// each on the model shapes, alternating between them so that both see the
// same machine load, and logs the median throughputs, the ratios of the
// medians and of the best times (the latter is steadier on a busy machine)
// and how many cores each keeps busy (process CPU time over wall time,
// running back to back for a tenth of a second: fewer than the threads
// asked for means that the machine did not give them, or that the work did
// not split).
//
// Each timed call follows 5 ms of untimed ones, as in a loop of products:
// the helper goroutines and OpenBLAS's threads are then awake, and the
// cores busy (a product of a few hundred microseconds timed right after
// the machine idled ran a fifth slower). OpenBLAS's
// threads spin for a while after a call (2²⁸ cycles by default, about a
// tenth of a second), taking a core from whatever runs next, so ours is
// timed only once the process is quiet again; otherwise our second
// goroutine shares a core with a spinning thread, and two threads run no
// faster than one.
func TestOpenBLASRatio(t *testing.T) {
	const rounds = 9
	for _, threads := range []int{1, 2} {
		t.Run(fmt.Sprintf("threads=%d", threads), func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(threads))
			openblas.SetThreads(threads)
			var table strings.Builder
			fmt.Fprintf(&table, "\n%s kernel, %d thread(s)\n", best.name, threads)
			fmt.Fprintf(&table, "| shape | m×n×k (×batch) | ours GFLOP/s | OpenBLAS GFLOP/s | ratio of medians | ratio of best | ours cores | OpenBLAS cores |\n|---|---|---:|---:|---:|---:|---:|---:|\n")
			for _, s := range modelShapes {
				t.Run(s.name, func(t *testing.T) {
					ours, with := s.setup()
					theirs := func() { with(openblas.Sgemm) }
					var to, tt []time.Duration
					for range rounds {
						warm(theirs)
						tt = append(tt, timeIt(theirs))
						quiesce()
						warm(ours)
						to = append(to, timeIt(ours))
					}
					mo, mt := median(to), median(tt)
					op := string("nt"[b2i(s.transA)]) + string("nt"[b2i(s.transB)])
					fmt.Fprintf(&table, "| %s | %s %d×%d×%d ×%d | %.1f | %.1f | %.2f | %.2f | %.2f | %.2f |\n", s.name, op, s.m, s.n, s.k, s.batch,
						s.flops()/mo.Seconds()/1e9, s.flops()/mt.Seconds()/1e9, mt.Seconds()/mo.Seconds(), slices.Min(tt).Seconds()/slices.Min(to).Seconds(),
						cores(ours), cores(theirs))
				})
			}
			t.Log(table.String())
		})
	}
}

// warm runs f back to back for 5 ms, at least once.
func warm(f func()) {
	for start := time.Now(); ; {
		f()
		if time.Since(start) > 5*time.Millisecond {
			return
		}
	}
}

func timeIt(f func()) time.Duration {
	start := time.Now()
	f()
	return time.Since(start)
}

// cores runs f back to back for at least 100 ms, once the process is quiet,
// and returns the process's CPU time over that wall time. (A thread's CPU
// time reaches the process's only when it is switched out or at a clock
// tick, so a single short call cannot be measured this way.)
func cores(f func()) float64 {
	quiesce()
	c0, w0 := processCPU(), time.Now()
	for time.Since(w0) < 100*time.Millisecond {
		f()
	}
	return (processCPU() - c0).Seconds() / time.Since(w0).Seconds()
}

// quiesce waits, up to a second, until no thread of the process has run for
// 10 ms.
func quiesce() {
	for range 100 {
		c := processCPU()
		time.Sleep(10 * time.Millisecond)
		if processCPU()-c < time.Millisecond {
			return
		}
	}
}

// TestOpenBLASCPU compares Sgemm and cblas_sgemm on one thread by the CPU
// time of the calling thread (CLOCK_THREAD_CPUTIME_ID, Linux), which on a
// machine shared with other jobs does not count the time the thread waits
// for a core, as the wall clock does. Each figure is the best of five
// measurements of at least 20 ms, alternating between the two.
func TestOpenBLASCPU(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	openblas.SetThreads(1)
	var table strings.Builder
	fmt.Fprintf(&table, "\n%s kernel, 1 thread, thread CPU time\n", best.name)
	fmt.Fprintf(&table, "| shape | m×n×k (×batch) | ours GFLOP/s | OpenBLAS GFLOP/s | ratio |\n|---|---|---:|---:|---:|\n")
	for _, s := range modelShapes {
		t.Run(s.name, func(t *testing.T) {
			runtime.LockOSThread() // one thread's clock for the whole subtest
			defer runtime.UnlockOSThread()
			ours, with := s.setup()
			theirs := func() { with(openblas.Sgemm) }
			ro, rt := repsFor(ours), repsFor(theirs)
			var bo, bt time.Duration
			for i := range 5 {
				o, th := cpuTime(ours, ro), cpuTime(theirs, rt)
				if i == 0 || o < bo {
					bo = o
				}
				if i == 0 || th < bt {
					bt = th
				}
			}
			op := string("nt"[b2i(s.transA)]) + string("nt"[b2i(s.transB)])
			fmt.Fprintf(&table, "| %s | %s %d×%d×%d ×%d | %.1f | %.1f | %.2f |\n", s.name, op, s.m, s.n, s.k, s.batch,
				s.flops()/bo.Seconds()/1e9, s.flops()/bt.Seconds()/1e9, bt.Seconds()/bo.Seconds())
		})
	}
	t.Log(table.String())
}

// repsFor returns how many calls of f take at least 20 ms of CPU time.
func repsFor(f func()) int {
	reps := 1
	for cpuTime(f, reps)*time.Duration(reps) < 20*time.Millisecond {
		reps *= 2
	}
	return reps
}

// cpuTime returns the calling thread's CPU time per call of f over reps calls.
func cpuTime(f func(), reps int) time.Duration {
	start := threadCPU()
	for range reps {
		f()
	}
	return (threadCPU() - start) / time.Duration(reps)
}

// processCPU returns the CPU time of the whole process (threadCPU, in
// cputime_linux_test.go, the calling thread's).
func processCPU() time.Duration { return cpuClock(2) } // CLOCK_PROCESS_CPUTIME_ID

func cpuClock(id uintptr) time.Duration {
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, id, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		panic(e)
	}
	return time.Duration(ts.Nano())
}

func median(d []time.Duration) time.Duration {
	d = slices.Clone(d)
	slices.Sort(d)
	return d[len(d)/2]
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
