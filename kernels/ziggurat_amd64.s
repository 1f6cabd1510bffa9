//go:build !purego

#include "textflag.h"

// The ziggurat's fast path (ZigguratAdd) on n words, n a multiple of 8.
// Per word: i = w & 255 gathers layers[i] and inside[i]; u = (1 | w>>12
// as a float64's fraction) − 1; the lanes where u < inside[i] (ordered
// <) add float32(std·(x | sign)), x = u·layers[i], to d; the others keep
// d (AVX-512F: a merging add, its upper 8 lanes masked off; AVX2: their values made −0, which adds
// nothing, not even to a zero's sign) and set their bit of the rejected
// byte of their group of 8.

// func zigguratAVX512(d *float32, w *byte, n int, std float64, layers, inside *[256]float64, rejected *uint8)
TEXT ·zigguratAVX512(SB), NOSPLIT, $0-56
	MOVQ d+0(FP), DI
	MOVQ w+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSD std+24(FP), Z15
	MOVQ layers+32(FP), R8
	MOVQ inside+40(FP), R9
	MOVQ rejected+48(FP), R10
	MOVQ $0x3ff0000000000000, AX
	VPBROADCASTQ AX, Z14
	MOVQ $255, AX
	VPBROADCASTQ AX, Z13
	MOVQ $256, AX
	VPBROADCASTQ AX, Z12
	SHRQ $3, CX
	JZ zig512done
zig512loop:
	VMOVDQU64 (SI), Z0
	VPANDQ Z13, Z0, Z1
	VPSRLQ $12, Z0, Z2
	VPORQ Z14, Z2, Z2
	VSUBPD Z14, Z2, Z2
	KXNORW K1, K1, K1
	VGATHERQPD (R9)(Z1*8), K1, Z3
	KXNORW K2, K2, K2
	VGATHERQPD (R8)(Z1*8), K2, Z4
	VCMPPD $0x11, Z3, Z2, K3
	VMULPD Z4, Z2, Z5
	VPANDQ Z12, Z0, Z6
	VPSLLQ $55, Z6, Z6
	VPORQ Z6, Z5, Z5
	VMULPD Z15, Z5, Z5
	VCVTPD2PS Z5, Y5
	VMOVUPS (DI), Y7
	VADDPS Z5, Z7, K3, Z7
	VMOVUPS Y7, (DI)
	KNOTW K3, K4
	KMOVW K4, AX
	MOVB AX, (R10)
	ADDQ $64, SI
	ADDQ $32, DI
	INCQ R10
	DECQ CX
	JNZ zig512loop
zig512done:
	VZEROUPPER
	RET

// ZIG4 is four words of AVX2's loop at offset off: Y9 the lanes kept
// (all ones), their sign bits into BX.
#define ZIG4(off) \
	VMOVDQU off*8(SI), Y0 \
	VPAND Y13, Y0, Y1 \
	VPSRLQ $12, Y0, Y2 \
	VPOR Y14, Y2, Y2 \
	VSUBPD Y14, Y2, Y2 \
	VPCMPEQQ Y8, Y8, Y8 \
	VGATHERQPD Y8, (R9)(Y1*8), Y3 \
	VPCMPEQQ Y8, Y8, Y8 \
	VGATHERQPD Y8, (R8)(Y1*8), Y4 \
	VCMPPD $0x11, Y3, Y2, Y9 \
	VMULPD Y4, Y2, Y5 \
	VPAND Y12, Y0, Y6 \
	VPSLLQ $55, Y6, Y6 \
	VPOR Y6, Y5, Y5 \
	VMULPD Y15, Y5, Y5 \
	VBLENDVPD Y9, Y5, Y11, Y5 \
	VCVTPD2PSY Y5, X5 \
	VMOVUPS off*4(DI), X7 \
	VADDPS X5, X7, X7 \
	VMOVUPS X7, off*4(DI) \
	VMOVMSKPD Y9, BX

// func zigguratAVX2(d *float32, w *byte, n int, std float64, layers, inside *[256]float64, rejected *uint8)
TEXT ·zigguratAVX2(SB), NOSPLIT, $0-56
	MOVQ d+0(FP), DI
	MOVQ w+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSD std+24(FP), Y15
	MOVQ layers+32(FP), R8
	MOVQ inside+40(FP), R9
	MOVQ rejected+48(FP), R10
	MOVQ $0x3ff0000000000000, AX
	MOVQ AX, X14
	VPBROADCASTQ X14, Y14
	MOVQ $255, AX
	MOVQ AX, X13
	VPBROADCASTQ X13, Y13
	MOVQ $256, AX
	MOVQ AX, X12
	VPBROADCASTQ X12, Y12
	MOVQ $0x8000000000000000, AX
	MOVQ AX, X11
	VPBROADCASTQ X11, Y11
	SHRQ $3, CX
	JZ zig2done
zig2loop:
	ZIG4(0)
	MOVQ BX, DX
	ZIG4(4)
	SHLQ $4, BX
	ORQ DX, BX
	NOTQ BX
	MOVB BX, (R10)
	ADDQ $64, SI
	ADDQ $32, DI
	INCQ R10
	DECQ CX
	JNZ zig2loop
zig2done:
	VZEROUPPER
	RET
