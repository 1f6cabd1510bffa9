//go:build !purego

#include "textflag.h"
#include "ziggurat_amd64.h"

// VAESROUNDS runs AES-128's rounds 1–10 on the four blocks of z, whose
// round 0 (the XOR with Z20) is done, with the round keys of VAESKEYS.
#define VAESROUNDS(z) \
	VAESENC Z21, z, z \
	VAESENC Z22, z, z \
	VAESENC Z23, z, z \
	VAESENC Z24, z, z \
	VAESENC Z25, z, z \
	VAESENC Z26, z, z \
	VAESENC Z27, z, z \
	VAESENC Z28, z, z \
	VAESENC Z29, z, z \
	VAESENCLAST Z30, z, z

// VAESKEYS broadcasts AES-128's 11 round keys at AX into every 128-bit
// lane of Z20–Z30, for ctrVAES and zigguratVAES.
#define VAESKEYS \
	VBROADCASTI32X4 0(AX), Z20 \
	VBROADCASTI32X4 16(AX), Z21 \
	VBROADCASTI32X4 32(AX), Z22 \
	VBROADCASTI32X4 48(AX), Z23 \
	VBROADCASTI32X4 64(AX), Z24 \
	VBROADCASTI32X4 80(AX), Z25 \
	VBROADCASTI32X4 96(AX), Z26 \
	VBROADCASTI32X4 112(AX), Z27 \
	VBROADCASTI32X4 128(AX), Z28 \
	VBROADCASTI32X4 144(AX), Z29 \
	VBROADCASTI32X4 160(AX), Z30

// AES-128 in counter mode (AESCTR): blocks keystream blocks (a positive
// multiple of 4) written to dst, block b the encryption of the counter
// hi·2⁶⁴ + lo + b (mod 2¹²⁸) as 16 big-endian bytes.
//
// A counter is kept as two quadwords in a 128-bit lane, lo then hi, each
// little-endian: VPSHUFB with bswap128 reverses the lane's 16 bytes, which
// makes the block hi big-endian then lo big-endian, as AES takes it. A
// counter is advanced by adding to lo alone and carrying into hi where lo
// wrapped past 2⁶⁴ (the new lo below the increment); hi wraps at 2⁶⁴
// uncarried, which is the wrap of the 128-bit counter at 2¹²⁸.

DATA bswap128<>+0(SB)/8, $0x08090a0b0c0d0e0f
DATA bswap128<>+8(SB)/8, $0x0001020304050607
GLOBL bswap128<>(SB), RODATA|NOPTR, $16

// The increments of lo by lane: +0…+3 for a ZMM register's 4 counters, and
// 4, 32 and 16, the steps of the loops below, in every lane; hi's
// quadwords 0.
DATA ctrLanes<>+0(SB)/8, $0
DATA ctrLanes<>+8(SB)/8, $0
DATA ctrLanes<>+16(SB)/8, $1
DATA ctrLanes<>+24(SB)/8, $0
DATA ctrLanes<>+32(SB)/8, $2
DATA ctrLanes<>+40(SB)/8, $0
DATA ctrLanes<>+48(SB)/8, $3
DATA ctrLanes<>+56(SB)/8, $0
DATA ctrLanes<>+64(SB)/8, $4
DATA ctrLanes<>+72(SB)/8, $0
DATA ctrLanes<>+80(SB)/8, $32
DATA ctrLanes<>+88(SB)/8, $0
DATA ctrLanes<>+96(SB)/8, $16
DATA ctrLanes<>+104(SB)/8, $0
GLOBL ctrLanes<>(SB), RODATA|NOPTR, $112

// ADDCTR adds inc, lo quadwords only, to the counters c (AVX-512F): K1
// marks the lo quadwords that wrapped (c < inc unsigned after the add),
// shifted left one bit it marks their hi quadwords, which get the carry
// (Z18, ones) by a merging add.
#define ADDCTR(inc, c) \
	VPADDQ inc, c, c \
	VPCMPUQ $1, inc, c, K1 \
	KSHIFTLW $1, K1, K1 \
	VPADDQ Z18, c, K1, c

