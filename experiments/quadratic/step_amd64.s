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
	MOVL $0xff, R11                  // the gathers' mask

block:
	VPXORQ Z0, Z0, Z0
	MOVQ DI, R10
	XORQ BX, BX

coord:
	KMOVB R11, K1
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

// func weightedSumsAVX512(w1, w2 *float64, n int, noise *float64, d int, sum1, sum2 *float64, mask uint16) (sw1, sw2 float64)
//
// sum1[j] = Σ_k w1[k]·noise[k·d + j] and sum2[j] likewise from w2, over k in
// order, for the coordinates j < 16 whose bits are set in mask (the others
// are neither read nor written), and Σ_k w1[k], Σ_k w2[k], as weightedSums
// does. n is positive.
TEXT ·weightedSumsAVX512(SB), NOSPLIT, $0-80
	MOVQ w1+0(FP), SI
	MOVQ w2+8(FP), R9
	MOVQ n+16(FP), CX
	MOVQ noise+24(FP), DI
	MOVQ d+32(FP), DX
	MOVQ sum1+40(FP), R8
	MOVQ sum2+48(FP), R10
	MOVWLZX mask+56(FP), AX
	KMOVW AX, K1
	KSHIFTRW $8, K1, K2
	SHLQ $3, DX                      // a row, in bytes
	XORQ BX, BX                      // k
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	VXORPD X4, X4, X4
	VXORPD X5, X5, X5

loop:
	VMOVUPD.Z (DI), K1, Z6           // ξ_kj
	VMOVUPD.Z 64(DI), K2, Z7
	VBROADCASTSD (SI)(BX*8), Z8      // w1_k
	VBROADCASTSD (R9)(BX*8), Z9      // w2_k
	VADDSD X8, X4, X4                // Σ w1_k
	VADDSD X9, X5, X5
	VMULPD Z6, Z8, Z10               // w1_k·ξ_kj
	VMULPD Z7, Z8, Z11
	VMULPD Z6, Z9, Z12
	VMULPD Z7, Z9, Z13
	VADDPD Z10, Z0, Z0               // sum1_j += w1_k·ξ_kj
	VADDPD Z11, Z1, Z1
	VADDPD Z12, Z2, Z2
	VADDPD Z13, Z3, Z3
	ADDQ DX, DI
	INCQ BX
	CMPQ BX, CX
	JLT loop

	VMOVUPD Z0, K1, (R8)
	VMOVUPD Z1, K2, 64(R8)
	VMOVUPD Z2, K1, (R10)
	VMOVUPD Z3, K2, 64(R10)
	VMOVSD X4, sw1+64(FP)
	VMOVSD X5, sw2+72(FP)
	VZEROUPPER
	RET
