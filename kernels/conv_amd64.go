//go:build !purego

package kernels

// im2colAsm is im2colMasked's copy in assembly where the machine and
// PSCLIP_KERNEL allow AVX-512, else nil.
var im2colAsm = func() func(x *float32, plane, c int, offs *int, taps int, masks *uint16, nvec int, dst *float32) {
	if vec == vecAVX512 {
		return im2colAVX512
	}
	return nil
}()

//go:noescape
func im2colAVX512(x *float32, plane, c int, offs *int, taps int, masks *uint16, nvec int, dst *float32)
