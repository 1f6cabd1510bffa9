package kernels

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
)

// TestParallel checks that Parallel runs every index exactly once and only
// those, whatever GOMAXPROCS, also when called from inside itself (nn's
// per-sample workers call Sgemm, which calls parallelFor).
func TestParallel(t *testing.T) {
	for _, procs := range []int{1, 2, 3} {
		for _, n := range []int{0, 1, 2, 3, 7, 64} {
			t.Run(fmt.Sprintf("procs=%d/n=%d", procs, n), func(t *testing.T) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				for range 50 {
					runs := make([]atomic.Int32, n)
					var inner atomic.Int32
					Parallel(n, func(w int) {
						runs[w].Add(1)
						Parallel(2, func(int) { inner.Add(1) })
					})
					for w := range runs {
						if got := runs[w].Load(); got != 1 {
							t.Fatalf("f(%d) ran %d times, want 1", w, got)
						}
					}
					if got := inner.Load(); got != int32(2*n) {
						t.Fatalf("nested calls ran f %d times, want %d", got, 2*n)
					}
				}
			})
		}
	}
}
