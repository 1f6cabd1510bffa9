package kernels

import (
	"fmt"
	"runtime"
	"slices"
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

// TestChunkBounds checks that chunkBounds covers the tiles in order with
// chunks of at least lo tiles, and cuts the last ones in two only where
// halves keep lo tiles.
func TestChunkBounds(t *testing.T) {
	for _, c := range []struct {
		tiles, chunks, lo, workers int
		want                       []int
	}{
		{64, 8, 4, 2, []int{0, 8, 16, 24, 32, 40, 48, 52, 56, 60, 64}},
		{64, 8, 5, 2, []int{0, 8, 16, 24, 32, 40, 48, 56, 64}},
		{12, 6, 2, 2, []int{0, 2, 4, 6, 8, 10, 12}},
		{10, 2, 2, 2, []int{0, 5, 10}},
		{30, 4, 2, 2, []int{0, 7, 15, 18, 22, 26, 30}},
		{1, 1, 1, 1, []int{0, 1}},
	} {
		if got := chunkBounds(c.tiles, c.chunks, c.lo, c.workers); !slices.Equal(got, c.want) {
			t.Errorf("chunkBounds(%d, %d, %d, %d) = %v, want %v", c.tiles, c.chunks, c.lo, c.workers, got, c.want)
		}
	}
}
