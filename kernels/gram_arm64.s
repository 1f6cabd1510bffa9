//go:build !purego

#include "textflag.h"
#include "neon_arm64.h"

// GRAM16 adds the products of a's rows (V0–V3) and b's rows (V4–V7),
// lane by lane, into the accumulator of each pair, V(16+4j+i) for a's row
// i and b's row j.
#define GRAM16 \
	FMLA_4S(16, 0, 4) \
	FMLA_4S(17, 1, 4) \
	FMLA_4S(18, 2, 4) \
	FMLA_4S(19, 3, 4) \
	FMLA_4S(20, 0, 5) \
	FMLA_4S(21, 1, 5) \
	FMLA_4S(22, 2, 5) \
	FMLA_4S(23, 3, 5) \
	FMLA_4S(24, 0, 6) \
	FMLA_4S(25, 1, 6) \
	FMLA_4S(26, 2, 6) \
	FMLA_4S(27, 3, 6) \
	FMLA_4S(28, 0, 7) \
	FMLA_4S(29, 1, 7) \
	FMLA_4S(30, 2, 7) \
	FMLA_4S(31, 3, 7)

// FOLD sums the lanes of b's row j's four accumulators into Vj, a's rows
// in order: two pairwise additions.
#define FOLD(j) \
	FADDP_4S(8, 16+4*(j), 17+4*(j)) \
	FADDP_4S(9, 18+4*(j), 19+4*(j)) \
	FADDP_4S(j, 8, 9)

// func gramRowsNEON(k int, a, b *float32, ld, tail int, c *float32, n int, acc bool)
//
// For t < n, c[16t+4j+i] = Σ_{p<4k+tail} a[i·ld+p]·b[(4t+j)·ld+p] (i, j < 4),
// added into c when acc is set: four lanes of p at a time in sixteen
// accumulators, the tail on lane 0, then the lanes summed pairwise. The
// tile is stored transposed (4j+i), as the AVX-512 kernel stores it.
TEXT ·gramRowsNEON(SB), NOSPLIT, $0-57
	MOVD k+0(FP), R0
	MOVD a+8(FP), R1
	MOVD b+16(FP), R2
	MOVD ld+24(FP), R3
	MOVD tail+32(FP), R4
	MOVD c+40(FP), R5
	MOVD n+48(FP), R6
	MOVBU acc+56(FP), R7
	LSL $2, R3 // bytes a row
tile:
	VEOR V16.B16, V16.B16, V16.B16
	VEOR V17.B16, V17.B16, V17.B16
	VEOR V18.B16, V18.B16, V18.B16
	VEOR V19.B16, V19.B16, V19.B16
	VEOR V20.B16, V20.B16, V20.B16
	VEOR V21.B16, V21.B16, V21.B16
	VEOR V22.B16, V22.B16, V22.B16
	VEOR V23.B16, V23.B16, V23.B16
	VEOR V24.B16, V24.B16, V24.B16
	VEOR V25.B16, V25.B16, V25.B16
	VEOR V26.B16, V26.B16, V26.B16
	VEOR V27.B16, V27.B16, V27.B16
	VEOR V28.B16, V28.B16, V28.B16
	VEOR V29.B16, V29.B16, V29.B16
	VEOR V30.B16, V30.B16, V30.B16
	VEOR V31.B16, V31.B16, V31.B16
	MOVD R1, R8
	ADD R3, R8, R9
	ADD R3, R9, R10
	ADD R3, R10, R11
	MOVD R2, R12
	ADD R3, R12, R13
	ADD R3, R13, R14
	ADD R3, R14, R15
	MOVD R0, R19
	CBZ R19, tail
loop:
	VLD1.P 16(R8), [V0.S4]
	VLD1.P 16(R9), [V1.S4]
	VLD1.P 16(R10), [V2.S4]
	VLD1.P 16(R11), [V3.S4]
	VLD1.P 16(R12), [V4.S4]
	VLD1.P 16(R13), [V5.S4]
	VLD1.P 16(R14), [V6.S4]
	VLD1.P 16(R15), [V7.S4]
	GRAM16
	SUBS $1, R19
	BNE loop
tail:
	MOVD R4, R19
	CBZ R19, fold
loop1:
	FMOVS.P 4(R8), F0
	FMOVS.P 4(R9), F1
	FMOVS.P 4(R10), F2
	FMOVS.P 4(R11), F3
	FMOVS.P 4(R12), F4
	FMOVS.P 4(R13), F5
	FMOVS.P 4(R14), F6
	FMOVS.P 4(R15), F7
	GRAM16
	SUBS $1, R19
	BNE loop1
fold:
	FOLD(0)
	FOLD(1)
	FOLD(2)
	FOLD(3)
	CBZ R7, store
	VLD1 (R5), [V4.S4, V5.S4, V6.S4, V7.S4]
	FADD_4S(0, 0, 4)
	FADD_4S(1, 1, 5)
	FADD_4S(2, 2, 6)
	FADD_4S(3, 3, 7)
store:
	VST1.P [V0.S4, V1.S4, V2.S4, V3.S4], 64(R5)
	ADD R3<<2, R2
	SUBS $1, R6
	BNE tile
	RET
