//go:build !purego

#include "textflag.h"

// PICK sets V to the inputs of the block in Z10–Z13 at the offsets in T
// (0 to 63), K marking those at 32 and over; Z14 is scratch.
#define PICK(T, K, V) \
	VMOVDQA32 T, V; \
	VPERMI2PS Z11, Z10, V; \
	VMOVDQA32 T, Z14; \
	VPERMI2PS Z13, Z12, Z14; \
	VMOVAPS Z14, K, V

// func maxPool2x2AVX512(x, y *float32, idx *int32, blocks int, tab *int32)
//
// maxPool2x2Blocks on AVX-512: tab holds four rows of 16 offsets into a
// block of 64 inputs, the window's elements a0, a1, b0, b1 of every lane,
// which two-table permutes pick from the block in four registers (gathers
// are slower, as slow as the Go loop on AVX2).
// The maximum is Go's max(a0, a1, b0, b1) instruction for instruction,
// max(p, q) = -(t | u) with t = MINPS(-p, -q), u = MINPS(t, -p), so NaN
// payloads and the sign of zero come out as the portable code's.
TEXT ·maxPool2x2AVX512(SB), NOSPLIT, $0-40
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ idx+16(FP), R8
	MOVQ blocks+24(FP), CX
	MOVQ tab+32(FP), DX
	VMOVDQU32 0(DX), Z20  // a0
	VMOVDQU32 64(DX), Z21 // a1
	VMOVDQU32 128(DX), Z22 // b0
	VMOVDQU32 192(DX), Z23 // b1
	MOVL $0x80000000, AX
	VPBROADCASTD AX, Z31 // sign bit
	MOVL $64, AX
	VPBROADCASTD AX, Z30 // inputs a block
	VPXORD Z29, Z29, Z29 // the block's offset in its plane
	MOVL $32, AX
	VPBROADCASTD AX, Z28
	VPTESTMD Z28, Z20, K4 // lanes whose a0 lies in the block's second half
	VPTESTMD Z28, Z21, K5
	VPTESTMD Z28, Z22, K6
	VPTESTMD Z28, Z23, K7
loop:
	VMOVUPS 0(SI), Z10
	VMOVUPS 64(SI), Z11
	VMOVUPS 128(SI), Z12
	VMOVUPS 192(SI), Z13
	PICK(Z20, K4, Z0)
	PICK(Z21, K5, Z1)
	PICK(Z22, K6, Z2)
	PICK(Z23, K7, Z3)

	// m = -max(a0, a1)
	VPXORD Z31, Z0, Z4
	VPXORD Z31, Z1, Z5
	VMINPS Z5, Z4, Z6
	VMINPS Z4, Z6, Z7
	VPORD Z7, Z6, Z4
	// m = -max(max(a0, a1), b0)
	VPXORD Z31, Z2, Z5
	VMINPS Z5, Z4, Z6
	VMINPS Z4, Z6, Z7
	VPORD Z7, Z6, Z4
	// m = -max(max(a0, a1, b0), b1)
	VPXORD Z31, Z3, Z5
	VMINPS Z5, Z4, Z6
	VMINPS Z4, Z6, Z7
	VPORD Z7, Z6, Z4
	VPXORD Z31, Z4, Z8 // best

	// The first element equal to best, or the first NaN, wins: the
	// offsets of b1, b0, a1, a0 in turn where they qualify.
	VMOVDQA32 Z23, Z9
	VCMPPS $0, Z8, Z2, K2
	VCMPPS $3, Z2, Z2, K3
	KORW K3, K2, K2
	VMOVDQA32 Z22, K2, Z9
	VCMPPS $0, Z8, Z1, K2
	VCMPPS $3, Z1, Z1, K3
	KORW K3, K2, K2
	VMOVDQA32 Z21, K2, Z9
	VCMPPS $0, Z8, Z0, K2
	VCMPPS $3, Z0, Z0, K3
	KORW K3, K2, K2
	VMOVDQA32 Z20, K2, Z9
	VPADDD Z29, Z9, Z9

	VMOVUPS Z8, (DI)
	VMOVDQU32 Z9, (R8)
	VPADDD Z30, Z29, Z29
	ADDQ $256, SI
	ADDQ $64, DI
	ADDQ $64, R8
	DECQ CX
	JNZ loop
	VZEROUPPER
	RET

