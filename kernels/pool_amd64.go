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
