//go:build !purego

package kernels

// im2colAsm and col2imAsm are im2colMasked's and col2imMasked's loops in
// assembly where the machine and PSCLIP_KERNEL allow AVX-512 or AVX2, else
// nil.
var im2colAsm, col2imAsm = func() (func(x *float32, plane, c int, offs *int, taps int, masks *uint16, nvec int, dst *float32), func(cols, x *float32, plane, c int, back *int, taps int, masks *uint16, nvec int)) {
	switch vec {
	case vecAVX512:
		return im2colAVX512, col2imAVX512
	case vecAVX2:
		return func(x *float32, plane, c int, offs *int, taps int, masks *uint16, nvec int, dst *float32) {
				im2colAVX2(x, plane, c, offs, taps, masks, nvec, dst, &laneBits[0])
			}, func(cols, x *float32, plane, c int, back *int, taps int, masks *uint16, nvec int) {
				col2imAVX2(cols, x, plane, c, back, taps, masks, nvec, &laneBits[0])
			}
	}
	return nil, nil
}()

// laneBits holds bit l in lane l: the AVX2 loops turn a 16-bit mask into
// lane masks with it.
var laneBits = [16]int32{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768}

//go:noescape
func im2colAVX512(x *float32, plane, c int, offs *int, taps int, masks *uint16, nvec int, dst *float32)

//go:noescape
func col2imAVX512(cols, x *float32, plane, c int, back *int, taps int, masks *uint16, nvec int)

//go:noescape
func im2colAVX2(x *float32, plane, c int, offs *int, taps int, masks *uint16, nvec int, dst *float32, bits *int32)

//go:noescape
func col2imAVX2(cols, x *float32, plane, c int, back *int, taps int, masks *uint16, nvec int, bits *int32)