// func maxPool2x2AVX2(x, y *float32, idx *int32, oh, w int, lanes *int32)
//
// maxPool2x2 on AVX2 for one plane whose output rows are whole multiples
// of 8 (w/2 of them): 8 outputs at a time from 16 columns of two input
// rows, the window's elements a0, a1, b0, b1 split out of them by even and
// odd shuffles (VSHUFPS, then VPERMPD to restore the order), the maximum
// by maxPool2x2AVX512's MINPS lowering of Go's max (NaN payloads and
// signed zeros alike), and the first qualifying offset picked with blends.
// lanes holds 0, 2, …, 14.
TEXT ·maxPool2x2AVX2(SB), NOSPLIT, $0-48
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ idx+16(FP), R8
	MOVQ oh+24(FP), CX
	MOVQ w+32(FP), BX
	MOVQ lanes+40(FP), AX
	VMOVDQU (AX), Y15
	MOVL $0x80000000, AX
	VMOVQ AX, X14
	VPBROADCASTD X14, Y14 // sign bit
	MOVQ BX, R9
	SHRQ $4, R9           // 8-output steps a row
	XORQ R10, R10         // 2·oy·w
	LEAQ (BX*4), R11      // bytes an input row
mp2_row:
	MOVQ R9, DX
	MOVQ R10, R12         // 2·oy·w + 2·ox
	MOVQ SI, R13
mp2_step:
	VMOVUPS (R13), Y0
	VMOVUPS 32(R13), Y1
	VMOVUPS (R13)(R11*1), Y2
	VMOVUPS 32(R13)(R11*1), Y3
	VSHUFPS $0x88, Y1, Y0, Y4
	VPERMPD $0xd8, Y4, Y4 // a0
	VSHUFPS $0xdd, Y1, Y0, Y5
	VPERMPD $0xd8, Y5, Y5 // a1
	VSHUFPS $0x88, Y3, Y2, Y6
	VPERMPD $0xd8, Y6, Y6 // b0
	VSHUFPS $0xdd, Y3, Y2, Y7
	VPERMPD $0xd8, Y7, Y7 // b1

	// m = -max(a0, a1), then -max(m', b0), -max(m', b1)
	VXORPS Y14, Y4, Y8
	VXORPS Y14, Y5, Y9
	VMINPS Y9, Y8, Y10
	VMINPS Y8, Y10, Y11
	VORPS Y11, Y10, Y8
	VXORPS Y14, Y6, Y9
	VMINPS Y9, Y8, Y10
	VMINPS Y8, Y10, Y11
	VORPS Y11, Y10, Y8
	VXORPS Y14, Y7, Y9
	VMINPS Y9, Y8, Y10
	VMINPS Y8, Y10, Y11
	VORPS Y11, Y10, Y8
	VXORPS Y14, Y8, Y8    // best

	// Offsets: a0 = 2·oy·w + 2·ox + lane, then b1, b0, a1, a0 in turn
	// where they equal best or are NaN.
	VMOVQ R12, X9
	VPBROADCASTD X9, Y9
	VPADDD Y15, Y9, Y9    // a0's
	VMOVQ BX, X10
	VPBROADCASTD X10, Y10
	VPADDD Y9, Y10, Y11   // b0's
	VPCMPEQD Y12, Y12, Y12
	VPSUBD Y12, Y11, Y10  // b1's: b0's + 1
	VCMPPS $0, Y8, Y6, Y12
	VCMPPS $3, Y6, Y6, Y13
	VORPS Y13, Y12, Y12
	VBLENDVPS Y12, Y11, Y10, Y10
	VPCMPEQD Y12, Y12, Y12
	VPSUBD Y12, Y9, Y11   // a1's: a0's + 1
	VCMPPS $0, Y8, Y5, Y12
	VCMPPS $3, Y5, Y5, Y13
	VORPS Y13, Y12, Y12
	VBLENDVPS Y12, Y11, Y10, Y10
	VCMPPS $0, Y8, Y4, Y12
	VCMPPS $3, Y4, Y4, Y13
	VORPS Y13, Y12, Y12
	VBLENDVPS Y12, Y9, Y10, Y10

	VMOVUPS Y8, (DI)
	VMOVDQU Y10, (R8)
	ADDQ $64, R13
	ADDQ $32, DI
	ADDQ $32, R8
	ADDQ $16, R12
	DECQ DX
	JNZ mp2_step
	LEAQ (SI)(R11*2), SI
	LEAQ (R10)(BX*2), R10
	DECQ CX
	JNZ mp2_row
	VZEROUPPER
	RET
