//go:build !purego

#include "textflag.h"

// Constants of fillAVX512, broadcast from memory.
DATA mant53<>+0(SB)/8, $0x1fffffffffffff
GLOBL mant53<>(SB), RODATA|NOPTR, $8
DATA low32<>+0(SB)/8, $0xffffffff
GLOBL low32<>(SB), RODATA|NOPTR, $8
DATA one<>+0(SB)/8, $1
GLOBL one<>(SB), RODATA|NOPTR, $8
DATA cheapMul<>+0(SB)/8, $0xda942042e4dd58b5 // DXSM's multiplier
GLOBL cheapMul<>(SB), RODATA|NOPTR, $8
DATA w49<>+0(SB)/8, $0x0002000000000000     // 2^49
GLOBL w49<>(SB), RODATA|NOPTR, $8
DATA signBit<>+0(SB)/8, $0x8000000000000000
GLOBL signBit<>(SB), RODATA|NOPTR, $8

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

// The steps of fillAVX512's loop, each for one group of eight values.
// Registers: SI the pcgJumps (A_k high words at 0, low at 64, C_k high at
// 128, low at 192, then the 52-bit limbs of A_k at 256, 320, 384 and of C_k
// at 448, 512, 576), DI the pcg, R8 cub, R9 the gathers' mask, R10 xi, R11
// n, R12 the index of the group VALUES writes, (BX, CX) a state, AX, DX and
// R13 scratch; Z20 the A_k low words, Z21 their top halves, Z22 the A_k
// high words, Z31 and Z19 pow2[0..7] and pow2[8..15].

// ADVANCE: s ← A_8·s + C_8, in scalar registers (lane 7's state).
#define ADVANCE \
	MOVQ CX, AX; \
	MULQ 120(SI); \
	MOVQ BX, R13; \
	IMULQ 120(SI), R13; \
	ADDQ R13, DX; \
	MOVQ CX, R13; \
	IMULQ 56(SI), R13; \
	ADDQ R13, DX; \
	ADDQ 248(SI), AX; \
	ADCQ 184(SI), DX; \
	MOVQ DX, BX; \
	MOVQ AX, CX

// DXSM: the words u (Z11) and w = u<<1 | 1 (Z10) of the states whose high
// words are in Z6 and low words in Z9, and K2 set for the lanes with
// w < 2^49.
#define DXSM \
	VPSHUFB srl32<>(SB), Z6, Z7; \
	VPXORQ Z7, Z6, Z7; \
	VPMULLQ.BCST cheapMul<>(SB), Z7, Z7; \
	VPSHUFB srl48<>(SB), Z7, Z8; \
	VPXORQ Z8, Z7, Z7; \
	VPORQ.BCST one<>(SB), Z9, Z8; \
	VPMULLQ Z8, Z7, Z11           /* u */; \
	VPADDQ Z11, Z11, Z10; \
	VPORQ.BCST one<>(SB), Z10, Z10 /* w */; \
	VPCMPUQ.BCST $1, w49<>(SB), Z10, K2

// WORDS: the words u (Z11) and w = u<<1 | 1 (Z10) of the group whose state
// is s = (BX, CX), and K2 set for the lanes with w < 2^49 (z ≥ 15). The
// eight states A_k·s + C_k mod 2^128 take lo·aLo from four 32×32-bit
// products, with p = hl + ll>>32 and q = lh + p mod 2^32, and s broadcast
// from memory (the pcg); then DXSM (Z6 the states' high words, Z9 their low
// words).
#define WORDS \
	MOVQ BX, 0(DI); \
	MOVQ CX, 8(DI); \
	VPBROADCASTD 12(DI), Z1       /* lo>>32, in the low halves VPMULUDQ reads */; \
	VPMULUDQ.BCST 8(DI), Z20, Z3  /* ll */; \
	VPMULUDQ.BCST 8(DI), Z21, Z4  /* lh */; \
	VPMULUDQ Z20, Z1, Z5          /* hl */; \
	VPMULUDQ Z21, Z1, Z6          /* hh */; \
	VPMULLQ.BCST 0(DI), Z20, Z8   /* hi·aLo */; \
	VPMULLQ.BCST 8(DI), Z22, Z9   /* lo·aHi */; \
	VPSHUFB srl32<>(SB), Z3, Z7; \
	VPADDQ Z7, Z5, Z5             /* p */; \
	VPANDQ.BCST low32<>(SB), Z5, Z7; \
	VPADDQ Z7, Z4, Z4             /* q */; \
	VPSHUFB srl32<>(SB), Z5, Z5; \
	VPADDQ Z5, Z6, Z6; \
	VPSHUFB srl32<>(SB), Z4, Z7; \
	VPADDQ Z7, Z6, Z6             /* high word of lo·aLo: hh + p>>32 + q>>32 */; \
	VPSHUFB sll32<>(SB), Z4, Z4; \
	VPTERNLOGQ.BCST $0xf8, low32<>(SB), Z3, Z4 /* low word of lo·aLo: q<<32 | ll mod 2^32 */; \
	VPADDQ Z8, Z6, Z6; \
	VPADDQ Z9, Z6, Z6; \
	VPADDQ 192(SI), Z4, Z9        /* state, low word */; \
	VPCMPUQ $1, Z4, Z9, K1        /* carry */; \
	VPADDQ 128(SI), Z6, Z6; \
	VPADDQ.BCST one<>(SB), Z6, K1, Z6 /* state, high word */; \
	DXSM

