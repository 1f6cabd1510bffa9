//go:build !purego && (amd64 || arm64)

package kernels

//go:noescape
func prefetchL2(p *float32, n int)

// prefetch asks for s to be fetched into L2 ahead of its use. The packing
// loops read B (or Aᵀ) row by row, across every panel, a run of up to nc
// values of each of kc rows: more concurrent streams than the hardware
// prefetchers follow, so each row is requested a few rows ahead.
func prefetch(s []float32) {
	if len(s) > 0 {
		prefetchL2(&s[0], len(s))
	}
}
