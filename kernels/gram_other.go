//go:build purego || !amd64

package kernels

// gramTile is nil: GramDot forms its Gram matrices with Sgemm.
var gramTile func(k int, a, b []float32, ld int, c []float32, acc bool)
