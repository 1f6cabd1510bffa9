//go:build !purego

#include "textflag.h"

// Exp and GELUTanh, eight float64 lanes in a ZMM register, with the
// portable code's operations in its order (exp.go, gelu.go) and no fused
// multiply-adds, so that every lane rounds as the Go code does. Only
// AVX-512F instructions (16-bit mask moves): the CPUID check is for F alone.

DATA expAbs<>+0(SB)/8, $0x7fffffffffffffff
GLOBL expAbs<>(SB), RODATA|NOPTR, $8
DATA expMax<>+0(SB)/8, $0x4086200000000000 // 708
GLOBL expMax<>(SB), RODATA|NOPTR, $8
DATA expInv<>+0(SB)/8, $0x40671547652b82fe // N/ln2
GLOBL expInv<>(SB), RODATA|NOPTR, $8
DATA expShift<>+0(SB)/8, $0x4338000000000000 // 1.5·2⁵²
GLOBL expShift<>(SB), RODATA|NOPTR, $8
DATA expHi<>+0(SB)/8, $0x3f762e42ff000000 // expLn2HiN
GLOBL expHi<>(SB), RODATA|NOPTR, $8
DATA expLo<>+0(SB)/8, $0xbd5718432a1b0e26 // expLn2LoN
GLOBL expLo<>(SB), RODATA|NOPTR, $8
DATA expMask<>+0(SB)/8, $127 // expN−1
GLOBL expMask<>(SB), RODATA|NOPTR, $8
DATA expHalf<>+0(SB)/8, $0x3fe0000000000000 // 0.5
GLOBL expHalf<>(SB), RODATA|NOPTR, $8
DATA exp6<>+0(SB)/8, $0x3fc5555555555555 // 1/6
GLOBL exp6<>(SB), RODATA|NOPTR, $8
DATA exp24<>+0(SB)/8, $0x3fa5555555555555 // 1/24
GLOBL exp24<>(SB), RODATA|NOPTR, $8
DATA exp120<>+0(SB)/8, $0x3f81111111111111 // 1/120
GLOBL exp120<>(SB), RODATA|NOPTR, $8
DATA geluOne<>+0(SB)/8, $0x3ff0000000000000 // 1
GLOBL geluOne<>(SB), RODATA|NOPTR, $8
DATA geluA<>+0(SB)/8, $0x3fa6e4e26d4801f7 // 0.044715
GLOBL geluA<>(SB), RODATA|NOPTR, $8
DATA geluM2C<>+0(SB)/8, $0xbff9884533d43651 // −2·geluC
GLOBL geluM2C<>(SB), RODATA|NOPTR, $8
DATA gelu3A<>+0(SB)/8, $0x3fc12ba9d1f60179 // 3·0.044715
GLOBL gelu3A<>(SB), RODATA|NOPTR, $8
DATA geluC<>+0(SB)/8, $0x3fe9884533d43651 // geluC
GLOBL geluC<>(SB), RODATA|NOPTR, $8

// EXPCONSTS broadcasts exp's constants into Z18–Z28 and the table's address
// into R8.
#define EXPCONSTS \
	VBROADCASTSD expAbs<>(SB), Z18 \
	VBROADCASTSD expMax<>(SB), Z19 \
	VBROADCASTSD expInv<>(SB), Z20 \
	VBROADCASTSD expShift<>(SB), Z21 \
	VBROADCASTSD expHi<>(SB), Z22 \
	VBROADCASTSD expLo<>(SB), Z23 \
	VPBROADCASTQ expMask<>(SB), Z24 \
	VBROADCASTSD expHalf<>(SB), Z25 \
	VBROADCASTSD exp6<>(SB), Z26 \
	VBROADCASTSD exp24<>(SB), Z27 \
	VBROADCASTSD exp120<>(SB), Z28 \
	LEAQ ·expTable(SB), R8

// EXPCHECK jumps to done unless every lane of Z1 is within ±708.
#define EXPCHECK(done) \
	VPANDQ Z18, Z1, Z2 \
	VCMPPD $2, Z19, Z2, K2 \
	KMOVW K2, R9 \
	CMPB R9, $0xff \
	JNE done

