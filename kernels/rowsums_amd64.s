//go:build !purego

#include "textflag.h"

// RowStats and GradSums (rowsums.go) sixteen rows at a time, one row a
// lane, so that each row's sums are the portable code's: its values added
// in order, no fused multiply-adds.

// rowsIota holds 0, 1, …, 15: times d, the offsets of the rows' values.
DATA rowsIota<>+0(SB)/4, $0
DATA rowsIota<>+4(SB)/4, $1
DATA rowsIota<>+8(SB)/4, $2
DATA rowsIota<>+12(SB)/4, $3
DATA rowsIota<>+16(SB)/4, $4
DATA rowsIota<>+20(SB)/4, $5
DATA rowsIota<>+24(SB)/4, $6
DATA rowsIota<>+28(SB)/4, $7
DATA rowsIota<>+32(SB)/4, $8
DATA rowsIota<>+36(SB)/4, $9
DATA rowsIota<>+40(SB)/4, $10
DATA rowsIota<>+44(SB)/4, $11
DATA rowsIota<>+48(SB)/4, $12
DATA rowsIota<>+52(SB)/4, $13
DATA rowsIota<>+56(SB)/4, $14
DATA rowsIota<>+60(SB)/4, $15
GLOBL rowsIota<>(SB), RODATA|NOPTR, $64
DATA rowsOne<>+0(SB)/8, $1.0
GLOBL rowsOne<>(SB), RODATA|NOPTR, $8

// func rowStatsAVX512(x *float32, d int, eps float64, mean, rstd *float64)
//
// RowStats of sixteen rows, d ≥ 1 values each, row i in lane i of Z0/Z1
// (rows 0–7 and 8–15): for each column j the sixteen values are gathered
// (indices i·d), widened to float64 and added in order; then the squares of
// the deviations likewise.
TEXT ·rowStatsAVX512(SB), NOSPLIT, $0-40
	MOVQ x+0(FP), SI
	MOVQ d+8(FP), CX
	MOVQ mean+24(FP), DI
	MOVQ rstd+32(FP), R8
	VPBROADCASTD CX, Z31
	VPMULLD rowsIota<>(SB), Z31, Z31
	CVTSQ2SD CX, X0
	VBROADCASTSD X0, Z30
	VBROADCASTSD eps+16(FP), Z29
	VBROADCASTSD rowsOne<>(SB), Z28
	VXORPD Z0, Z0, Z0
	VXORPD Z1, Z1, Z1
	MOVQ SI, R10
	MOVQ CX, R11
sum:
	KXNORW K1, K1, K1
	VGATHERDPS (R10)(Z31*4), K1, Z2
	VCVTPS2PD Y2, Z3
	VEXTRACTF32X8 $1, Z2, Y4
	VCVTPS2PD Y4, Z4
	VADDPD Z3, Z0, Z0
	VADDPD Z4, Z1, Z1
	ADDQ $4, R10
	DECQ R11
	JNZ sum
	VDIVPD Z30, Z0, Z0
	VDIVPD Z30, Z1, Z1
	VXORPD Z5, Z5, Z5
	VXORPD Z6, Z6, Z6
	MOVQ SI, R10
	MOVQ CX, R11
sq:
	KXNORW K1, K1, K1
	VGATHERDPS (R10)(Z31*4), K1, Z2
	VCVTPS2PD Y2, Z3
	VEXTRACTF32X8 $1, Z2, Y4
	VCVTPS2PD Y4, Z4
	VSUBPD Z0, Z3, Z3
	VSUBPD Z1, Z4, Z4
	VMULPD Z3, Z3, Z3
	VMULPD Z4, Z4, Z4
	VADDPD Z3, Z5, Z5
	VADDPD Z4, Z6, Z6
	ADDQ $4, R10
	DECQ R11
	JNZ sq
	VDIVPD Z30, Z5, Z5
	VDIVPD Z30, Z6, Z6
	VADDPD Z29, Z5, Z5
	VADDPD Z29, Z6, Z6
	VSQRTPD Z5, Z5
	VSQRTPD Z6, Z6
	VDIVPD Z5, Z28, Z5
	VDIVPD Z6, Z28, Z6
	VMOVUPD Z0, (DI)
	VMOVUPD Z1, 64(DI)
	VMOVUPD Z5, (R8)
	VMOVUPD Z6, 64(R8)
	VZEROUPPER
	RET

// func gradSumsAVX512(dy, h, w *float32, d int, sg, sgx *float32)
//
// GradSums of sixteen rows, d ≥ 1 values each, row i in lane i: for each
// column j, ĝ = dy·w[j] is added into Z0 and ĝ·h into Z1.
TEXT ·gradSumsAVX512(SB), NOSPLIT, $0-48
	MOVQ dy+0(FP), SI
	MOVQ h+8(FP), DX
	MOVQ w+16(FP), BX
	MOVQ d+24(FP), CX
	MOVQ sg+32(FP), DI
	MOVQ sgx+40(FP), R8
	VPBROADCASTD CX, Z31
	VPMULLD rowsIota<>(SB), Z31, Z31
	CVTSQ2SS CX, X0
	VBROADCASTSS X0, Z30
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
loop:
	KXNORW K1, K1, K1
	VGATHERDPS (SI)(Z31*4), K1, Z2
	KXNORW K2, K2, K2
	VGATHERDPS (DX)(Z31*4), K2, Z3
	VBROADCASTSS (BX), Z4
	VMULPS Z4, Z2, Z2
	VADDPS Z2, Z0, Z0
	VMULPS Z3, Z2, Z2
	VADDPS Z2, Z1, Z1
	ADDQ $4, SI
	ADDQ $4, DX
	ADDQ $4, BX
	DECQ CX
	JNZ loop
	VDIVPS Z30, Z0, Z0
	VDIVPS Z30, Z1, Z1
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, (R8)
	VZEROUPPER
	RET
