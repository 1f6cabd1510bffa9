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
