//go:build !purego

#include "textflag.h"

// Constants of fillAVX512.
DATA mant53<>+0(SB)/8, $0x1fffffffffffff
GLOBL mant53<>(SB), RODATA|NOPTR, $8

// VPSHUFB controls for the shifts by whole bytes, by 32 right and left, 48
// and 56 right: shuffles take the vector port that does not shift.
DATA srl32<>+0(SB)/8, $0x8080808007060504
DATA srl32<>+8(SB)/8, $0x808080800f0e0d0c
DATA srl32<>+16(SB)/8, $0x8080808007060504
DATA srl32<>+24(SB)/8, $0x808080800f0e0d0c
DATA srl32<>+32(SB)/8, $0x8080808007060504
DATA srl32<>+40(SB)/8, $0x808080800f0e0d0c
DATA srl32<>+48(SB)/8, $0x8080808007060504
DATA srl32<>+56(SB)/8, $0x808080800f0e0d0c
GLOBL srl32<>(SB), RODATA|NOPTR, $64
DATA sll32<>+0(SB)/8, $0x0302010080808080
DATA sll32<>+8(SB)/8, $0x0b0a090880808080
DATA sll32<>+16(SB)/8, $0x0302010080808080
DATA sll32<>+24(SB)/8, $0x0b0a090880808080
DATA sll32<>+32(SB)/8, $0x0302010080808080
DATA sll32<>+40(SB)/8, $0x0b0a090880808080
DATA sll32<>+48(SB)/8, $0x0302010080808080
DATA sll32<>+56(SB)/8, $0x0b0a090880808080
GLOBL sll32<>(SB), RODATA|NOPTR, $64
DATA srl48<>+0(SB)/8, $0x8080808080800706
DATA srl48<>+8(SB)/8, $0x8080808080800f0e
DATA srl48<>+16(SB)/8, $0x8080808080800706
DATA srl48<>+24(SB)/8, $0x8080808080800f0e
DATA srl48<>+32(SB)/8, $0x8080808080800706
DATA srl48<>+40(SB)/8, $0x8080808080800f0e
DATA srl48<>+48(SB)/8, $0x8080808080800706
DATA srl48<>+56(SB)/8, $0x8080808080800f0e
GLOBL srl48<>(SB), RODATA|NOPTR, $64
DATA srl56<>+0(SB)/8, $0x8080808080808007
DATA srl56<>+8(SB)/8, $0x808080808080800f
DATA srl56<>+16(SB)/8, $0x8080808080808007
DATA srl56<>+24(SB)/8, $0x808080808080800f
DATA srl56<>+32(SB)/8, $0x8080808080808007
DATA srl56<>+40(SB)/8, $0x808080808080800f
DATA srl56<>+48(SB)/8, $0x8080808080808007
DATA srl56<>+56(SB)/8, $0x808080808080800f
GLOBL srl56<>(SB), RODATA|NOPTR, $64