// EXP sets Z1 = e^Z1 by expGo's steps, using Z3–Z13 and K1: kd = x·N/ln2
// + shift; k from its bits; r = x − kd·hi − kd·lo; the table's bits and
// tail gathered at 2·(k mod N) (16-byte entries); scale = bits +
// (k>>7)<<52; p = tail + r + r2·(0.5 + r/6) + r2·r2·(1/24 + r/120); and
// e^x = scale + scale·p.
#define EXP \
	VMULPD Z20, Z1, Z3 \
	VADDPD Z21, Z3, Z3 \
	VPSUBQ Z21, Z3, Z4 \
	VSUBPD Z21, Z3, Z3 \
	VMULPD Z22, Z3, Z5 \
	VSUBPD Z5, Z1, Z5 \
	VMULPD Z23, Z3, Z6 \
	VSUBPD Z6, Z5, Z5 \
	VPANDQ Z24, Z4, Z6 \
	VPADDQ Z6, Z6, Z6 \
	KXNORW K1, K1, K1 \
	VGATHERQPD (R8)(Z6*8), K1, Z7 \
	KXNORW K1, K1, K1 \
	VGATHERQPD 8(R8)(Z6*8), K1, Z8 \
	VPSRAQ $7, Z4, Z9 \
	VPSLLQ $52, Z9, Z9 \
	VPADDQ Z9, Z7, Z7 \
	VMULPD Z5, Z5, Z10 \
	VADDPD Z5, Z8, Z11 \
	VMULPD Z26, Z5, Z12 \
	VADDPD Z25, Z12, Z12 \
	VMULPD Z12, Z10, Z12 \
	VADDPD Z12, Z11, Z11 \
	VMULPD Z28, Z5, Z13 \
	VADDPD Z27, Z13, Z13 \
	VMULPD Z10, Z10, Z10 \
	VMULPD Z13, Z10, Z13 \
	VADDPD Z13, Z11, Z11 \
	VMULPD Z11, Z7, Z12 \
	VADDPD Z12, Z7, Z1

// func expBlock8(v *float64, n int) int
TEXT ·expBlock8(SB), NOSPLIT, $0-24
	MOVQ v+0(FP), SI
	MOVQ n+8(FP), CX
	EXPCONSTS
	XORQ AX, AX
loop:
	CMPQ AX, CX
	JGE done
	VMOVUPD (SI)(AX*8), Z1
	EXPCHECK(done)
	EXP
	VMOVUPD Z1, (SI)(AX*8)
	ADDQ $8, AX
	JMP loop
done:
	VZEROUPPER
	MOVQ AX, ret+16(FP)
	RET

// func geluTanhBlock8(x, y, d *float32, n int) int
TEXT ·geluTanhBlock8(SB), NOSPLIT, $0-40
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ d+16(FP), DX
	MOVQ n+24(FP), CX
	EXPCONSTS
	VBROADCASTSD geluOne<>(SB), Z29
	VBROADCASTSD geluA<>(SB), Z30
	VBROADCASTSD geluM2C<>(SB), Z31
	VBROADCASTSD gelu3A<>(SB), Z16
	VBROADCASTSD geluC<>(SB), Z17
	XORQ AX, AX
loop:
	CMPQ AX, CX
	JGE done
	VCVTPS2PD (SI)(AX*4), Z0
	VMULPD Z0, Z30, Z1 // −2·geluC·(x + 0.044715·x·x·x)
	VMULPD Z0, Z1, Z1
	VMULPD Z0, Z1, Z1
	VADDPD Z1, Z0, Z1
	VMULPD Z31, Z1, Z1
	EXPCHECK(done)
	EXP
	VMULPD Z16, Z0, Z2 // du = geluC·(1 + 3·0.044715·x·x)
	VMULPD Z0, Z2, Z2
	VADDPD Z29, Z2, Z2
	VMULPD Z17, Z2, Z2
	VADDPD Z29, Z1, Z3 // s = 1/(1 + e)
	VDIVPD Z3, Z29, Z3
	VMULPD Z3, Z0, Z4 // y = x·s
	VCVTPD2PS Z4, Y4
	VMOVUPS Y4, (DI)(AX*4)
	VADDPD Z0, Z0, Z5 // d = s + 2x·s·(1−s)·du
	VMULPD Z3, Z5, Z5
	VSUBPD Z3, Z29, Z6
	VMULPD Z6, Z5, Z5
	VMULPD Z2, Z5, Z5
	VADDPD Z5, Z3, Z5
	VCVTPD2PS Z5, Y5
	VMOVUPS Y5, (DX)(AX*4)
	ADDQ $8, AX
	JMP loop
