//go:build !purego

#include "textflag.h"

// func im2colAVX512(x *float32, plane, c int, offs *int, taps int, masks *uint16, nvec int, dst *float32)
//
// im2colMasked on AVX-512: for each of the c planes of x (plane floats
// apart) and each tap t, nvec vectors of 16 floats loaded from the plane at
// offset offs[t] under the masks masks[t·nvec…] (zero where the tap falls
// outside the image: masked lanes are neither read nor fault), stored one
// after the other at dst.
TEXT ·im2colAVX512(SB), NOSPLIT, $0-64
	MOVQ x+0(FP), SI
	MOVQ plane+8(FP), BX
	SHLQ $2, BX
	MOVQ c+16(FP), CX
	MOVQ taps+32(FP), R10
	MOVQ nvec+48(FP), R9
	MOVQ dst+56(FP), DI
im2col_channel:
	MOVQ offs+24(FP), R13
	MOVQ masks+40(FP), R12
	MOVQ R10, R11
im2col_tap:
	MOVQ (R13), AX
	LEAQ (SI)(AX*4), DX
	MOVQ R9, AX
im2col_vec:
	KMOVW (R12), K1
	VMOVUPS.Z (DX), K1, Z0
	VMOVUPS Z0, (DI)
	ADDQ $64, DX
	ADDQ $64, DI
	ADDQ $2, R12
	DECQ AX
	JNZ im2col_vec
	ADDQ $8, R13
	DECQ R11
	JNZ im2col_tap
	ADDQ BX, SI
	DECQ CX
	JNZ im2col_channel
	VZEROUPPER
	RET

// func col2imAVX512(cols, x *float32, plane, c int, back *int, taps int, masks *uint16, nvec int)
//
// col2imMasked on AVX-512: for each of the c planes of x (plane floats
// apart) and each of its nvec 16-float vectors, the vector is loaded once,
// each tap t in order adds the values of its row of cols that land there,
// from back[t] bytes past the vector's position in the channel's first row
// under the mask masks[v·taps+t] (merge-masked adds: the other elements
// are left as they are, and masked lanes are neither read nor fault), and
// the vector is stored once.
TEXT ·col2imAVX512(SB), NOSPLIT, $0-64
	MOVQ cols+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ plane+16(FP), BX
	SHLQ $2, BX
	MOVQ c+24(FP), CX
	MOVQ taps+40(FP), R10
	SHLQ $3, R10
	ADDQ back+32(FP), R10 // the end of back
	MOVQ nvec+56(FP), R9
col2im_channel:
	MOVQ masks+48(FP), R12
	XORQ R8, R8
	MOVQ R9, DX
col2im_vec:
	VMOVUPS (SI)(R8*1), Z0
	LEAQ (DI)(R8*1), AX
	MOVQ back+32(FP), R13
col2im_tap:
	MOVQ (R13), R11
	KMOVW (R12), K1
	VADDPS (AX)(R11*1), Z0, K1, Z0
	ADDQ $8, R13
	ADDQ $2, R12
	CMPQ R13, R10
	JNE col2im_tap
	VMOVUPS Z0, (SI)(R8*1)
	ADDQ $64, R8
	DECQ DX
	JNZ col2im_vec
	ADDQ BX, SI
	MOVQ taps+40(FP), R11
	IMULQ BX, R11
	ADDQ R11, DI
	DECQ CX
	JNZ col2im_channel
	VZEROUPPER
	RET

// func im2colAVX2(x *float32, plane, c int, offs *int, taps int, masks *uint16, nvec int, dst *float32, bits *int32)
//
// im2colAVX512 on AVX2: each 16-float vector as two masked loads of 8
// (VMASKMOVPS: masked lanes are neither read nor fault), their lane masks
// made from the 16-bit mask and the lanes' bits (1, 2, …, 32768) at bits.
// The mask is broadcast from 4 bytes of memory: masks must be readable 2
// bytes past its last mask.
TEXT ·im2colAVX2(SB), NOSPLIT, $0-72
	MOVQ bits+64(FP), AX
	VMOVDQU (AX), Y14
	VMOVDQU 32(AX), Y15
	MOVQ x+0(FP), SI
	MOVQ plane+8(FP), BX
	SHLQ $2, BX
	MOVQ c+16(FP), CX
	MOVQ taps+32(FP), R10
	MOVQ nvec+48(FP), R9
	MOVQ dst+56(FP), DI
