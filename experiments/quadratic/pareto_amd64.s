//go:build !purego

#include "textflag.h"

// Constants of fillAVX512.
DATA rowMask<>+0(SB)/8, $0x3fc     // bits 2..9: a segment's row of cub, in float64s
GLOBL rowMask<>(SB), RODATA|NOPTR, $8
DATA mant53<>+0(SB)/8, $0x1fffffffffffff
GLOBL mant53<>(SB), RODATA|NOPTR, $8

// func fillAVX512(src *pcg, jump *pcgJumps, cub *[256][4]float64, pow2 *[34]float64, xi *float64, n int) int
//
// Eight values per iteration, lane k from the state k+1 steps after the
// group's state s (A_k·s + C_k, pcgJump), the same operations as
// pareto.cubic and withSign in the same order. It stops before a group with
// a word whose 63 low bits start with 15 or more zeros (z ≥ 15; 2^−15 of
// all words: the far tail, and the values whose power of two is beyond the
// sixteen pow2 entries held in two registers) and returns how many values
// it wrote.
TEXT ·fillAVX512(SB), NOSPLIT, $0-56
	MOVQ src+0(FP), DI
	MOVQ jump+8(FP), SI
	MOVQ cub+16(FP), R8
	MOVQ pow2+24(FP), R9
	MOVQ xi+32(FP), R10
	MOVQ n+40(FP), R11
	MOVQ 0(DI), BX              // s, high word
	MOVQ 8(DI), CX              // s, low word
	VMOVDQU64 0(SI), Z22        // A_k high words
	VMOVDQU64 64(SI), Z20       // A_k low words
	VMOVDQU64 128(SI), Z24      // C_k high words
	VMOVDQU64 192(SI), Z23      // C_k low words
	VPSRLQ $32, Z20, Z21        // A_k low words' top halves
	VMOVUPD 0(R9), Z31          // pow2[0..7]
	VMOVUPD 64(R9), Z19         // pow2[8..15]
	MOVQ $0xffffffff, AX
	VPBROADCASTQ AX, Z25
	MOVQ $1, AX
	VPBROADCASTQ AX, Z26
	MOVQ $0xda942042e4dd58b5, AX
	VPBROADCASTQ AX, Z27
	MOVQ $0x0002000000000000, AX // 2^49
	VPBROADCASTQ AX, Z28
	MOVQ $0x8000000000000000, AX
	VPBROADCASTQ AX, Z29
	MOVQ $0x3ca0000000000000, AX // 2^-53
	VPBROADCASTQ AX, Z30
	XORQ R12, R12

loop:
	LEAQ 8(R12), AX
	CMPQ AX, R11
	JGT done

	// The eight states A_k·s + C_k mod 2^128, with s = (BX, CX): first
	// lo·aLo from four 32×32-bit products.
	VPBROADCASTQ CX, Z0
	MOVQ CX, AX
	SHRQ $32, AX
	VPBROADCASTQ AX, Z1
	VPBROADCASTQ BX, Z2
	VPMULUDQ Z20, Z0, Z3        // ll
	VPMULUDQ Z21, Z0, Z4        // lh
	VPMULUDQ Z20, Z1, Z5        // hl
	VPMULUDQ Z21, Z1, Z6        // hh
	VPSRLQ $32, Z3, Z7
	VPADDQ Z7, Z5, Z5           // t = hl + ll>>32
	VPANDQ Z25, Z5, Z7
	VPADDQ Z7, Z4, Z4           // w = lh + t mod 2^32
	VPSRLQ $32, Z5, Z5
	VPADDQ Z5, Z6, Z6
	VPSRLQ $32, Z4, Z7
	VPADDQ Z7, Z6, Z6           // high word of lo·aLo: hh + t>>32 + w>>32
	VPSLLQ $32, Z4, Z4
	VPTERNLOGQ $0xf8, Z25, Z3, Z4 // low word of lo·aLo: w<<32 | ll mod 2^32
	VPMULLQ Z20, Z2, Z8         // hi·aLo
	VPADDQ Z8, Z6, Z6
	VPMULLQ Z22, Z0, Z8         // lo·aHi
	VPADDQ Z8, Z6, Z6
	VPADDQ Z23, Z4, Z9          // state, low word
	VPCMPUQ $1, Z4, Z9, K1      // carry
	VPADDQ Z24, Z6, Z10
	VPADDQ Z26, Z10, K1, Z10    // state, high word

	// DXSM.
	VPSRLQ $32, Z10, Z11
	VPXORQ Z11, Z10, Z11
	VPMULLQ Z27, Z11, Z11
	VPSRLQ $48, Z11, Z12
	VPXORQ Z12, Z11, Z11
	VPORQ Z26, Z9, Z12
	VPMULLQ Z12, Z11, Z11       // the words u
	VPADDQ Z11, Z11, Z12
	VPORQ Z26, Z12, Z12         // w = u<<1 | 1
	VPCMPUQ $1, Z28, Z12, K2    // w < 2^49: z ≥ 15
	KORTESTB K2, K2
	JNE done

	// U^(-1/p) = pow2[z+1]·cubic(m), as pareto.cubic.
	VPLZCNTQ Z12, Z13           // z
	VPADDQ Z26, Z13, Z13        // z+1, at most 15
	VPSLLVQ Z13, Z12, Z12       // f = w << (z+1)
	VPSRLQ $54, Z12, Z14
	VPANDQ.BCST rowMask<>(SB), Z14, Z14 // the segment's row of cub, f>>56 · 4
	VPSRLQ $3, Z12, Z12
	VPANDQ.BCST mant53<>(SB), Z12, Z12 // f<<8>>11
	VCVTUQQ2PD Z12, Z12
	VMULPD Z30, Z12, Z12        // t
	KXNORB K3, K3, K3
	VGATHERQPD 24(R8)(Z14*8), K3, Z15
	KXNORB K3, K3, K3
	VGATHERQPD 16(R8)(Z14*8), K3, Z16
	KXNORB K3, K3, K3
	VGATHERQPD 8(R8)(Z14*8), K3, Z17
	KXNORB K3, K3, K3
	VGATHERQPD 0(R8)(Z14*8), K3, Z18
	VPERMI2PD Z19, Z31, Z13     // pow2[z+1]
	VMULPD Z15, Z12, Z15        // t·c3
	VADDPD Z15, Z16, Z15        // c2 + …
	VMULPD Z15, Z12, Z15
	VADDPD Z15, Z17, Z15        // c1 + …
	VMULPD Z15, Z12, Z15
	VADDPD Z15, Z18, Z15        // c0 + …
	VMULPD Z15, Z13, Z15        // pow2[z+1]·…
	VPANDQ Z29, Z11, Z11
	VPXORQ Z11, Z15, Z15        // the sign of u
	VMOVUPD Z15, (R10)(R12*8)

	// s ← A_8·s + C_8, in scalar registers (lane 7's state).
	MOVQ CX, AX
	MULQ 120(SI)                // DX:AX = lo·aLo
	MOVQ BX, R13
	IMULQ 120(SI), R13
	ADDQ R13, DX
	MOVQ CX, R13
	IMULQ 56(SI), R13
	ADDQ R13, DX
	ADDQ 248(SI), AX
	ADCQ 184(SI), DX
	MOVQ DX, BX
	MOVQ AX, CX
	ADDQ $8, R12
	JMP loop

done:
	MOVQ BX, 0(DI)
	MOVQ CX, 8(DI)
	MOVQ R12, ret+48(FP)
	VZEROUPPER
	RET