done:
	VZEROUPPER
	MOVQ AX, ret+32(FP)
	RET

// The AVX2 versions: four float64 lanes in a YMM register, the constants
// read from memory (four copies each) for want of registers.

DATA avx2Abs<>+0(SB)/8, $0x7fffffffffffffff
DATA avx2Abs<>+8(SB)/8, $0x7fffffffffffffff
DATA avx2Abs<>+16(SB)/8, $0x7fffffffffffffff
DATA avx2Abs<>+24(SB)/8, $0x7fffffffffffffff
GLOBL avx2Abs<>(SB), RODATA|NOPTR, $32
DATA avx2Max<>+0(SB)/8, $0x4086200000000000 // 708
DATA avx2Max<>+8(SB)/8, $0x4086200000000000
DATA avx2Max<>+16(SB)/8, $0x4086200000000000
DATA avx2Max<>+24(SB)/8, $0x4086200000000000
GLOBL avx2Max<>(SB), RODATA|NOPTR, $32
DATA avx2Inv<>+0(SB)/8, $0x40671547652b82fe // N/ln2
DATA avx2Inv<>+8(SB)/8, $0x40671547652b82fe
DATA avx2Inv<>+16(SB)/8, $0x40671547652b82fe
DATA avx2Inv<>+24(SB)/8, $0x40671547652b82fe
GLOBL avx2Inv<>(SB), RODATA|NOPTR, $32
DATA avx2Shift<>+0(SB)/8, $0x4338000000000000 // 1.5·2⁵²
DATA avx2Shift<>+8(SB)/8, $0x4338000000000000
DATA avx2Shift<>+16(SB)/8, $0x4338000000000000
DATA avx2Shift<>+24(SB)/8, $0x4338000000000000
GLOBL avx2Shift<>(SB), RODATA|NOPTR, $32
DATA avx2Hi<>+0(SB)/8, $0x3f762e42ff000000 // expLn2HiN
DATA avx2Hi<>+8(SB)/8, $0x3f762e42ff000000
DATA avx2Hi<>+16(SB)/8, $0x3f762e42ff000000
DATA avx2Hi<>+24(SB)/8, $0x3f762e42ff000000
GLOBL avx2Hi<>(SB), RODATA|NOPTR, $32
DATA avx2Lo<>+0(SB)/8, $0xbd5718432a1b0e26 // expLn2LoN
DATA avx2Lo<>+8(SB)/8, $0xbd5718432a1b0e26
DATA avx2Lo<>+16(SB)/8, $0xbd5718432a1b0e26
DATA avx2Lo<>+24(SB)/8, $0xbd5718432a1b0e26
GLOBL avx2Lo<>(SB), RODATA|NOPTR, $32
DATA avx2Mask<>+0(SB)/8, $0x000000000000007f // expN−1
DATA avx2Mask<>+8(SB)/8, $0x000000000000007f
DATA avx2Mask<>+16(SB)/8, $0x000000000000007f
DATA avx2Mask<>+24(SB)/8, $0x000000000000007f
GLOBL avx2Mask<>(SB), RODATA|NOPTR, $32
DATA avx2Half<>+0(SB)/8, $0x3fe0000000000000 // 0.5
DATA avx2Half<>+8(SB)/8, $0x3fe0000000000000
DATA avx2Half<>+16(SB)/8, $0x3fe0000000000000
DATA avx2Half<>+24(SB)/8, $0x3fe0000000000000
GLOBL avx2Half<>(SB), RODATA|NOPTR, $32
DATA avx2C6<>+0(SB)/8, $0x3fc5555555555555 // 1/6
DATA avx2C6<>+8(SB)/8, $0x3fc5555555555555
DATA avx2C6<>+16(SB)/8, $0x3fc5555555555555
DATA avx2C6<>+24(SB)/8, $0x3fc5555555555555
GLOBL avx2C6<>(SB), RODATA|NOPTR, $32
DATA avx2C24<>+0(SB)/8, $0x3fa5555555555555 // 1/24
DATA avx2C24<>+8(SB)/8, $0x3fa5555555555555
DATA avx2C24<>+16(SB)/8, $0x3fa5555555555555
DATA avx2C24<>+24(SB)/8, $0x3fa5555555555555
GLOBL avx2C24<>(SB), RODATA|NOPTR, $32
DATA avx2C120<>+0(SB)/8, $0x3f81111111111111 // 1/120
DATA avx2C120<>+8(SB)/8, $0x3f81111111111111
DATA avx2C120<>+16(SB)/8, $0x3f81111111111111
DATA avx2C120<>+24(SB)/8, $0x3f81111111111111
GLOBL avx2C120<>(SB), RODATA|NOPTR, $32
DATA avx2One<>+0(SB)/8, $0x3ff0000000000000 // 1
DATA avx2One<>+8(SB)/8, $0x3ff0000000000000
DATA avx2One<>+16(SB)/8, $0x3ff0000000000000
DATA avx2One<>+24(SB)/8, $0x3ff0000000000000
GLOBL avx2One<>(SB), RODATA|NOPTR, $32
DATA avx2A<>+0(SB)/8, $0x3fa6e4e26d4801f7 // 0.044715
DATA avx2A<>+8(SB)/8, $0x3fa6e4e26d4801f7
DATA avx2A<>+16(SB)/8, $0x3fa6e4e26d4801f7
DATA avx2A<>+24(SB)/8, $0x3fa6e4e26d4801f7
GLOBL avx2A<>(SB), RODATA|NOPTR, $32
DATA avx2M2c<>+0(SB)/8, $0xbff9884533d43651 // −2·geluC
DATA avx2M2c<>+8(SB)/8, $0xbff9884533d43651
DATA avx2M2c<>+16(SB)/8, $0xbff9884533d43651
DATA avx2M2c<>+24(SB)/8, $0xbff9884533d43651
GLOBL avx2M2c<>(SB), RODATA|NOPTR, $32
DATA avx2A3<>+0(SB)/8, $0x3fc12ba9d1f60179 // 3·0.044715
DATA avx2A3<>+8(SB)/8, $0x3fc12ba9d1f60179
DATA avx2A3<>+16(SB)/8, $0x3fc12ba9d1f60179
DATA avx2A3<>+24(SB)/8, $0x3fc12ba9d1f60179
GLOBL avx2A3<>(SB), RODATA|NOPTR, $32
DATA avx2C<>+0(SB)/8, $0x3fe9884533d43651 // geluC
DATA avx2C<>+8(SB)/8, $0x3fe9884533d43651
DATA avx2C<>+16(SB)/8, $0x3fe9884533d43651
DATA avx2C<>+24(SB)/8, $0x3fe9884533d43651
GLOBL avx2C<>(SB), RODATA|NOPTR, $32