im2col2_channel:
	MOVQ offs+24(FP), R13
	MOVQ masks+40(FP), R12
	MOVQ R10, R11
im2col2_tap:
	MOVQ (R13), AX
	LEAQ (SI)(AX*4), DX
	MOVQ R9, AX
im2col2_vec:
	VPBROADCASTD (R12), Y1
	VPAND Y14, Y1, Y2
	VPCMPEQD Y14, Y2, Y2
	VPAND Y15, Y1, Y3
	VPCMPEQD Y15, Y3, Y3
	VMASKMOVPS (DX), Y2, Y4
	VMASKMOVPS 32(DX), Y3, Y5
	VMOVUPS Y4, (DI)
	VMOVUPS Y5, 32(DI)
	ADDQ $64, DX
	ADDQ $64, DI
	ADDQ $2, R12
	DECQ AX
	JNZ im2col2_vec
	ADDQ $8, R13
	DECQ R11
	JNZ im2col2_tap
	ADDQ BX, SI
	DECQ CX
	JNZ im2col2_channel
	VZEROUPPER
	RET

// func col2imAVX2(cols, x *float32, plane, c int, back *int, taps int, masks *uint16, nvec int, bits *int32)
//
// col2imAVX512 on AVX2: each 16-float vector of a plane as two halves,
// each tap's values loaded with VMASKMOVPS (masked lanes read as 0,
// neither read nor fault), added, and blended in under the lane masks, so
// that elements a tap does not reach keep their bits (−0 included). The
// masks are broadcast from 4 bytes of memory, as in im2colAVX2.
TEXT ·col2imAVX2(SB), NOSPLIT, $0-72
	MOVQ bits+64(FP), AX
	VMOVDQU (AX), Y14
	VMOVDQU 32(AX), Y15
	MOVQ cols+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ plane+16(FP), BX
	SHLQ $2, BX
	MOVQ c+24(FP), CX
	MOVQ taps+40(FP), R10
	SHLQ $3, R10
	ADDQ back+32(FP), R10 // the end of back
	MOVQ nvec+56(FP), R9
col2im2_channel:
	MOVQ masks+48(FP), R12
	XORQ R8, R8
	MOVQ R9, DX
col2im2_vec:
	VMOVUPS (SI)(R8*1), Y0
	VMOVUPS 32(SI)(R8*1), Y1
	LEAQ (DI)(R8*1), AX
	MOVQ back+32(FP), R13
col2im2_tap:
	MOVQ (R13), R11
	VPBROADCASTD (R12), Y6
	VPAND Y14, Y6, Y2
	VPCMPEQD Y14, Y2, Y2
	VPAND Y15, Y6, Y3
	VPCMPEQD Y15, Y3, Y3
	VMASKMOVPS (AX)(R11*1), Y2, Y4
	VMASKMOVPS 32(AX)(R11*1), Y3, Y5
	VADDPS Y4, Y0, Y4
	VADDPS Y5, Y1, Y5
	VBLENDVPS Y2, Y4, Y0, Y0
	VBLENDVPS Y3, Y5, Y1, Y1
	ADDQ $8, R13
	ADDQ $2, R12
	CMPQ R13, R10
	JNE col2im2_tap
	VMOVUPS Y0, (SI)(R8*1)
	VMOVUPS Y1, 32(SI)(R8*1)
	ADDQ $64, R8
	DECQ DX
	JNZ col2im2_vec
	ADDQ BX, SI
	MOVQ taps+40(FP), R11
	IMULQ BX, R11
	ADDQ R11, DI
	DECQ CX
	JNZ col2im2_channel
	VZEROUPPER
	RET