// WORDS52: WORDS with AVX-512 IFMA. In 52-bit limbs, s = s0 + s1·2^52 +
// s2·2^104 and A_k, C_k likewise (a0..a2, c0..c2); then
//
//	A_k·s + C_k = L0 + L1·2^52 + L2·2^104 mod 2^128, where
//	L0 = c0 + lo(s0·a0),
//	L1 = c1 + hi(s0·a0) + lo(s0·a1) + lo(s1·a0),
//	L2 = c2 + hi(s0·a1) + hi(s1·a0) + lo(s0·a2) + lo(s1·a1) + lo(s2·a0),
//
// lo and hi the low and high 52 bits of a 104-bit product (VPMADD52LUQ,
// VPMADD52HUQ, which add them to a 64-bit sum). L0 < 2^53 and L1 < 2^54,
// so the state's low word is L0 + L1<<52 mod 2^64 and its high word
// (L1 + L0>>52)>>12 + L2<<40 mod 2^64. The limbs of s are split off in
// general registers and broadcast from the stack; an IFMA reads only the
// low 52 bits of its operands, so s0 is the low word and s1 the 64 bits
// from bit 52 on, unmasked.
#define WORDS52 \
	MOVQ CX, R13; \
	SHRQ $52, BX, R13; \
	MOVQ BX, R14; \
	SHRQ $40, R14; \
	MOVQ CX, s0-24(SP); \
	MOVQ R13, s1-16(SP); \
	MOVQ R14, s2-8(SP); \
	VPBROADCASTQ s0-24(SP), Z1; \
	VPBROADCASTQ s1-16(SP), Z2; \
	VPBROADCASTQ s2-8(SP), Z3; \
	VMOVDQU64 448(SI), Z4; \
	VMOVDQU64 512(SI), Z5; \
	VMOVDQU64 576(SI), Z6; \
	VPXORQ Z7, Z7, Z7             /* a second sum for L2 */; \
	VPMADD52LUQ Z1, Z20, Z4       /* L0 */; \
	VPMADD52HUQ Z1, Z20, Z5; \
	VPMADD52LUQ Z1, Z21, Z5; \
	VPMADD52LUQ Z2, Z20, Z5       /* L1 */; \
	VPMADD52HUQ Z1, Z21, Z6; \
	VPMADD52HUQ Z2, Z20, Z6; \
	VPMADD52LUQ Z1, Z22, Z7; \
	VPMADD52LUQ Z2, Z21, Z7; \
	VPMADD52LUQ Z3, Z20, Z6; \
	VPSRLQ $52, Z4, Z8; \
	VPSLLQ $52, Z5, Z9; \
	VPADDQ Z8, Z5, Z5; \
	VPADDQ Z9, Z4, Z9             /* state, low word */; \
	VPADDQ Z7, Z6, Z6             /* L2 */; \
	VPSRLQ $12, Z5, Z5; \
	VPSLLQ $40, Z6, Z6; \
	VPADDQ Z5, Z6, Z6             /* state, high word */; \
	DXSM