// EXPCHECK2 jumps to done unless every lane of Y1 is within ±708.
#define EXPCHECK2(done) \
	VANDPD avx2Abs<>(SB), Y1, Y2 \
	VCMPPD $2, avx2Max<>(SB), Y2, Y2 \
	VMOVMSKPD Y2, R9 \
	CMPQ R9, $15 \
	JNE done

// EXP2 sets Y1 = e^Y1 as EXP does, using Y2–Y13 (Y14 holds the shift, Y15
// expN−1, R8 the table). k>>7<<52 is formed as (k &^ 127)<<45, AVX2 having
// no 64-bit arithmetic shift.
#define EXP2 \
	VMULPD avx2Inv<>(SB), Y1, Y3 \
	VADDPD Y14, Y3, Y3 \
	VPSUBQ Y14, Y3, Y4 \
	VSUBPD Y14, Y3, Y3 \
	VMULPD avx2Hi<>(SB), Y3, Y5 \
	VSUBPD Y5, Y1, Y5 \
	VMULPD avx2Lo<>(SB), Y3, Y6 \
	VSUBPD Y6, Y5, Y5 \
	VPAND Y15, Y4, Y6 \
	VPADDQ Y6, Y6, Y6 \
	VPCMPEQQ Y2, Y2, Y2 \
	VGATHERQPD Y2, (R8)(Y6*8), Y7 \
	VPCMPEQQ Y2, Y2, Y2 \
	VGATHERQPD Y2, 8(R8)(Y6*8), Y8 \
	VPANDN Y4, Y15, Y9 \
	VPSLLQ $45, Y9, Y9 \
	VPADDQ Y9, Y7, Y7 \
	VMULPD Y5, Y5, Y10 \
	VADDPD Y5, Y8, Y11 \
	VMULPD avx2C6<>(SB), Y5, Y12 \
	VADDPD avx2Half<>(SB), Y12, Y12 \
	VMULPD Y12, Y10, Y12 \
	VADDPD Y12, Y11, Y11 \
	VMULPD avx2C120<>(SB), Y5, Y13 \
	VADDPD avx2C24<>(SB), Y13, Y13 \
	VMULPD Y10, Y10, Y10 \
	VMULPD Y13, Y10, Y13 \
	VADDPD Y13, Y11, Y11 \
	VMULPD Y11, Y7, Y12 \
	VADDPD Y12, Y7, Y1