// ADDNC adds inc to the counters c where no lo quadword wraps.
#define ADDNC(inc, c) VPADDQ inc, c, c

// ROUND8 is one AES round with round key k on the states Z0–Z7.
#define ROUND8(k) \
	VAESENC k, Z0, Z0 \
	VAESENC k, Z1, Z1 \
	VAESENC k, Z2, Z2 \
	VAESENC k, Z3, Z3 \
	VAESENC k, Z4, Z4 \
	VAESENC k, Z5, Z5 \
	VAESENC k, Z6, Z6 \
	VAESENC k, Z7, Z7

// VAES32 is the main loop's body: 32 blocks from the counters Z8–Z15 into
// Z0–Z7, the counters then advanced by 32 with add (ADDCTR, or ADDNC
// where no lo quadword can wrap).
#define VAES32(add) \
	VPSHUFB Z16, Z8, Z0 \
	VPSHUFB Z16, Z9, Z1 \
	VPSHUFB Z16, Z10, Z2 \
	VPSHUFB Z16, Z11, Z3 \
	VPSHUFB Z16, Z12, Z4 \
	VPSHUFB Z16, Z13, Z5 \
	VPSHUFB Z16, Z14, Z6 \
	VPSHUFB Z16, Z15, Z7 \
	VPXORQ Z20, Z0, Z0 \
	VPXORQ Z20, Z1, Z1 \
	VPXORQ Z20, Z2, Z2 \
	VPXORQ Z20, Z3, Z3 \
	VPXORQ Z20, Z4, Z4 \
	VPXORQ Z20, Z5, Z5 \
	VPXORQ Z20, Z6, Z6 \
	VPXORQ Z20, Z7, Z7 \
	add(Z17, Z8) \
	add(Z17, Z9) \
	add(Z17, Z10) \
	add(Z17, Z11) \
	add(Z17, Z12) \
	add(Z17, Z13) \
	add(Z17, Z14) \
	add(Z17, Z15) \
	ROUND8(Z21) \
	ROUND8(Z22) \
	ROUND8(Z23) \
	ROUND8(Z24) \
	ROUND8(Z25) \
	ROUND8(Z26) \
	ROUND8(Z27) \
	ROUND8(Z28) \
	ROUND8(Z29) \
	VAESENCLAST Z30, Z0, Z0 \
	VAESENCLAST Z30, Z1, Z1 \
	VAESENCLAST Z30, Z2, Z2 \
	VAESENCLAST Z30, Z3, Z3 \
	VAESENCLAST Z30, Z4, Z4 \
	VAESENCLAST Z30, Z5, Z5 \
	VAESENCLAST Z30, Z6, Z6 \
	VAESENCLAST Z30, Z7, Z7 \
	VMOVDQU64 Z0, 0(DI) \
	VMOVDQU64 Z1, 64(DI) \
	VMOVDQU64 Z2, 128(DI) \
	VMOVDQU64 Z3, 192(DI) \
	VMOVDQU64 Z4, 256(DI) \
	VMOVDQU64 Z5, 320(DI) \
	VMOVDQU64 Z6, 384(DI) \
	VMOVDQU64 Z7, 448(DI)

