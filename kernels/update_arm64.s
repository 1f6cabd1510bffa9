//go:build !purego

#include "textflag.h"
#include "neon_arm64.h"

// The optimizers' updates, four float32 lanes to a NEON register, each lane
// performing the portable code's operations, every product rounded before
// it is added (FMUL then FADD or FSUB, never FMLA: the Go code rounds its
// products explicitly), so that every element has the Go code's bits. The last n mod 16 (or mod 4) elements run
// the same instructions on one lane.

// SGD: b = (g + x·wd) + b·mu, w = x − lr·b, from x in Vx, g in Vg, b in Vb
// (wd, mu, lr in V20–V22), using Vt; the new b in Vg, w in Vx.
#define SGD(x, g, b, t) \
	FMUL_4S(t, x, 20) \
	FADD_4S(g, g, t) \
	FMUL_4S(t, b, 21) \
	FADD_4S(g, g, t) \
	FMUL_4S(t, 22, g) \
	FSUB_4S(x, x, t)

#define SGD16 \
	VLD1 (R0), [V0.S4, V1.S4, V2.S4, V3.S4] \
	VLD1.P 64(R1), [V4.S4, V5.S4, V6.S4, V7.S4] \
	VLD1 (R2), [V8.S4, V9.S4, V10.S4, V11.S4] \
	SGD(0, 4, 8, 12) \
	SGD(1, 5, 9, 13) \
	SGD(2, 6, 10, 14) \
	SGD(3, 7, 11, 15) \
	VST1.P [V4.S4, V5.S4, V6.S4, V7.S4], 64(R2) \
	VST1.P [V0.S4, V1.S4, V2.S4, V3.S4], 64(R0)

#define SGD1 \
	FMOVS (R0), F0 \
	FMOVS.P 4(R1), F4 \
	FMOVS (R2), F8 \
	SGD(0, 4, 8, 12) \
	FMOVS.P F4, 4(R2) \
	FMOVS.P F0, 4(R0)

// ADAMWCONSTS broadcasts the AdamWConsts at R6 into V20–V26, in the
// order of its fields, and 1 − Lerp, rounded as the Go code rounds it, into
// V27.
#define ADAMWCONSTS \
	VLD1R.P 4(R6), [V20.S4] \
	VLD1R.P 4(R6), [V21.S4] \
	VLD1R.P 4(R6), [V22.S4] \
	VLD1R.P 4(R6), [V23.S4] \
	VLD1R.P 4(R6), [V24.S4] \
	VLD1R.P 4(R6), [V25.S4] \
	VLD1R (R6), [V26.S4] \
	FMOVS $1.0, F27 \
	VDUP V27.S[0], V27.S4 \
	FSUB_4S(27, 27, 21)

// func sgdMomentumNEON(w, g, b []float32, lr, wd, mu float32)
TEXT ·sgdMomentumNEON(SB), NOSPLIT, $0-84
	MOVD w_base+0(FP), R0
	MOVD w_len+8(FP), R3
	MOVD g_base+24(FP), R1
	MOVD b_base+48(FP), R2
	FMOVS wd+76(FP), F20
	VDUP V20.S[0], V20.S4
	FMOVS mu+80(FP), F21
	VDUP V21.S[0], V21.S4
	FMOVS lr+72(FP), F22
	VDUP V22.S[0], V22.S4
	LOOP(SGD16, SGD1)

// ADAMW(LERP) is one AdamW step on x in V0, g in V1, m in V2, v in V3, with
// AdamWConsts' fields in V20–V26 and 1 − Lerp in V27: x·Decay; m by LERP;
// v = Beta2·v + (OneMinusBeta2·g)·g; the new m and v stored at R2 and R5;
// then w = x − StepSize·(m/(√v/BC2Sqrt + Eps)) into V0. FSQRT is the compiler's float32 square root
// too: it reduces float32(math.Sqrt(float64(v))) to FSQRTS.
#define ADAMW(LERP, STOREMV) \
	FMUL_4S(0, 20, 0) \
	LERP \
	FMUL_4S(3, 22, 3) \
	FMUL_4S(5, 23, 1) \
	FMUL_4S(5, 5, 1) \
	FADD_4S(3, 3, 5) \
	STOREMV \
	FSQRT_4S(4, 3) \
	FDIV_4S(4, 4, 24) \
	FADD_4S(4, 4, 25) \
	FDIV_4S(4, 2, 4) \
	FMUL_4S(4, 26, 4) \
	FSUB_4S(0, 0, 4)

// NEAR is lerp for Lerp < 0.5: m + (g − m)·Lerp; FAR for the rest:
// g − (g − m)·(1 − Lerp).
#define NEAR \
	FSUB_4S(4, 1, 2) \
	FMUL_4S(4, 4, 21) \
	FADD_4S(2, 2, 4)

#define FAR \
	FSUB_4S(4, 1, 2) \
	FMUL_4S(4, 4, 27) \
	FSUB_4S(2, 1, 4)

#define STOREMV4 \
	VST1.P [V2.S4], 16(R2) \
	VST1.P [V3.S4], 16(R5)

#define STOREMV1 \
	FMOVS.P F2, 4(R2) \
	FMOVS.P F3, 4(R5)

#define ADAMW4(LERP) \
	VLD1 (R0), [V0.S4] \
	VLD1.P 16(R1), [V1.S4] \
	VLD1 (R2), [V2.S4] \
	VLD1 (R5), [V3.S4] \
	ADAMW(LERP, STOREMV4) \
	VST1.P [V0.S4], 16(R0)

#define ADAMW1(LERP) \
	FMOVS (R0), F0 \
	FMOVS.P 4(R1), F1 \
	FMOVS (R2), F2 \
	FMOVS (R5), F3 \
	ADAMW(LERP, STOREMV1) \
	FMOVS.P F0, 4(R0)

// func adamWNearNEON(w, g, m, v []float32, c *AdamWConsts)
TEXT ·adamWNearNEON(SB), NOSPLIT, $0-104
	MOVD w_base+0(FP), R0
	MOVD w_len+8(FP), R3
	MOVD g_base+24(FP), R1
	MOVD m_base+48(FP), R2
	MOVD v_base+72(FP), R5
	MOVD c+96(FP), R6
	ADAMWCONSTS
	LOOP4(ADAMW4(NEAR), ADAMW1(NEAR))

// func adamWFarNEON(w, g, m, v []float32, c *AdamWConsts)
TEXT ·adamWFarNEON(SB), NOSPLIT, $0-104
	MOVD w_base+0(FP), R0
	MOVD w_len+8(FP), R3
	MOVD g_base+24(FP), R1
	MOVD m_base+48(FP), R2
	MOVD v_base+72(FP), R5
	MOVD c+96(FP), R6
	ADAMWCONSTS
	LOOP4(ADAMW4(FAR), ADAMW1(FAR))