// func fillAVX512(src *pcg, jump *pcgJumps, cub *[4][256]float64, pow2 *[34]float64, xi *float64, n int) int
//
// Eight values per group, lane k from the state k+1 steps after the
// group's state s (A_k·s + C_k, pcgJump), the same operations as
// pareto.cubic and withSign in the same order. It stops before a group with
// a word whose 63 low bits start with 15 or more zeros (z ≥ 15; 2^−15 of
// all words: the far tail, and the values whose power of two is beyond the
// sixteen pow2 entries held in two registers) and returns how many values
// it wrote.
//
// The loop is software-pipelined: an iteration computes the next group's
// words (the generator, whose multiplications have long latencies)
// interleaved with the current group's values, so that the two chains of
// dependent instructions overlap.
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
	MOVL $0xff, R14             // the gathers' masks
	XORQ R12, R12
	CMPQ R11, $8
	JLT done
	// The eight states A_k·s + C_k mod 2^128, with s = (BX, CX) broadcast
	// from memory (src): first lo·aLo from four 32×32-bit products.
	MOVQ BX, 0(DI)
	MOVQ CX, 8(DI)
	VPBROADCASTD 12(DI), Z1     // lo>>32, in the low halves VPMULUDQ reads
	VPMULUDQ.BCST 8(DI), Z20, Z3 // ll
	VPMULUDQ.BCST 8(DI), Z21, Z4 // lh
	VPMULUDQ Z20, Z1, Z5        // hl
	VPMULUDQ Z21, Z1, Z6        // hh
	VPMULLQ.BCST 0(DI), Z20, Z8 // hi·aLo
	VPMULLQ.BCST 8(DI), Z22, Z9 // lo·aHi
	VPSHUFB srl32<>(SB), Z3, Z7
	VPADDQ Z7, Z5, Z5           // p = hl + ll>>32
	VPANDQ Z25, Z5, Z7
	VPADDQ Z7, Z4, Z4           // q = lh + p mod 2^32
	VPSHUFB srl32<>(SB), Z5, Z5
	VPADDQ Z5, Z6, Z6
	VPSHUFB srl32<>(SB), Z4, Z7
	VPADDQ Z7, Z6, Z6           // high word of lo·aLo: hh + p>>32 + q>>32
	VPSHUFB sll32<>(SB), Z4, Z4
	VPTERNLOGQ $0xf8, Z25, Z3, Z4 // low word of lo·aLo: q<<32 | ll mod 2^32
	VPADDQ Z8, Z6, Z6
	VPADDQ Z9, Z6, Z6
	VPADDQ Z23, Z4, Z9          // state, low word
	VPCMPUQ $1, Z4, Z9, K1      // carry
	VPADDQ Z24, Z6, Z6
	VPADDQ Z26, Z6, K1, Z6      // state, high word
	// DXSM.
	VPSHUFB srl32<>(SB), Z6, Z7
	VPXORQ Z7, Z6, Z7
	VPMULLQ Z27, Z7, Z7
	VPSHUFB srl48<>(SB), Z7, Z8
	VPXORQ Z8, Z7, Z7
	VPORQ Z26, Z9, Z8
	VPMULLQ Z8, Z7, Z11         // the words u
	VPADDQ Z11, Z11, Z10
	VPORQ Z26, Z10, Z10         // w = u<<1 | 1
	VPCMPUQ $1, Z28, Z10, K2    // w < 2^49: z ≥ 15
	KORTESTB K2, K2
	JNE done