// func ctrVAES(rk *[176]byte, dst *byte, blocks int, lo, hi uint64)
//
// VAES on ZMM registers, 4 blocks a register: the main loop makes 32
// blocks (512 bytes) with 8 registers in flight, which hides VAESENC's
// latency, each with counters of its own (Z8–Z15, 4j…4j+3 past the
// loop's first) advanced by 32 a turn; the tail 4 at a time from Z8.
// Registers: Z0–Z7 states, Z8–Z15 counters, Z16 bswap128, Z17 32s, Z18
// ones, Z19 4s, Z20–Z30 the round keys.
TEXT ·ctrVAES(SB), NOSPLIT, $0-40
	MOVQ rk+0(FP), AX
	MOVQ dst+8(FP), DI
	MOVQ blocks+16(FP), CX
	VBROADCASTI32X4 bswap128<>(SB), Z16
	VBROADCASTI32X4 ctrLanes<>+80(SB), Z17
	MOVQ $1, DX
	VPBROADCASTQ DX, Z18
	VBROADCASTI32X4 ctrLanes<>+64(SB), Z19
	VAESKEYS

	// Z8: the counter (lo, hi) in every lane, plus 0…3; Z9–Z15 each 4
	// past the one before.
	VMOVQ lo+24(FP), X8
	VPINSRQ $1, hi+32(FP), X8, X8
	VSHUFI64X2 $0, Z8, Z8, Z8
	VMOVDQU64 ctrLanes<>(SB), Z0
	ADDCTR(Z0, Z8)
	VMOVDQA64 Z8, Z9
	ADDCTR(Z19, Z9)
	VMOVDQA64 Z9, Z10
	ADDCTR(Z19, Z10)
	VMOVDQA64 Z10, Z11
	ADDCTR(Z19, Z11)
	VMOVDQA64 Z11, Z12
	ADDCTR(Z19, Z12)
	VMOVDQA64 Z12, Z13
	ADDCTR(Z19, Z13)
	VMOVDQA64 Z13, Z14
	ADDCTR(Z19, Z14)
	VMOVDQA64 Z14, Z15
	ADDCTR(Z19, Z15)

	CMPQ CX, $32
	JB vaestail

	// The main loop without carries (ADDNC) where no lo quadword reaches
	// 2⁶⁴ in this call: lo + blocks + 32 (the counters are advanced past
	// the last block by up to 32) does not carry; else with them.
	MOVQ lo+24(FP), R9
	ADDQ CX, R9
	JCS vaesloop
	ADDQ $32, R9
	JCS vaesloop

vaesloopnc:
	VAES32(ADDNC)
	ADDQ $512, DI
	SUBQ $32, CX
	CMPQ CX, $32
	JAE vaesloopnc
	JMP vaestail

vaesloop:
	VAES32(ADDCTR)
	ADDQ $512, DI
	SUBQ $32, CX
	CMPQ CX, $32
	JAE vaesloop

vaestail:
	TESTQ CX, CX
	JZ vaesdone

vaestailloop:
	VPSHUFB Z16, Z8, Z0
	VPXORQ Z20, Z0, Z0
	ADDCTR(Z19, Z8)
	VAESROUNDS(Z0)
	VMOVDQU64 Z0, 0(DI)
	ADDQ $64, DI
	SUBQ $4, CX
	JNZ vaestailloop

vaesdone:
	VZEROUPPER
	RET

// CTRBLOCK makes the counter (SI lo, DX hi) block x and advances the
// counter: the carry of lo's add goes into hi.
#define CTRBLOCK(x) \
	VMOVQ SI, x \
	VPINSRQ $1, DX, x, x \
	VPSHUFB X15, x, x \
	ADDQ $1, SI \
	ADCQ $0, DX

// ROUNDX8 and ROUNDX4 run one round, key off(AX) into X8, with instruction op on the
// states X0–X(n−1), n 8 or 4.
#define ROUNDX8(op, off) \
	VMOVDQU off(AX), X8 \
	op X8, X0, X0 \
	op X8, X1, X1 \
	op X8, X2, X2 \
	op X8, X3, X3 \
	op X8, X4, X4 \
	op X8, X5, X5 \
	op X8, X6, X6 \
	op X8, X7, X7

#define ROUNDX4(op, off) \
	VMOVDQU off(AX), X8 \
	op X8, X0, X0 \
	op X8, X1, X1 \
	op X8, X2, X2 \
	op X8, X3, X3

// func ctrAESNI(rk *[176]byte, dst *byte, blocks int, lo, hi uint64)
//
// AES-NI (VEX-encoded, on XMM registers), 8 blocks in flight (X0–X7), the
// counter in SI and DX, the round keys read from rk a round at a time
// into X8; the tail of 4 blocks the same on X0–X3.
TEXT ·ctrAESNI(SB), NOSPLIT, $0-40
	MOVQ rk+0(FP), AX
	MOVQ dst+8(FP), DI
	MOVQ blocks+16(FP), CX
	MOVQ lo+24(FP), SI
	MOVQ hi+32(FP), DX
	VMOVDQU bswap128<>(SB), X15
	CMPQ CX, $8
	JB aesnitail

