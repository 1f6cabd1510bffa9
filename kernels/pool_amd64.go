//go:build !purego

package kernels

// maxPool2x2Asm is maxPool2x2Blocks in assembly where the machine and
// PSCLIP_KERNEL allow AVX-512, else nil.
var maxPool2x2Asm = func() func(x, y *float32, idx *int32, blocks int, tab *int32) {
	if vec == vecAVX512 {
		return maxPool2x2AVX512
	}
	return nil
}()

//go:noescape
func maxPool2x2AVX512(x, y *float32, idx *int32, blocks int, tab *int32)

// maxPool2x2Rows is maxPool2x2 for one plane whose output rows are whole
// multiples of 8, in assembly where the machine and PSCLIP_KERNEL allow
// AVX2 but not AVX-512 (which pools by blocks), else nil.
var maxPool2x2Rows = func() func(x, y *float32, idx *int32, oh, w int) {
	if vec == vecAVX2 {
		return func(x, y *float32, idx *int32, oh, w int) { maxPool2x2AVX2(x, y, idx, oh, w, &evenLanes[0]) }
	}
	return nil
}()

// evenLanes holds 2l in lane l: the offsets of a0 in an 8-output step.
var evenLanes = [8]int32{0, 2, 4, 6, 8, 10, 12, 14}

//go:noescape
func maxPool2x2AVX2(x, y *float32, idx *int32, oh, w int, lanes *int32)
