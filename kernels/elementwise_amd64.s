//go:build !purego

#include "textflag.h"

// The elementwise passes (elementwise.go), 16 float32 lanes at a time, the
// portable code's roundings in its order.

// ZXY loads the pointers z, x, y and the count n of func(z, x, y *float32, n int).
#define ZXY \
	MOVQ z+0(FP), DI \
	MOVQ x+8(FP), SI \
	MOVQ y+16(FP), DX \
	MOVQ n+24(FP), CX \
	XORQ AX, AX

// func addAVX512(z, x, y *float32, n int)
TEXT ·addAVX512(SB), NOSPLIT, $0-32
	ZXY
addLoop:
	VMOVUPS (SI)(AX*4), Z0
	VADDPS (DX)(AX*4), Z0, Z0
	VMOVUPS Z0, (DI)(AX*4)
	ADDQ $16, AX
	CMPQ AX, CX
	JLT addLoop
	VZEROUPPER
	RET

// func mulAVX512(z, x, y *float32, n int)
TEXT ·mulAVX512(SB), NOSPLIT, $0-32
	ZXY
mulLoop:
	VMOVUPS (SI)(AX*4), Z0
	VMULPS (DX)(AX*4), Z0, Z0
	VMOVUPS Z0, (DI)(AX*4)
	ADDQ $16, AX
	CMPQ AX, CX
	JLT mulLoop
	VZEROUPPER
	RET

// func addMulAVX512(z, x, y *float32, n int)
TEXT ·addMulAVX512(SB), NOSPLIT, $0-32
	ZXY
addMulLoop:
	VMOVUPS (SI)(AX*4), Z0
	VMULPS (DX)(AX*4), Z0, Z0
	VADDPS (DI)(AX*4), Z0, Z0
	VMOVUPS Z0, (DI)(AX*4)
	ADDQ $16, AX
	CMPQ AX, CX
	JLT addMulLoop
	VZEROUPPER
	RET

// func reluGradAVX512(dx, dy, y *float32, n int): K1 marks y > 0
// (ordered: false for NaN), the zeroing move keeps dy there and +0 elsewhere.
TEXT ·reluGradAVX512(SB), NOSPLIT, $0-32
	ZXY
	VXORPS Z15, Z15, Z15
reluGradLoop:
	VMOVUPS (DX)(AX*4), Z1
	VCMPPS $0x1e, Z15, Z1, K1
	VMOVUPS.Z (SI)(AX*4), K1, Z0
	VMOVUPS Z0, (DI)(AX*4)
	ADDQ $16, AX
	CMPQ AX, CX
	JLT reluGradLoop
	VZEROUPPER
	RET

// func biasReLUAVX512(z, x *float32, n int, b float32): u = x + b; K1 marks
// !(u < 0) (NLT_UQ: true for NaN), the zeroing move keeps u there.
TEXT ·biasReLUAVX512(SB), NOSPLIT, $0-28
	MOVQ z+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS b+24(FP), Z14
	VXORPS Z15, Z15, Z15
	XORQ AX, AX
biasReLULoop:
	VADDPS (SI)(AX*4), Z14, Z0
	VCMPPS $0x05, Z15, Z0, K1
	VMOVAPS.Z Z0, K1, Z0
	VMOVUPS Z0, (DI)(AX*4)
	ADDQ $16, AX
	CMPQ AX, CX
	JLT biasReLULoop
	VZEROUPPER
	RET

// func normalizeAVX512(y, h, x, w *float32, n int, mean, rstd float64)
TEXT ·normalizeAVX512(SB), NOSPLIT, $0-56
	MOVQ y+0(FP), DI
	MOVQ h+8(FP), R8
	MOVQ x+16(FP), SI
	MOVQ w+24(FP), DX
	MOVQ n+32(FP), CX
	VBROADCASTSD mean+40(FP), Z14
	VBROADCASTSD rstd+48(FP), Z15
	XORQ AX, AX
normLoop:
	VCVTPS2PD (SI)(AX*4), Z0
	VCVTPS2PD 32(SI)(AX*4), Z1
	VSUBPD Z14, Z0, Z0
	VSUBPD Z14, Z1, Z1
	VMULPD Z15, Z0, Z0
	VMULPD Z15, Z1, Z1
	VCVTPD2PS Z0, Y0
	VCVTPD2PS Z1, Y1
	VINSERTF64X4 $1, Y1, Z0, Z0
	VMOVUPS Z0, (R8)(AX*4)
	VMULPS (DX)(AX*4), Z0, Z0
	VMOVUPS Z0, (DI)(AX*4)
	ADDQ $16, AX
	CMPQ AX, CX
	JLT normLoop
	VZEROUPPER
	RET

// func normalizeGradAVX512(dx, dy, h, w *float32, n int, rstd, sg, sgx float32)
TEXT ·normalizeGradAVX512(SB), NOSPLIT, $0-52
	MOVQ dx+0(FP), DI
	MOVQ dy+8(FP), SI
	MOVQ h+16(FP), R8
	MOVQ w+24(FP), DX
	MOVQ n+32(FP), CX
	VBROADCASTSS rstd+40(FP), Z13
	VBROADCASTSS sg+44(FP), Z14
	VBROADCASTSS sgx+48(FP), Z15
	XORQ AX, AX
