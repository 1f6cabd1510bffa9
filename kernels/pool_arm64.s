//go:build !purego

#include "textflag.h"
#include "neon_arm64.h"

// POOL pools four windows: a0, a1, b0, b1 in V0–V3, their offsets in
// Vo0–Vo3 (int32), the block's offset in V15. The maximum is Go's
// max(a0, a1, b0, b1), which the arm64 compiler makes three FMAXs in this
// order (NaN payloads and signed zeros alike); into V4. The offset of the
// first element equal to it or NaN (b1, then b0, a1, a0 where they
// qualify) plus the block's, into V5.
#define POOL(o0, o1, o2, o3) \
	FMAX_4S(4, 0, 1) \
	FMAX_4S(4, 4, 2) \
	FMAX_4S(4, 4, 3) \
	MOV_16B(5, o3) \
	FCMEQ_4S(6, 2, 4) \
	FCMEQ_4S(7, 2, 2) \
	ORN_16B(6, 6, 7) \
	BIT_16B(5, o2, 6) \
	FCMEQ_4S(6, 1, 4) \
	FCMEQ_4S(7, 1, 1) \
	ORN_16B(6, 6, 7) \
	BIT_16B(5, o1, 6) \
	FCMEQ_4S(6, 0, 4) \
	FCMEQ_4S(7, 0, 0) \
	ORN_16B(6, 6, 7) \
	BIT_16B(5, o0, 6) \
	ADD_4S(5, 5, 15)

// GROUP pools lanes 4g to 4g+3 of a block at R0 whose windows lie side by
// side: a0 and a1 de-interleaved from the 8 inputs at R0 + ra, b0 and b1
// from R0 + rb.
#define GROUP(g, ra, rb) \
	ADD ra, R0, R6 \
	VLD2 (R6), [V0.S4, V1.S4] \
	ADD rb, R0, R6 \
	VLD2 (R6), [V2.S4, V3.S4] \
	POOL(16+(g), 20+(g), 24+(g), 28+(g)) \
	VST1.P [V4.S4], 16(R1) \
	VST1.P [V5.S4], 16(R2)

// LANE pools lane R7 of a block at R0 alone, on lane 0 of the registers,
// its inputs' offsets read from the table at R4 (R8–R11 scratch).
#define LANE \
	MOVWU (R4)(R7<<2), R8 \
	ADD $16, R7, R9 \
	MOVWU (R4)(R9<<2), R9 \
	ADD $32, R7, R10 \
	MOVWU (R4)(R10<<2), R10 \
	ADD $48, R7, R11 \
	MOVWU (R4)(R11<<2), R11 \
	FMOVS (R0)(R8<<2), F0 \
	FMOVS (R0)(R9<<2), F1 \
	FMOVS (R0)(R10<<2), F2 \
	FMOVS (R0)(R11<<2), F3 \
	FMOVS R8, F8 \
	FMOVS R9, F9 \
	FMOVS R10, F10 \
	FMOVS R11, F11 \
	POOL(8, 9, 10, 11) \
	FMOVS.P F4, 4(R1) \
	FMOVS.P F5, 4(R2)

// func maxPool2x2NEON(x, y *float32, idx *int32, blocks int, tab *int32)
//
// maxPool2x2Blocks on NEON. tab holds four rows of 16 offsets into a block
// of 64 inputs, of the windows' a0, a1, b0, b1, in the pattern
// maxPool2x2Blocks lays out: a0 of lane l at 2·(l/ow)·w + 2·(l mod ow),
// a1 one after it, b0 and b1 one row (w) below. Where 4 divides ow (w mod
// 8 = 0), each four lanes' windows lie side by side in two rows and are
// loaded with two de-interleaving VLD2s; for ow = 1 or 2 the block is
// pooled lane by lane.
TEXT ·maxPool2x2NEON(SB), NOSPLIT, $0-40
	MOVD x+0(FP), R0
	MOVD y+8(FP), R1
	MOVD idx+16(FP), R2
	MOVD blocks+24(FP), R3
	MOVD tab+32(FP), R4
	VEOR V15.B16, V15.B16, V15.B16
	MOVW $64, R5
	VDUP R5, V14.S4
	MOVWU 128(R4), R5 // b0 of lane 0: w
	ANDS $7, R5
	BNE lanes
	VLD1 (R4), [V16.S4, V17.S4, V18.S4, V19.S4]
	ADD $64, R4, R5
	VLD1 (R5), [V20.S4, V21.S4, V22.S4, V23.S4]
	ADD $128, R4, R5
	VLD1 (R5), [V24.S4, V25.S4, V26.S4, V27.S4]
	ADD $192, R4, R5
	VLD1 (R5), [V28.S4, V29.S4, V30.S4, V31.S4]
	// Byte offsets of each group's first a0 and b0.
	MOVWU 0(R4), R10
	MOVWU 128(R4), R11
	MOVWU 16(R4), R12
	MOVWU 144(R4), R13
	MOVWU 32(R4), R14
	MOVWU 160(R4), R15
	MOVWU 48(R4), R19
	MOVWU 176(R4), R20
	LSL $2, R10
	LSL $2, R11
	LSL $2, R12
	LSL $2, R13
	LSL $2, R14
	LSL $2, R15
	LSL $2, R19
	LSL $2, R20
groups:
	GROUP(0, R10, R11)
	GROUP(1, R12, R13)
	GROUP(2, R14, R15)
	GROUP(3, R19, R20)
	ADD_4S(15, 15, 14)
	ADD $256, R0
	SUBS $1, R3
	BNE groups
	RET
lanes:
	MOVD $0, R7
lane:
	LANE
	ADD $1, R7
	CMP $16, R7
	BNE lane
	ADD_4S(15, 15, 14)
	ADD $256, R0
	SUBS $1, R3
	BNE lanes
	RET
