//go:build openblas

package kernels

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/psclip/psclip/kernels/internal/openblas"
)

// Run with:
//
//	CGO_ENABLED=1 go test -tags openblas -run OpenBLAS -v ./kernels/
//
// (Debian: apt-get install libopenblas-dev.) Select threads and shapes with
// subtest patterns, e.g. -run 'OpenBLASRatio/threads=1/alexnet/fc', and the
// micro-kernel with PSCLIP_KERNEL (avx2 times the AVX2 path on an AVX-512
// machine).

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

// TestOpenBLASRatio times Sgemm and cblas_sgemm with one and two threads
// each on the model shapes, alternating between them so that both see the
// same machine load, and logs the median throughputs and the ratios of the
// medians and of the best times (the latter is steadier on a busy machine).
func TestOpenBLASRatio(t *testing.T) {
	const rounds = 9
	for _, threads := range []int{1, 2} {
		t.Run(fmt.Sprintf("threads=%d", threads), func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(threads))
			openblas.SetThreads(threads)
			var table strings.Builder
			fmt.Fprintf(&table, "\n%s kernel, %d thread(s)\n", best.name, threads)
			fmt.Fprintf(&table, "| shape | m×n×k (×batch) | ours GFLOP/s | OpenBLAS GFLOP/s | ratio of medians | ratio of best |\n|---|---|---:|---:|---:|---:|\n")
			for _, s := range modelShapes {
				t.Run(s.name, func(t *testing.T) {
					ours, with := s.setup()
					theirs := func() { with(openblas.Sgemm) }
					ours()
					theirs()
					var to, tt []time.Duration
					for range rounds {
						to = append(to, timeIt(ours))
						tt = append(tt, timeIt(theirs))
					}
					mo, mt := median(to), median(tt)
					op := string("nt"[b2i(s.transA)]) + string("nt"[b2i(s.transB)])
					fmt.Fprintf(&table, "| %s | %s %d×%d×%d ×%d | %.1f | %.1f | %.2f | %.2f |\n", s.name, op, s.m, s.n, s.k, s.batch,
						s.flops()/mo.Seconds()/1e9, s.flops()/mt.Seconds()/1e9, mt.Seconds()/mo.Seconds(), slices.Min(tt).Seconds()/slices.Min(to).Seconds())
				})
			}
			t.Log(table.String())
		})
	}
}

func timeIt(f func()) time.Duration {
	start := time.Now()
	f()
	return time.Since(start)
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
