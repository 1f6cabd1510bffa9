//go:build purego || !amd64

package kernels

// maxPool2x2Rows is nil: only amd64 has the row kernel (AVX2).
var maxPool2x2Rows func(x, y *float32, idx *int32, oh, w int)
