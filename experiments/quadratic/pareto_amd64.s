//go:build !purego

#include "textflag.h"

// func fillAVX512(src *pcg, jump *pcgJumps, cub *[256][4]float64, pow2 *[34]float64, xi *float64, n int) int
//
// Eight values per iteration, lane k from the state k+1 steps after the
// group's state s (A_k·s + C_k, pcgJump), the same operations as
// pareto.cubic and withSign in the same order. It stops before a group with
// a word below 2^31 (the far tail) and returns how many values it wrote.
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
	MOVQ $0xffffffff, AX
	VPBROADCASTQ AX, Z25
	MOVQ $1, AX
	VPBROADCASTQ AX, Z26
	MOVQ $0xda942042e4dd58b5, AX
	VPBROADCASTQ AX, Z27
	MOVQ $0x80000000, AX
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

	// The eight states A_k·s + C_k mod 2^128, with s = (BX, CX).
	VPBROADCASTQ CX, Z0
	MOVQ CX, AX
	SHRQ $32, AX
	VPBROADCASTQ AX, Z1
	VPBROADCASTQ BX, Z2
	VPMULUDQ Z20, Z0, Z3        // lo·aLo, low halves
	VPMULUDQ Z21, Z0, Z4
	VPMULUDQ Z20, Z1, Z5
	VPMULUDQ Z21, Z1, Z6
	VPSRLQ $32, Z3, Z7
	VPANDQ Z25, Z4, Z8
	VPADDQ Z8, Z7, Z7
	VPANDQ Z25, Z5, Z8
	VPADDQ Z8, Z7, Z7           // middle column
	VPSRLQ $32, Z4, Z8
	VPADDQ Z8, Z6, Z6
	VPSRLQ $32, Z5, Z8
	VPADDQ Z8, Z6, Z6
	VPSRLQ $32, Z7, Z8
	VPADDQ Z8, Z6, Z6           // high word of lo·aLo
	VPANDQ Z25, Z3, Z3
	VPSLLQ $32, Z7, Z7
	VPORQ Z7, Z3, Z3            // low word of lo·aLo
	VPMULLQ Z20, Z2, Z8         // hi·aLo
	VPADDQ Z8, Z6, Z6
	VPMULLQ Z22, Z0, Z8         // lo·aHi
	VPADDQ Z8, Z6, Z6
	VPADDQ Z23, Z3, Z9          // state, low word
	VPCMPUQ $1, Z3, Z9, K1      // carry
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
	VPCMPUQ $1, Z28, Z11, K2    // u < 2^31: the far tail
	KORTESTW K2, K2
	JNE done

	// U^(-1/p) = pow2[z+1]·cubic(m), as pareto.cubic.
	VPSLLQ $1, Z11, Z12
	VPORQ Z26, Z12, Z12         // w = u<<1 | 1
	VPLZCNTQ Z12, Z13           // z
	VPADDQ Z26, Z13, Z13        // z+1
	VPSLLVQ Z13, Z12, Z12       // f = w << (z+1)
	VPSRLQ $56, Z12, Z14
	VPSLLQ $2, Z14, Z14         // the segment's row of cub, in float64s
	VPSLLQ $8, Z12, Z12
	VPSRLQ $11, Z12, Z12
	VCVTUQQ2PD Z12, Z12
	VMULPD Z30, Z12, Z12        // t
	KXNORW K3, K3, K3
	VGATHERQPD 24(R8)(Z14*8), K3, Z15
	KXNORW K3, K3, K3
	VGATHERQPD 16(R8)(Z14*8), K3, Z16
	KXNORW K3, K3, K3
	VGATHERQPD 8(R8)(Z14*8), K3, Z17
	KXNORW K3, K3, K3
	VGATHERQPD 0(R8)(Z14*8), K3, Z18
	KXNORW K3, K3, K3
	VGATHERQPD 0(R9)(Z13*8), K3, Z19
	VMULPD Z15, Z12, Z15        // t·c3
	VADDPD Z15, Z16, Z15        // c2 + …
	VMULPD Z15, Z12, Z15
	VADDPD Z15, Z17, Z15        // c1 + …
	VMULPD Z15, Z12, Z15
	VADDPD Z15, Z18, Z15        // c0 + …
	VMULPD Z15, Z19, Z15        // pow2[z+1]·…
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