aesniloop:
	CTRBLOCK(X0)
	CTRBLOCK(X1)
	CTRBLOCK(X2)
	CTRBLOCK(X3)
	CTRBLOCK(X4)
	CTRBLOCK(X5)
	CTRBLOCK(X6)
	CTRBLOCK(X7)
	ROUNDX8(VPXOR, 0)
	ROUNDX8(VAESENC, 16)
	ROUNDX8(VAESENC, 32)
	ROUNDX8(VAESENC, 48)
	ROUNDX8(VAESENC, 64)
	ROUNDX8(VAESENC, 80)
	ROUNDX8(VAESENC, 96)
	ROUNDX8(VAESENC, 112)
	ROUNDX8(VAESENC, 128)
	ROUNDX8(VAESENC, 144)
	ROUNDX8(VAESENCLAST, 160)
	VMOVDQU X0, 0(DI)
	VMOVDQU X1, 16(DI)
	VMOVDQU X2, 32(DI)
	VMOVDQU X3, 48(DI)
	VMOVDQU X4, 64(DI)
	VMOVDQU X5, 80(DI)
	VMOVDQU X6, 96(DI)
	VMOVDQU X7, 112(DI)
	ADDQ $128, DI
	SUBQ $8, CX
	CMPQ CX, $8
	JAE aesniloop

aesnitail:
	TESTQ CX, CX
	JZ aesnidone
	CTRBLOCK(X0)
	CTRBLOCK(X1)
	CTRBLOCK(X2)
	CTRBLOCK(X3)
	ROUNDX4(VPXOR, 0)
	ROUNDX4(VAESENC, 16)
	ROUNDX4(VAESENC, 32)
	ROUNDX4(VAESENC, 48)
	ROUNDX4(VAESENC, 64)
	ROUNDX4(VAESENC, 80)
	ROUNDX4(VAESENC, 96)
	ROUNDX4(VAESENC, 112)
	ROUNDX4(VAESENC, 128)
	ROUNDX4(VAESENC, 144)
	ROUNDX4(VAESENCLAST, 160)
	VMOVDQU X0, 0(DI)
	VMOVDQU X1, 16(DI)
	VMOVDQU X2, 32(DI)
	VMOVDQU X3, 48(DI)

aesnidone:
	VZEROUPPER
	RET

// ROUND4 is one AES round with round key k on the states Z0–Z3.
#define ROUND4(k) \
	VAESENC k, Z0, Z0 \
	VAESENC k, Z1, Z1 \
	VAESENC k, Z2, Z2 \
	VAESENC k, Z3, Z3

// AES16 makes the 16 blocks of the counters Z8–Z11 into off(SI) and
// advances the counters by 16.
#define AES16(off) \
	VPSHUFB Z16, Z8, Z0 \
	VPSHUFB Z16, Z9, Z1 \
	VPSHUFB Z16, Z10, Z2 \
	VPSHUFB Z16, Z11, Z3 \
	VPXORQ Z20, Z0, Z0 \
	VPXORQ Z20, Z1, Z1 \
	VPXORQ Z20, Z2, Z2 \
	VPXORQ Z20, Z3, Z3 \
	VPADDQ Z17, Z8, Z8 \
	VPADDQ Z17, Z9, Z9 \
	VPADDQ Z17, Z10, Z10 \
	VPADDQ Z17, Z11, Z11 \
	ROUND4(Z21) \
	ROUND4(Z22) \
	ROUND4(Z23) \
	ROUND4(Z24) \
	ROUND4(Z25) \
	ROUND4(Z26) \
	ROUND4(Z27) \
	ROUND4(Z28) \
	ROUND4(Z29) \
	VAESENCLAST Z30, Z0, Z0 \
	VAESENCLAST Z30, Z1, Z1 \
	VAESENCLAST Z30, Z2, Z2 \
	VAESENCLAST Z30, Z3, Z3 \
	VMOVDQU64 Z0, (off)(SI) \
	VMOVDQU64 Z1, (off+64)(SI) \
	VMOVDQU64 Z2, (off+128)(SI) \
	VMOVDQU64 Z3, (off+192)(SI)