loop:
	// The group at R12 has its words u in Z11 and w in Z10, and (BX, CX)
	// is the state before it.
	VMOVDQA64 Z11, Z12
	VMOVDQA64 Z10, Z13

	// s ← A_8·s + C_8, in scalar registers (lane 7's state): the state
	// before the next group.
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

	// The next group's words (as before the loop, instructions marked
	// ‹), interleaved with this group's values, U^(-1/p) =
	// pow2[z+1]·cubic(m) as pareto.cubic, from its words u (Z12) and
	// w (Z13).
	MOVQ BX, 0(DI)              // ‹
	VPLZCNTQ Z13, Z14           // z
	MOVQ CX, 8(DI)              // ‹
	VPADDQ Z26, Z14, Z14        // z+1, at most 15
	VPBROADCASTD 12(DI), Z1     // ‹ lo>>32, in the low halves VPMULUDQ reads
	VPSLLVQ Z14, Z13, Z13       // f = w << (z+1)
	VPMULUDQ.BCST 8(DI), Z20, Z3 // ‹ ll
	VPMULUDQ.BCST 8(DI), Z21, Z4 // ‹ lh
	VPSHUFB srl56<>(SB), Z13, Z15 // the segment, f>>56
	VPMULUDQ Z20, Z1, Z5        // ‹ hl
	VPSRLQ $3, Z13, Z13
	VPMULUDQ Z21, Z1, Z6        // ‹ hh
	VPANDQ.BCST mant53<>(SB), Z13, Z13 // f<<8>>11
	VPMULLQ.BCST 0(DI), Z20, Z8 // ‹ hi·aLo
	VPMULLQ.BCST 8(DI), Z22, Z9 // ‹ lo·aHi
	VCVTUQQ2PD Z13, Z13
	VPSHUFB srl32<>(SB), Z3, Z7 // ‹
	VMULPD Z30, Z13, Z13        // t
	VPADDQ Z7, Z5, Z5           // ‹ p = hl + ll>>32
	KMOVB R14, K3
	VPANDQ Z25, Z5, Z7          // ‹
	VPADDQ Z7, Z4, Z4           // ‹ q = lh + p mod 2^32
	VGATHERQPD 6144(R8)(Z15*8), K3, Z16
	VPSHUFB srl32<>(SB), Z5, Z5 // ‹
	KMOVB R14, K3
	VPADDQ Z5, Z6, Z6           // ‹
	VGATHERQPD 4096(R8)(Z15*8), K3, Z17
	VPSHUFB srl32<>(SB), Z4, Z7 // ‹
	VPADDQ Z7, Z6, Z6           // ‹ high word of lo·aLo: hh + p>>32 + q>>32
	KMOVB R14, K3
	VPSHUFB sll32<>(SB), Z4, Z4 // ‹
	VGATHERQPD 2048(R8)(Z15*8), K3, Z18
	VPTERNLOGQ $0xf8, Z25, Z3, Z4 // ‹ low word of lo·aLo: q<<32 | ll mod 2^32
	KMOVB R14, K3
	VPADDQ Z8, Z6, Z6           // ‹
	VPADDQ Z9, Z6, Z6           // ‹
	VGATHERQPD 0(R8)(Z15*8), K3, Z0
	VPADDQ Z23, Z4, Z9          // ‹ state, low word
	VPERMI2PD Z19, Z31, Z14     // pow2[z+1]
	VPCMPUQ $1, Z4, Z9, K1      // ‹ carry
	VMULPD Z16, Z13, Z16        // t·c3
	VPADDQ Z24, Z6, Z6          // ‹
	VPADDQ Z26, Z6, K1, Z6      // ‹ state, high word
	VADDPD Z16, Z17, Z16        // c2 + …
	VPSHUFB srl32<>(SB), Z6, Z7 // ‹
	VMULPD Z16, Z13, Z16
	VPXORQ Z7, Z6, Z7           // ‹
	VADDPD Z16, Z18, Z16        // c1 + …
	VPMULLQ Z27, Z7, Z7         // ‹
	VPSHUFB srl48<>(SB), Z7, Z8 // ‹
	VMULPD Z16, Z13, Z16
	VPXORQ Z8, Z7, Z7           // ‹
	VADDPD Z16, Z0, Z16         // c0 + …
	VPORQ Z26, Z9, Z8           // ‹
	VMULPD Z16, Z14, Z16        // pow2[z+1]·…
	VPMULLQ Z8, Z7, Z11         // ‹ the words u
	VPADDQ Z11, Z11, Z10        // ‹
	VPTERNLOGQ $0x78, Z29, Z12, Z16 // the sign of u: Z16 ^ (u & 1<<63)
	VPORQ Z26, Z10, Z10         // ‹ w = u<<1 | 1
	VMOVUPD Z16, (R10)(R12*8)
	VPCMPUQ $1, Z28, Z10, K2    // ‹ w < 2^49: z ≥ 15
	ADDQ $8, R12
	LEAQ 8(R12), AX
	CMPQ AX, R11
	JGT done
	KORTESTB K2, K2
	JEQ loop

done:
	MOVQ BX, 0(DI)
	MOVQ CX, 8(DI)
	MOVQ R12, ret+48(FP)
	VZEROUPPER
	RET
