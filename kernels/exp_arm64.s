//go:build !purego

#include "textflag.h"
#include "neon_arm64.h"

// Exp and GELUTanh, two float64 lanes to a NEON register and four values a
// step, with the portable code's operations in its order, every product
// rounded before it is added (FMUL then FADD, never FMLA: the Go code
// rounds its products explicitly, so no architecture fuses them), so that
// every lane rounds as the Go code does.

// BCAST sets both lanes of v to the float64 with the given bits.
#define BCAST(bits, v) \
	MOVD $bits, R3 \
	VDUP R3, v.D2

// EXPCONSTS broadcasts exp's constants into V20–V28: 708, N/ln2, the
// shift 1.5·2⁵², expLn2HiN, expLn2LoN, 0.5, 1/6, 1/24, 1/120; and the
// table's address into R8.
#define EXPCONSTS \
	BCAST(0x4086200000000000, V20) \
	BCAST(0x40671547652b82fe, V21) \
	BCAST(0x4338000000000000, V22) \
	BCAST(0x3f762e42ff000000, V23) \
	BCAST(0xbd5718432a1b0e26, V24) \
	BCAST(0x3fe0000000000000, V25) \
	BCAST(0x3fc5555555555555, V26) \
	BCAST(0x3fa5555555555555, V27) \
	BCAST(0x3f81111111111111, V28) \
	MOVD $·expTable(SB), R8

// EXPCHECK jumps to done unless all four lanes of Vx0 and Vx1 are within
// ±708 (NaN is not), using Vm0, Vm1, R3 and R4.
#define EXPCHECK(x0, x1, m0, m1, done) \
	FACGE_2D(m0, 20, x0) \
	FACGE_2D(m1, 20, x1) \
	AND_16B(m0, m0, m1) \
	UMOV_D0(3, m0) \
	UMOV_D1(4, m0) \
	AND R3, R4 \
	CMN $1, R4 \
	BNE done

// EXP sets Vs to e^Vx by expGo's steps, overwriting Vx, Vkd, Vk, Vs+1 and
// Vt and using R3 and R4: kd = shift + x·N/ln2; k = bits(kd) −
// bits(shift); r = x − (kd−shift)·hi − (kd−shift)·lo; the table's bits and
// tail loaded lane by lane from entry k mod N into Vs and Vs+1; scale =
// bits + (k>>7)<<52 (a logical shift: the bits that differ from the
// arithmetic one are shifted out); p = (r + tail) + r²·(0.5 + r/6) +
// r⁴·(1/24 + r/120); and e^x = scale + scale·p.
#define EXP(x, kd, k, s, t) \
	FMUL_2D(t, x, 21) \
	FADD_2D(kd, t, 22) \
	SUB_2D(k, kd, 22) \
	FSUB_2D(kd, kd, 22) \
	FMUL_2D(t, kd, 23) \
	FSUB_2D(x, x, t) \
	FMUL_2D(t, kd, 24) \
	FSUB_2D(x, x, t) \
	UMOV_D0(3, k) \
	UMOV_D1(4, k) \
	UBFIZ $4, R3, $7, R3 \
	UBFIZ $4, R4, $7, R4 \
	ADD R8, R3 \
	ADD R8, R4 \
	LD2_D0(s, 3) \
	LD2_D1(s, 4) \
	USHR_2D(k, k, 7) \
	SHL_2D(k, k, 52) \
	ADD_2D(s, s, k) \
	FMUL_2D(kd, x, x) \
	FMUL_2D(k, x, 26) \
	FADD_2D(k, k, 25) \
	FADD_2D(s+1, x, s+1) \
	FMUL_2D(t, kd, k) \
	FADD_2D(s+1, s+1, t) \
	FMUL_2D(k, x, 28) \
	FADD_2D(k, k, 27) \
	FMUL_2D(kd, kd, kd) \
	FMUL_2D(t, kd, k) \
	FADD_2D(s+1, s+1, t) \
	FMUL_2D(t, s, s+1) \
	FADD_2D(s, s, t)