#define EXPCONSTS2 \
	VMOVUPD avx2Shift<>(SB), Y14 \
	VMOVDQU avx2Mask<>(SB), Y15 \
	LEAQ ·expTable(SB), R8

// func expBlock4(v *float64, n int) int
TEXT ·expBlock4(SB), NOSPLIT, $0-24
	MOVQ v+0(FP), SI
	MOVQ n+8(FP), CX
	EXPCONSTS2
	XORQ AX, AX
loop:
	CMPQ AX, CX
	JGE done
	VMOVUPD (SI)(AX*8), Y1
	EXPCHECK2(done)
	EXP2
	VMOVUPD Y1, (SI)(AX*8)
	ADDQ $4, AX
	JMP loop
done:
	VZEROUPPER
	MOVQ AX, ret+16(FP)
	RET

// func geluTanhBlock4(x, y, d *float32, n int) int
TEXT ·geluTanhBlock4(SB), NOSPLIT, $0-40
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ d+16(FP), DX
	MOVQ n+24(FP), CX
	EXPCONSTS2
	XORQ AX, AX
loop:
	CMPQ AX, CX
	JGE done
	VCVTPS2PD (SI)(AX*4), Y0
	VMULPD avx2A<>(SB), Y0, Y1
	VMULPD Y0, Y1, Y1
	VMULPD Y0, Y1, Y1
	VADDPD Y1, Y0, Y1
	VMULPD avx2M2c<>(SB), Y1, Y1
	EXPCHECK2(done)
	EXP2
	VMULPD avx2A3<>(SB), Y0, Y2
	VMULPD Y0, Y2, Y2
	VADDPD avx2One<>(SB), Y2, Y2
	VMULPD avx2C<>(SB), Y2, Y2
	VADDPD avx2One<>(SB), Y1, Y3
	VMOVUPD avx2One<>(SB), Y4
	VDIVPD Y3, Y4, Y3
	VMULPD Y3, Y0, Y4
	VCVTPD2PSY Y4, X4
	VMOVUPS X4, (DI)(AX*4)
	VADDPD Y0, Y0, Y5
	VMULPD Y3, Y5, Y5
	VMOVUPD avx2One<>(SB), Y6
	VSUBPD Y3, Y6, Y6
	VMULPD Y6, Y5, Y5
	VMULPD Y2, Y5, Y5
	VADDPD Y5, Y3, Y5
	VCVTPD2PSY Y5, X5
	VMOVUPS X5, (DX)(AX*4)
	ADDQ $4, AX
	JMP loop
done:
	VZEROUPPER
	MOVQ AX, ret+32(FP)
	RET