// VALUES: U^(-1/p) = pow2[z+1]·cubic(m) with the sign of u, as
// pareto.cubic and withSign (in n = t·2^53, with the scaled coefficients),
// from the words u (Z12) and w (Z13), into xi at R12.
#define VALUES \
	VPLZCNTQ Z13, Z14             /* z */; \
	VPADDQ.BCST one<>(SB), Z14, Z14 /* z+1, at most 15 */; \
	VPSLLVQ Z14, Z13, Z13         /* f = w << (z+1) */; \
	VPSHUFB srl56<>(SB), Z13, Z15 /* the segment, f>>56 */; \
	VPSRLQ $3, Z13, Z13; \
	VPANDQ.BCST mant53<>(SB), Z13, Z13 /* f<<8>>11 */; \
	VCVTUQQ2PD Z13, Z13           /* n = t·2^53 */; \
	KMOVB R9, K3; \
	VGATHERQPD 6144(R8)(Z15*8), K3, Z16 /* c3 */; \
	KMOVB R9, K3; \
	VGATHERQPD 4096(R8)(Z15*8), K3, Z17 /* c2 */; \
	KMOVB R9, K3; \
	VGATHERQPD 2048(R8)(Z15*8), K3, Z18 /* c1 */; \
	KMOVB R9, K3; \
	VGATHERQPD 0(R8)(Z15*8), K3, Z0 /* c0 */; \
	VPERMI2PD Z19, Z31, Z14       /* pow2[z+1] */; \
	VMULPD Z16, Z13, Z16          /* t·c3 */; \
	VADDPD Z16, Z17, Z16          /* c2 + … */; \
	VMULPD Z16, Z13, Z16; \
	VADDPD Z16, Z18, Z16          /* c1 + … */; \
	VMULPD Z16, Z13, Z16; \
	VADDPD Z16, Z0, Z16           /* c0 + … */; \
	VMULPD Z16, Z14, Z16          /* pow2[z+1]·… */; \
	VPTERNLOGQ.BCST $0x78, signBit<>(SB), Z12, Z16 /* the sign of u: Z16 ^ (u & 1<<63) */; \
	VMOVUPD Z16, (R10)(R12*8)

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
// The loop is software-pipelined: an iteration computes the words of a
// group (WORDS, whose multiplications have long latencies) and the values
// of the group before (VALUES), so that the two chains of dependent
// instructions overlap.
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
	VPSRLQ $32, Z20, Z21        // A_k low words' top halves
	VMOVUPD 0(R9), Z31          // pow2[0..7]
	VMOVUPD 64(R9), Z19         // pow2[8..15]
	MOVL $0xff, R9              // the gathers' masks
	XORQ R12, R12
	CMPQ R11, $8
	JLT done
	WORDS
	JMP check

loop:
	// The group at R12 has its words in Z10, Z11 and (BX, CX) is the
	// state before it: its values, with the next group's words.
	VMOVDQA64 Z11, Z12
	VMOVDQA64 Z10, Z13
	ADVANCE
	WORDS
	VALUES
	ADDQ $8, R12

check:
	// Go on if the group at R12 fits and has no word for Go.
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

// func fillIFMA(src *pcg, jump *pcgJumps, cub *[4][256]float64, pow2 *[34]float64, xi *float64, n int) int
//
// fillAVX512 with WORDS52: the same values and the same exits.
TEXT ·fillIFMA(SB), NOSPLIT, $24-56
	MOVQ src+0(FP), DI
	MOVQ jump+8(FP), SI
	MOVQ cub+16(FP), R8
	MOVQ pow2+24(FP), R9
	MOVQ xi+32(FP), R10
	MOVQ n+40(FP), R11
	MOVQ 0(DI), BX              // s, high word
	MOVQ 8(DI), CX              // s, low word
	VMOVDQU64 256(SI), Z20      // A_k's limbs a0
	VMOVDQU64 320(SI), Z21      // a1
	VMOVDQU64 384(SI), Z22      // a2
	VMOVUPD 0(R9), Z31          // pow2[0..7]
	VMOVUPD 64(R9), Z19         // pow2[8..15]
	MOVL $0xff, R9              // the gathers' masks
	XORQ R12, R12
	CMPQ R11, $8
	JLT done52
	WORDS52
	JMP check52

loop52:
	// The group at R12 has its words in Z10, Z11 and (BX, CX) is the
	// state before it: its values, with the next group's words.
	VMOVDQA64 Z11, Z12
	VMOVDQA64 Z10, Z13
	ADVANCE
	WORDS52
	VALUES
	ADDQ $8, R12

check52:
	// Go on if the group at R12 fits and has no word for Go.
	LEAQ 8(R12), AX
	CMPQ AX, R11
	JGT done52
	KORTESTB K2, K2
	JEQ loop52

done52:
	MOVQ BX, 0(DI)
	MOVQ CX, 8(DI)
	MOVQ R12, ret+48(FP)
	VZEROUPPER
	RET