// func expBlockNEON(v *float64, n int) int
TEXT ·expBlockNEON(SB), NOSPLIT, $0-24
	MOVD v+0(FP), R0
	MOVD n+8(FP), R1
	EXPCONSTS
	MOVD $0, R2
loop:
	CMP R1, R2
	BGE done
	VLD1 (R0), [V0.D2, V1.D2]
	EXPCHECK(0, 1, 2, 3, done)
	EXP(0, 2, 3, 4, 12)
	EXP(1, 6, 7, 8, 13)
	VST1.P [V4.D2], 16(R0)
	VST1.P [V8.D2], 16(R0)
	ADD $4, R2
	B loop
done:
	MOVD R2, ret+16(FP)
	RET

// func geluTanhBlockNEON(x, y, d *float32, n int) int
//
// V14 and V15 hold x (two lanes each), V16–V19 and V29 0.044715, −2·geluC,
// 3·0.044715, 1 and geluC.
TEXT ·geluTanhBlockNEON(SB), NOSPLIT, $0-40
	MOVD x+0(FP), R0
	MOVD y+8(FP), R5
	MOVD d+16(FP), R6
	MOVD n+24(FP), R1
	EXPCONSTS
	BCAST(0x3fa6e4e26d4801f7, V16)
	BCAST(0xbff9884533d43651, V17)
	BCAST(0x3fc12ba9d1f60179, V18)
	BCAST(0x3ff0000000000000, V19)
	BCAST(0x3fe9884533d43651, V29)
	MOVD $0, R2
loop:
	CMP R1, R2
	BGE done
	VLD1 (R0), [V30.S4]
	FCVTL_2D(14, 30)
	FCVTL2_2D(15, 30)
	// −2·geluC·(x + 0.044715·x·x·x).
	FMUL_2D(0, 16, 14)
	FMUL_2D(0, 0, 14)
	FMUL_2D(0, 0, 14)
	FADD_2D(2, 14, 0)
	FMUL_2D(0, 2, 17)
	FMUL_2D(1, 16, 15)
	FMUL_2D(1, 1, 15)
	FMUL_2D(1, 1, 15)
	FADD_2D(6, 15, 1)
	FMUL_2D(1, 6, 17)
	EXPCHECK(0, 1, 2, 6, done)
	EXP(0, 2, 3, 4, 12)
	EXP(1, 6, 7, 8, 13)
	// du = geluC·(1 + 3·0.044715·x·x); s = 1/(e + 1); y = s·x;
	// d = s + du·((1 − s)·(s·(x + x))).
	FMUL_2D(3, 18, 14)
	FMUL_2D(3, 3, 14)
	FADD_2D(2, 3, 19)
	FMUL_2D(2, 2, 29)
	FADD_2D(4, 4, 19)
	FDIV_2D(4, 19, 4)
	FMUL_2D(5, 4, 14)
	FADD_2D(3, 14, 14)
	FMUL_2D(3, 4, 3)
	FSUB_2D(0, 19, 4)
	FMUL_2D(3, 0, 3)
	FMUL_2D(3, 2, 3)
	FADD_2D(4, 4, 3)
	FMUL_2D(7, 18, 15)
	FMUL_2D(7, 7, 15)
	FADD_2D(6, 7, 19)
	FMUL_2D(6, 6, 29)
	FADD_2D(8, 8, 19)
	FDIV_2D(8, 19, 8)
	FMUL_2D(9, 8, 15)
	FADD_2D(7, 15, 15)
	FMUL_2D(7, 8, 7)
	FSUB_2D(1, 19, 8)
	FMUL_2D(7, 1, 7)
	FMUL_2D(7, 6, 7)
	FADD_2D(8, 8, 7)
	FCVTN_2S(10, 5)
	FCVTN2_4S(10, 9)
	FCVTN_2S(11, 4)
	FCVTN2_4S(11, 8)
	VST1.P [V10.S4], 16(R5)
	VST1.P [V11.S4], 16(R6)
	ADD $16, R0
	ADD $4, R2
	B loop
done:
	MOVD R2, ret+32(FP)
	RET
