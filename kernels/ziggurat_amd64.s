//go:build !purego

#include "textflag.h"
#include "ziggurat_amd64.h"

// The ziggurat's fast path (ZigguratAdd) on n words, n a multiple of 8. Per
// word: i = w & 255 picks layer i's pair {width, inside} (16 bytes, loaded
// whole from layers + 16i: the pairs of words 0, 2, 4, … into the 128-bit
// lanes of one register, of words 1, 3, 5, … into another, so that
// unpacking their low and high halves gives the widths and the insides in
// the words' order, without gathers, which took twice as long on AMD's
// Zen 5, as long on Intel's Sapphire Rapids and 10 – 15 % longer there
// inside zigguratVAES); u = (1 | w>>12 as a float64's fraction) − 1; the
// lanes where u < inside (ordered <) add float32(std·(x | sign)),
// x = u·width, to d; the others keep d (AVX-512F: a merging add, its upper
// 8 lanes masked off; AVX2: their values made −0, which adds nothing, not
// even to a zero's sign) and set their bit of the rejected byte of their
// group of 8. AVX-512's body is ZIG8 (ziggurat_amd64.h). Each group of 8
// prefetches d's values 2 KiB (512 values) ahead (PREFETCHT0), which are
// read once, from memory, and whose loads otherwise miss the caches: the
// noise of 10.7 M values took 1.22 ns of CPU a value with it, 1.60 without
// (AVX-512, Intel Sapphire Rapids, one thread, estimator's reads of 512
// words then). A prefetch does not fault, past d's end either.

// func zigguratAVX512(d *float32, w *byte, n int, std float64, layers *[256][2]float64, rejected *uint8)
TEXT ·zigguratAVX512(SB), NOSPLIT, $0-48
	MOVQ d+0(FP), DI
	MOVQ w+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSD std+24(FP), Z15
	MOVQ layers+32(FP), R8
	MOVQ rejected+40(FP), R10
	ZIGCONSTS(AX)
	SHRQ $3, CX
	JZ zig512done
zig512loop:
	PREFETCHT0 2048(DI)
	ZIG8(0)
	ADDQ $64, SI
	ADDQ $32, DI
	INCQ R10
	DECQ CX
	JNZ zig512loop
zig512done:
	VZEROUPPER
	RET

// ZIG4 is four words of AVX2's loop at offset off: Y9 the lanes kept
// (all ones), their sign bits into BX. Layer pairs as in AVX-512's loop,
// words off and off+2 in Y3, off+1 and off+3 in Y1 (VINSERTF128).
#define ZIG4(off) \
	MOVBLZX off*8(SI), AX \
	SHLL $4, AX \
	VMOVUPD (R8)(AX*1), X3 \
	MOVBLZX (off+2)*8(SI), R9 \
	SHLL $4, R9 \
	VINSERTF128 $1, (R8)(R9*1), Y3, Y3 \
	MOVBLZX (off+1)*8(SI), R11 \
	SHLL $4, R11 \
	VMOVUPD (R8)(R11*1), X1 \
	MOVBLZX (off+3)*8(SI), R12 \
	SHLL $4, R12 \
	VINSERTF128 $1, (R8)(R12*1), Y1, Y1 \
	VUNPCKLPD Y1, Y3, Y4 \
	VUNPCKHPD Y1, Y3, Y3 \
	VMOVDQU off*8(SI), Y0 \
	VPSRLQ $12, Y0, Y2 \
	VPOR Y14, Y2, Y2 \
	VSUBPD Y14, Y2, Y2 \
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

// func zigguratAVX2(d *float32, w *byte, n int, std float64, layers *[256][2]float64, rejected *uint8)
TEXT ·zigguratAVX2(SB), NOSPLIT, $0-48
	MOVQ d+0(FP), DI
	MOVQ w+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSD std+24(FP), Y15
	MOVQ layers+32(FP), R8
	MOVQ rejected+40(FP), R10
	MOVQ $0x3ff0000000000000, AX
	MOVQ AX, X14
	VPBROADCASTQ X14, Y14
	MOVQ $256, AX
	MOVQ AX, X12
	VPBROADCASTQ X12, Y12
	MOVQ $0x8000000000000000, AX
	MOVQ AX, X11
	VPBROADCASTQ X11, Y11
	SHRQ $3, CX
	JZ zig2done
zig2loop:
	PREFETCHT0 2048(DI)
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
