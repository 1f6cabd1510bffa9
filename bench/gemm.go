package bench

import (
	"math/rand/v2"
	"time"
)

// Gemm is a float32 GEMM with kernels.Sgemm's signature and meaning, so
// that other libraries' GEMMs can be timed on the same operands.
type Gemm func(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int)

// AlternateGemm times each of gemms on the same random m×n×k operands,
// stored compactly, rounds times, alternating between them (the first of
// a round rotates), and returns each one's durations in milliseconds: wall
// time, and the CPU time the process used meanwhile (CPUTime; zeros where
// it is not read), which on a machine shared with other jobs does not
// count the time a thread waited for a core.
//
// Every timed call follows a quiet process and 5 ms of untimed calls of
// the same GEMM, as in a loop of products: the library's threads are then
// awake, and no other library's threads still spin. (OpenBLAS's threads
// keep spinning for about a tenth of a second after a call, which would
// take a core from whatever runs next in the same process.) The thread
// count is each library's own setting: GOMAXPROCS for psclip's.
func AlternateGemm(gemms []Gemm, transA, transB bool, m, n, k, rounds int) (wall, cpu [][]float64) {
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
	wall, cpu = make([][]float64, len(gemms)), make([][]float64, len(gemms))
	for round := range rounds {
		for j := range gemms {
			i := (j + round) % len(gemms)
			call := func() { gemms[i](transA, transB, m, n, k, 1, a, max(lda, 1), b, max(ldb, 1), 0, c, max(n, 1)) }
			quiesce()
			for start := time.Now(); time.Since(start) < 5*time.Millisecond; {
				call()
			}
			start, c := time.Now(), CPUTime()
			call()
			wall[i] = append(wall[i], float64(time.Since(start).Nanoseconds())/1e6)
			cpu[i] = append(cpu[i], float64((CPUTime()-c).Nanoseconds())/1e6)
		}
	}
	return wall, cpu
}

// quiesce waits, up to a second, until the process has used less than a
// millisecond of CPU time in 10 ms: no thread of it still runs. Where the
// process's CPU time is not available it waits 10 ms.
func quiesce() {
	for range 100 {
		c := CPUTime()
		time.Sleep(10 * time.Millisecond)
		if CPUTime()-c < time.Millisecond {
			return
		}
	}
}
