//go:build !purego

#include "textflag.h"
#include "neon_arm64.h"

// The elementwise passes, four float32 lanes to a NEON register: each lane
// performs the portable code's operations with the operands in the order
// the arm64 compiler gives them, every product rounded before it is added
// (FMUL then FADD or FSUB, never FMLA: the Go code rounds its products
// explicitly), so every element has the Go code's bits, NaN payloads
// included. The last n mod 16 (or mod 4) elements run the same
// instructions on one lane, loaded with FMOVS (which clears the others).

// BINARY(OP) are the steps of z = OP(x, y): z at R0, x at R1, y at R2; OP
// gets the destination, x's and y's registers and a scratch register.
#define BINARY16(OP) \
	VLD1.P 64(R1), [V0.S4, V1.S4, V2.S4, V3.S4] \
	VLD1.P 64(R2), [V4.S4, V5.S4, V6.S4, V7.S4] \
	OP(0, 0, 4, 16) \
	OP(1, 1, 5, 17) \
	OP(2, 2, 6, 18) \
	OP(3, 3, 7, 19) \
	VST1.P [V0.S4, V1.S4, V2.S4, V3.S4], 64(R0)

#define BINARY1(OP) \
	FMOVS.P 4(R1), F0 \
	FMOVS.P 4(R2), F4 \
	OP(0, 0, 4, 16) \
	FMOVS.P F0, 4(R0)

#define ADD(d, x, y, t) FADD_4S(d, x, y)
#define MUL(d, x, y, t) FMUL_4S(d, x, y)

// RELUGRAD: d = x where y > 0, +0 elsewhere (NaN too), by masking x's bits.
#define RELUGRAD(d, x, y, t) \
	FCMGT0_4S(t, y) \
	AND_16B(d, x, t)

// ADDMUL: z += x·y.
#define ADDMUL16 \
	VLD1 (R0), [V0.S4, V1.S4, V2.S4, V3.S4] \
	VLD1.P 64(R1), [V4.S4, V5.S4, V6.S4, V7.S4] \
	VLD1.P 64(R2), [V8.S4, V9.S4, V10.S4, V11.S4] \
	FMUL_4S(4, 4, 8) \
	FMUL_4S(5, 5, 9) \
	FMUL_4S(6, 6, 10) \
	FMUL_4S(7, 7, 11) \
	FADD_4S(0, 0, 4) \
	FADD_4S(1, 1, 5) \
	FADD_4S(2, 2, 6) \
	FADD_4S(3, 3, 7) \
	VST1.P [V0.S4, V1.S4, V2.S4, V3.S4], 64(R0)

#define ADDMUL1 \
	FMOVS (R0), F0 \
	FMOVS.P 4(R1), F4 \
	FMOVS.P 4(R2), F8 \
	FMUL_4S(4, 4, 8) \
	FADD_4S(0, 0, 4) \
	FMOVS.P F0, 4(R0)

// BIASRELU: u = x + b (b in V20); z = u where not u < 0, +0 elsewhere.
#define BIASRELU(d, x, t) \
	FADD_4S(t, x, 20) \
	FCMLT0_4S(d, t) \
	BIC_16B(d, t, d)

#define BIASRELU16 \
	VLD1.P 64(R1), [V0.S4, V1.S4, V2.S4, V3.S4] \
	BIASRELU(0, 0, 16) \
	BIASRELU(1, 1, 17) \
	BIASRELU(2, 2, 18) \
	BIASRELU(3, 3, 19) \
	VST1.P [V0.S4, V1.S4, V2.S4, V3.S4], 64(R0)

#define BIASRELU1 \
	FMOVS.P 4(R1), F0 \
	BIASRELU(0, 0, 16) \
	FMOVS.P F0, 4(R0)

// func addNEON(z, x, y []float32)
TEXT ·addNEON(SB), NOSPLIT, $0-72
	MOVD z_base+0(FP), R0
	MOVD z_len+8(FP), R3
	MOVD x_base+24(FP), R1
	MOVD y_base+48(FP), R2
	LOOP(BINARY16(ADD), BINARY1(ADD))

// func mulNEON(z, x, y []float32)
TEXT ·mulNEON(SB), NOSPLIT, $0-72
	MOVD z_base+0(FP), R0
	MOVD z_len+8(FP), R3
	MOVD x_base+24(FP), R1
	MOVD y_base+48(FP), R2
	LOOP(BINARY16(MUL), BINARY1(MUL))

