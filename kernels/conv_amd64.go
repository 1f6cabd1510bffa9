//go:build !purego

package kernels

// im2colAsm and col2imAsm are im2colMasked's and col2imMasked's loops in
// assembly where the machine and PSCLIP_KERNEL allow AVX-512, else nil.
var im2colAsm, col2imAsm = func() (func(x *float32, plane, c int, offs *int, taps int, masks *uint16, nvec int, dst *float32), func(cols, x *float32, plane, c int, back *int, taps int, masks *uint16, nvec int)) {
	if vec == vecAVX512 {
		return im2colAVX512, col2imAVX512
	}
	return nil, nil
}()

//go:noescape
func im2colAVX512(x *float32, plane, c int, offs *int, taps int, masks *uint16, nvec int, dst *float32)

//go:noescape
func col2imAVX512(cols, x *float32, plane, c int, back *int, taps int, masks *uint16, nvec int)
