//go:build purego || !(amd64 || arm64)

package kernels

// GramDot's tile kernels are nil: it forms its Gram matrices with Sgemm.
var (
	gramRowsTile  gramRowsTileFunc
	gramRowsSweep gramRowsSweepFunc
	gramColsTile  gramColsTileFunc
)
