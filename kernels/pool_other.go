//go:build purego || !(amd64 || arm64)

package kernels

// maxPool2x2Asm is nil: the portable code pools.
var maxPool2x2Asm func(x, y *float32, idx *int32, blocks int, tab *int32)
