//go:build !purego

package kernels

// maxPool2x2Asm is maxPool2x2Blocks in NEON assembly (pool_arm64.s), or nil
// (the portable code) where PSCLIP_KERNEL picks the portable kernel.
var maxPool2x2Asm = func() func(x, y *float32, idx *int32, blocks int, tab *int32) {
	if vec == vecNEON {
		return maxPool2x2NEON
	}
	return nil
}()

//go:noescape
func maxPool2x2NEON(x, y *float32, idx *int32, blocks int, tab *int32)
