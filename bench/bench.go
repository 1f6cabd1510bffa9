// Package bench times pieces of work, such as training steps of several
// estimators, interleaved in one process: every case runs once per round,
// in an order that rotates every round, so that no case always follows the
// same one (caches, garbage-collection debt) and load that drifts during
// the measurement falls on all cases alike. Compare cases by the ratio of
// their medians, or, less sensitive to drifting load, by the median of
// their ratios within a round (Ratios), whose distribution-free 95 %
// interval MedianCI95 gives.
package bench

import (
	"math"
	"runtime"
	"slices"
	"time"
)

// Result is one case's measurements over the timed rounds.
type Result struct {
	// WallMs and CPUMs are the wall time and the process's CPU time (user
	// and system, all threads; empty where unavailable) of each timed run,
	// in milliseconds. On a loaded machine CPU time tracks the work done
	// far more closely than wall time, which also counts waiting for a
	// core.
	WallMs, CPUMs []float64
	// AllocBytes is what the timed runs allocated in all.
	AllocBytes uint64
}

// Interleave runs every case warmup+rounds times, once per round in
// rotating order, and returns the measurements of the last rounds runs of
// each. progress, if not nil, is called after every round with the rounds
// done and their total. The first error stops it.
func Interleave(cases []func() error, warmup, rounds int, progress func(done, total int)) ([]Result, error) {
	res := make([]Result, len(cases))
	var ms runtime.MemStats
	for round := range warmup + rounds {
		for j := range cases {
			i := (j + round) % len(cases)
			runtime.ReadMemStats(&ms)
			before := ms.TotalAlloc
			cpu0 := CPUTime()
			start := time.Now()
			if err := cases[i](); err != nil {
				return nil, err
			}
			d := time.Since(start)
			cpu := CPUTime() - cpu0
			runtime.ReadMemStats(&ms)
			if round >= warmup {
				res[i].WallMs = append(res[i].WallMs, float64(d.Microseconds())/1000)
				if cpu > 0 {
					res[i].CPUMs = append(res[i].CPUMs, float64(cpu.Microseconds())/1000)
				}
				res[i].AllocBytes += ms.TotalAlloc - before
			}
		}
		if progress != nil {
			progress(round+1, warmup+rounds)
		}
	}
	return res, nil
}

// Median is the median of v (the mean of the middle two for an even
// count), NaN for none.
func Median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

// Ratios is a[r]/b[r] for every round r: the paired ratios of two cases'
// measurements.
func Ratios(a, b []float64) []float64 {
	r := make([]float64, min(len(a), len(b)))
	for i := range r {
		r[i] = a[i] / b[i]
	}
	return r
}