// func addMulNEON(z, x, y []float32)
TEXT ·addMulNEON(SB), NOSPLIT, $0-72
	MOVD z_base+0(FP), R0
	MOVD z_len+8(FP), R3
	MOVD x_base+24(FP), R1
	MOVD y_base+48(FP), R2
	LOOP(ADDMUL16, ADDMUL1)

// func reluGradNEON(dx, dy, y []float32)
TEXT ·reluGradNEON(SB), NOSPLIT, $0-72
	MOVD dx_base+0(FP), R0
	MOVD dx_len+8(FP), R3
	MOVD dy_base+24(FP), R1
	MOVD y_base+48(FP), R2
	LOOP(BINARY16(RELUGRAD), BINARY1(RELUGRAD))

// func biasReLUNEON(z, x []float32, b float32)
TEXT ·biasReLUNEON(SB), NOSPLIT, $0-52
	MOVD z_base+0(FP), R0
	MOVD z_len+8(FP), R3
	MOVD x_base+24(FP), R1
	FMOVS b+48(FP), F20
	VDUP V20.S[0], V20.S4
	LOOP(BIASRELU16, BIASRELU1)

// NORMALIZE: h = float32((float64(x) − mean)·rstd) from x in V0 (mean in
// V20, rstd in V21), into V4; y = h·w from w in V1, into V5.
#define NORMALIZE \
	FCVTL_2D(2, 0) \
	FCVTL2_2D(3, 0) \
	FSUB_2D(2, 2, 20) \
	FMUL_2D(2, 2, 21) \
	FSUB_2D(3, 3, 20) \
	FMUL_2D(3, 3, 21) \
	FCVTN_2S(4, 2) \
	FCVTN2_4S(4, 3) \
	FMUL_4S(5, 4, 1)

#define NORMALIZE4 \
	VLD1.P 16(R1), [V0.S4] \
	VLD1.P 16(R2), [V1.S4] \
	NORMALIZE \
	VST1.P [V4.S4], 16(R5) \
	VST1.P [V5.S4], 16(R0)

#define NORMALIZE1 \
	FMOVS.P 4(R1), F0 \
	FMOVS.P 4(R2), F1 \
	NORMALIZE \
	FMOVS.P F4, 4(R5) \
	FMOVS.P F5, 4(R0)

// func normalizeNEON(y, h, x, w []float32, mean, rstd float64)
TEXT ·normalizeNEON(SB), NOSPLIT, $0-112
	MOVD y_base+0(FP), R0
	MOVD y_len+8(FP), R3
	MOVD h_base+24(FP), R5
	MOVD x_base+48(FP), R1
	MOVD w_base+72(FP), R2
	FMOVD mean+96(FP), F20
	VDUP V20.D[0], V20.D2
	FMOVD rstd+104(FP), F21
	VDUP V21.D[0], V21.D2
	LOOP4(NORMALIZE4, NORMALIZE1)

// NORMALIZEGRAD: dx = rstd·((dy·w − sg) − h·sgx) from dy in V0, h in V1, w
// in V2 (sg in V20, sgx in V21, rstd in V22), into V3, using V4.
#define NORMALIZEGRAD \
	FMUL_4S(3, 0, 2) \
	FSUB_4S(3, 3, 20) \
	FMUL_4S(4, 1, 21) \
	FSUB_4S(3, 3, 4) \
	FMUL_4S(3, 3, 22)

#define NORMALIZEGRAD4 \
	VLD1.P 16(R1), [V0.S4] \
	VLD1.P 16(R5), [V1.S4] \
	VLD1.P 16(R2), [V2.S4] \
	NORMALIZEGRAD \
	VST1.P [V3.S4], 16(R0)

#define NORMALIZEGRAD1 \
	FMOVS.P 4(R1), F0 \
	FMOVS.P 4(R5), F1 \
	FMOVS.P 4(R2), F2 \
	NORMALIZEGRAD \
	FMOVS.P F3, 4(R0)

// func normalizeGradNEON(dx, dy, h, w []float32, rstd, sg, sgx float32)
TEXT ·normalizeGradNEON(SB), NOSPLIT, $0-108
	MOVD dx_base+0(FP), R0
	MOVD dx_len+8(FP), R3
	MOVD dy_base+24(FP), R1
	MOVD h_base+48(FP), R5
	MOVD w_base+72(FP), R2
	FMOVS sg+100(FP), F20
	VDUP V20.S[0], V20.S4
	FMOVS sgx+104(FP), F21
	VDUP V21.S[0], V21.S4
	FMOVS rstd+96(FP), F22
	VDUP V22.S[0], V22.S4
	LOOP4(NORMALIZEGRAD4, NORMALIZEGRAD1)