// ZIG32 is the fast path of the turn of 32 words at SI, then SI, DI and
// R10 advanced past it, d's values 2 KiB ahead prefetched.
#define ZIG32 \
	PREFETCHT0 2048(DI) \
	PREFETCHT0 2112(DI) \
	ZIG8(0) \
	ZIG8(64) \
	ZIG8(128) \
	ZIG8(192) \
	ADDQ $256, SI \
	ADDQ $128, DI \
	ADDQ $4, R10

// func zigguratVAES(rk *[176]byte, w *byte, n int, lo, hi uint64, d *float32, std float64, layers *[256][2]float64, rejected *uint8)
//
// ctrVAES's keystream of n/2 blocks from counter hi·2⁶⁴ + lo into w, n a
// multiple of 8 words, and zigguratAVX512's fast path on its words (ZIG8,
// ziggurat_amd64.h), in one loop: 16 blocks (32 words, 4 ZMM registers)
// a turn, whose rounds (VAESENC, on one port) run beside the fast path's
// work (table look-ups, products and conversions, most on the other) on
// the words made two turns before, stored by then (the fast path on the
// words just stored took half as long again: its byte loads waited on
// the stores), then 4 blocks at a time. No lo quadword may wrap (the
// caller checks that lo + n/2 + 16 < 2⁶⁴), so the counters are advanced
// without carries. d's values are prefetched 2 KiB ahead, as in
// zigguratAVX512. Registers: Z0–Z3 AES's states, Z8–Z11 the counters
// (Z8 the next 4 blocks' lanes, Z9–Z11 each 4 past the one before), Z16
// bswap128, Z17 16s, Z20–Z30 the round keys; ZIG8's Z14 (1.0), Z15 (std)
// and Z31 (the sign bit), its scratch registers, SI w, DI d, R8 layers, R10
// rejected.
TEXT ·zigguratVAES(SB), NOSPLIT, $0-72
	MOVQ rk+0(FP), AX
	MOVQ w+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ d+40(FP), DI
	VBROADCASTSD std+48(FP), Z15
	MOVQ layers+56(FP), R8
	MOVQ rejected+64(FP), R10
	ZIGCONSTS(DX)
	VBROADCASTI32X4 bswap128<>(SB), Z16
	VBROADCASTI32X4 ctrLanes<>+96(SB), Z17
	VAESKEYS

	VMOVQ lo+24(FP), X8
	VPINSRQ $1, hi+32(FP), X8, X8
	VSHUFI64X2 $0, Z8, Z8, Z8
	VPADDQ ctrLanes<>(SB), Z8, Z8
	VBROADCASTI32X4 ctrLanes<>+64(SB), Z0
	VPADDQ Z0, Z8, Z9
	VPADDQ Z0, Z9, Z10
	VPADDQ Z0, Z10, Z11

	SHRQ $5, CX // turns of 32 words
	JZ zigvaestail
	AES16(0)
	CMPQ CX, $1
	JE zigvaeslast
	AES16(256)
	CMPQ CX, $2
	JE zigvaeslast2

zigvaesloop:
	AES16(512)
	ZIG32
	DECQ CX
	CMPQ CX, $2
	JA zigvaesloop

zigvaeslast2:
	ZIG32

zigvaeslast:
	ZIG32

zigvaestail:
	MOVQ n+16(FP), CX
	SHRQ $3, CX
	ANDQ $3, CX
	JZ zigvaesdone

zigvaestailloop:
	VPSHUFB Z16, Z8, Z0
	VPXORQ Z20, Z0, Z0
	VAESROUNDS(Z0)
	VMOVDQU64 Z0, 0(SI)
	VMOVDQA64 Z9, Z8
	VMOVDQA64 Z10, Z9
	VMOVDQA64 Z11, Z10
	PREFETCHT0 2048(DI)
	ZIG8(0)
	ADDQ $64, SI
	ADDQ $32, DI
	INCQ R10
	DECQ CX
	JNZ zigvaestailloop

zigvaesdone:
	VZEROUPPER
	RET
