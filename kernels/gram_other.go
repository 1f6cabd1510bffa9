//go:build purego || !(amd64 || arm64)

package kernels

// GramDot's tile kernels are nil: it forms its Gram matrices with Sgemm.
var (
	gramRowsTile func(k int, a, b []float32, ld int, c []float32, n int, acc bool)
	gramColsTile func(k int, a, b []float32, ld int, c []float32, acc bool)
)
