//go:build !purego

#include "textflag.h"

// laneRows are the lanes' indices 0..7, scaled by d to row offsets.
DATA laneRows<>+0(SB)/8, $0
DATA laneRows<>+8(SB)/8, $1
DATA laneRows<>+16(SB)/8, $2
DATA laneRows<>+24(SB)/8, $3
DATA laneRows<>+32(SB)/8, $4
DATA laneRows<>+40(SB)/8, $5
DATA laneRows<>+48(SB)/8, $6
DATA laneRows<>+56(SB)/8, $7
GLOBL laneRows<>(SB), RODATA|NOPTR, $64

// func sampleNormsAVX512(x *float64, noise *float64, n int, d int, norms *float64)
//
// Samples k..k+7 in the lanes of one register, their coordinates gathered
// from the rows of noise; each lane sums (x_j + ξ_kj)² over j in order, as
// sampleNorms does. n is a positive multiple of 8.
TEXT ·sampleNormsAVX512(SB), NOSPLIT, $0-40
	MOVQ x+0(FP), SI
	MOVQ noise+8(FP), DI
	MOVQ n+16(FP), CX
	MOVQ d+24(FP), DX
	MOVQ norms+32(FP), R8
	VPBROADCASTQ DX, Z10
	VPMULLQ laneRows<>(SB), Z10, Z10 // lane k's row offset, k·d
	MOVQ DX, R9
	SHLQ $6, R9                      // eight rows, in bytes

block:
	VPXORQ Z0, Z0, Z0
	MOVQ DI, R10
	XORQ BX, BX

coord:
	KXNORB K1, K1, K1
	VPXORQ Z1, Z1, Z1
	VGATHERQPD (R10)(Z10*8), K1, Z1  // ξ_kj, j = BX
	VADDPD.BCST (SI)(BX*8), Z1, Z1   // y = x_j + ξ_kj
	VMULPD Z1, Z1, Z1
	VADDPD Z1, Z0, Z0                // sq += y·y
	ADDQ $8, R10
	INCQ BX
	CMPQ BX, DX
	JLT coord

	VSQRTPD Z0, Z0
	VMOVUPD Z0, (R8)
	ADDQ $64, R8
	ADDQ R9, DI
	SUBQ $8, CX
	JGT block
	VZEROUPPER
	RET

// func weightedSumAVX512(w *float64, n int, noise *float64, d int, sum *float64, mask uint16) float64
//
// sum[j] = Σ_k w[k]·noise[k·d + j] over k in order, for the coordinates j
// < 16 whose bits are set in mask (the others are neither read nor
// written), and Σ_k w[k], as weightedSum does. n is positive.
TEXT ·weightedSumAVX512(SB), NOSPLIT, $0-56
	MOVQ w+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ noise+16(FP), DI
	MOVQ d+24(FP), DX
	MOVQ sum+32(FP), R8
	MOVWLZX mask+40(FP), AX
	KMOVW AX, K1
	KSHIFTRW $8, K1, K2
	SHLQ $3, DX                      // a row, in bytes
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VXORPD X5, X5, X5

loop:
	VBROADCASTSD (SI), Z2
	VADDSD X2, X5, X5                // Σ w_k
	VMULPD.Z (DI), Z2, K1, Z3        // w_k·ξ_kj
	VMULPD.Z 64(DI), Z2, K2, Z4
	VADDPD Z3, Z0, Z0                // sum_j += w_k·ξ_kj
	VADDPD Z4, Z1, Z1
	ADDQ $8, SI
	ADDQ DX, DI
	DECQ CX
	JNZ loop

	VMOVUPD Z0, K1, (R8)
	VMOVUPD Z1, K2, 64(R8)
	VMOVSD X5, ret+48(FP)
	VZEROUPPER
	RET
