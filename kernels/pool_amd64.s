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
