package kernels

import (
	"math/rand/v2"
	"slices"
	"time"
)

// TimeSgemm measures Sgemm on random m×n×k operands, stored compactly: one
// untimed warm-up call, then runs timed calls. It returns the median
// duration, which shrugs off the outliers of a shared machine. Sgemm uses
// GOMAXPROCS goroutines, so set that to choose the thread count.
func TimeSgemm(transA, transB bool, m, n, k, runs int) time.Duration {
	r := rand.New(rand.NewPCG(1, 2))
	fill := func(n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = r.Float32()*2 - 1
		}
		return s
	}
	a, b, c := fill(m*k), fill(k*n), make([]float32, m*n)
	lda, ldb := k, n
	if transA {
		lda = m
	}
	if transB {
		ldb = k
	}
	times := make([]time.Duration, runs)
	for i := -1; i < runs; i++ {
		start := time.Now()
		Sgemm(transA, transB, m, n, k, 1, a, max(lda, 1), b, max(ldb, 1), 0, c, max(n, 1))
		if i >= 0 {
			times[i] = time.Since(start)
		}
	}
	slices.Sort(times)
	return times[runs/2]
}