gradLoop:
	VMOVUPS (SI)(AX*4), Z0
	VMULPS (DX)(AX*4), Z0, Z0
	VSUBPS Z14, Z0, Z0
	VMULPS (R8)(AX*4), Z15, Z1
	VSUBPS Z1, Z0, Z0
	VMULPS Z13, Z0, Z0
	VMOVUPS Z0, (DI)(AX*4)
	ADDQ $16, AX
	CMPQ AX, CX
	JLT gradLoop
	VZEROUPPER
	RET

// The AVX2 versions, 8 float32 lanes at a time (n a multiple of 16).

// func addAVX2(z, x, y *float32, n int)
TEXT ·addAVX2(SB), NOSPLIT, $0-32
	ZXY
add2Loop:
	VMOVUPS (SI)(AX*4), Y0
	VADDPS (DX)(AX*4), Y0, Y0
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ $8, AX
	CMPQ AX, CX
	JLT add2Loop
	VZEROUPPER
	RET

// func mulAVX2(z, x, y *float32, n int)
TEXT ·mulAVX2(SB), NOSPLIT, $0-32
	ZXY
mul2Loop:
	VMOVUPS (SI)(AX*4), Y0
	VMULPS (DX)(AX*4), Y0, Y0
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ $8, AX
	CMPQ AX, CX
	JLT mul2Loop
	VZEROUPPER
	RET

// func addMulAVX2(z, x, y *float32, n int)
TEXT ·addMulAVX2(SB), NOSPLIT, $0-32
	ZXY
addMul2Loop:
	VMOVUPS (SI)(AX*4), Y0
	VMULPS (DX)(AX*4), Y0, Y0
	VADDPS (DI)(AX*4), Y0, Y0
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ $8, AX
	CMPQ AX, CX
	JLT addMul2Loop
	VZEROUPPER
	RET

// func reluGradAVX2(dx, dy, y *float32, n int)
TEXT ·reluGradAVX2(SB), NOSPLIT, $0-32
	ZXY
	VXORPS Y15, Y15, Y15
reluGrad2Loop:
	VMOVUPS (DX)(AX*4), Y1
	VCMPPS $0x1e, Y15, Y1, Y1
	VANDPS (SI)(AX*4), Y1, Y0
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ $8, AX
	CMPQ AX, CX
	JLT reluGrad2Loop
	VZEROUPPER
	RET

// func biasReLUAVX2(z, x *float32, n int, b float32)
TEXT ·biasReLUAVX2(SB), NOSPLIT, $0-28
	MOVQ z+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS b+24(FP), Y14
	VXORPS Y15, Y15, Y15
	XORQ AX, AX
biasReLU2Loop:
	VADDPS (SI)(AX*4), Y14, Y0
	VCMPPS $0x05, Y15, Y0, Y1
	VANDPS Y0, Y1, Y0
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ $8, AX
	CMPQ AX, CX
	JLT biasReLU2Loop
	VZEROUPPER
	RET

// func normalizeAVX2(y, h, x, w *float32, n int, mean, rstd float64)
TEXT ·normalizeAVX2(SB), NOSPLIT, $0-56
	MOVQ y+0(FP), DI
	MOVQ h+8(FP), R8
	MOVQ x+16(FP), SI
	MOVQ w+24(FP), DX
	MOVQ n+32(FP), CX
	VBROADCASTSD mean+40(FP), Y14
	VBROADCASTSD rstd+48(FP), Y15
	XORQ AX, AX
norm2Loop:
	VCVTPS2PD (SI)(AX*4), Y0
	VCVTPS2PD 16(SI)(AX*4), Y1
	VSUBPD Y14, Y0, Y0
	VSUBPD Y14, Y1, Y1
	VMULPD Y15, Y0, Y0
	VMULPD Y15, Y1, Y1
	VCVTPD2PSY Y0, X0
	VCVTPD2PSY Y1, X1
	VINSERTF128 $1, X1, Y0, Y0
	VMOVUPS Y0, (R8)(AX*4)
	VMULPS (DX)(AX*4), Y0, Y0
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ $8, AX
	CMPQ AX, CX
	JLT norm2Loop
	VZEROUPPER
	RET

// func normalizeGradAVX2(dx, dy, h, w *float32, n int, rstd, sg, sgx float32)
TEXT ·normalizeGradAVX2(SB), NOSPLIT, $0-52
	MOVQ dx+0(FP), DI
	MOVQ dy+8(FP), SI
	MOVQ h+16(FP), R8
	MOVQ w+24(FP), DX
	MOVQ n+32(FP), CX
	VBROADCASTSS rstd+40(FP), Y13
	VBROADCASTSS sg+44(FP), Y14
	VBROADCASTSS sgx+48(FP), Y15
	XORQ AX, AX
grad2Loop:
	VMOVUPS (SI)(AX*4), Y0
	VMULPS (DX)(AX*4), Y0, Y0
	VSUBPS Y14, Y0, Y0
	VMULPS (R8)(AX*4), Y15, Y1
	VSUBPS Y1, Y0, Y0
	VMULPS Y13, Y0, Y0
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ $8, AX
	CMPQ AX, CX
	JLT grad2Loop
	VZEROUPPER
	RET
