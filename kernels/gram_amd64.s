//go:build !purego

#include "textflag.h"

// The tile kernels' accumulators start at zero.
#define ZERO_Z0_Z15 \
	VPXORD Z0, Z0, Z0 \
	VPXORD Z1, Z1, Z1 \
	VPXORD Z2, Z2, Z2 \
	VPXORD Z3, Z3, Z3 \
	VPXORD Z4, Z4, Z4 \
	VPXORD Z5, Z5, Z5 \
	VPXORD Z6, Z6, Z6 \
	VPXORD Z7, Z7, Z7 \
	VPXORD Z8, Z8, Z8 \
	VPXORD Z9, Z9, Z9 \
	VPXORD Z10, Z10, Z10 \
	VPXORD Z11, Z11, Z11 \
	VPXORD Z12, Z12, Z12 \
	VPXORD Z13, Z13, Z13 \
	VPXORD Z14, Z14, Z14 \
	VPXORD Z15, Z15, Z15

#define ZERO_Y0_Y7 \
	VXORPS Y0, Y0, Y0 \
	VXORPS Y1, Y1, Y1 \
	VXORPS Y2, Y2, Y2 \
	VXORPS Y3, Y3, Y3 \
	VXORPS Y4, Y4, Y4 \
	VXORPS Y5, Y5, Y5 \
	VXORPS Y6, Y6, Y6 \
	VXORPS Y7, Y7, Y7

// func gramColsAVX512(k int, a, b *float32, ld int, c *float32, acc bool)
//
// c[r·16+j] (+)= Σ_{p<k} a[p·ld+r]·b[p·ld+j] for r, j < 16: one 16×16 tile
// of a Gram matrix from two column blocks of the transposed operand, rows
// in Z0–Z15, each step one load of b and sixteen broadcast FMAs of a.
TEXT ·gramColsAVX512(SB), NOSPLIT, $0-41
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), AX
	MOVQ b+16(FP), DX
	MOVQ ld+24(FP), SI
	MOVQ c+32(FP), DI
	SHLQ $2, SI
	SUBQ AX, DX // b - a: b is read at the same offset from a's row
	ZERO_Z0_Z15
	TESTQ CX, CX
	JZ gramcols_store
gramcols_loop:
	VMOVUPS (AX)(DX*1), Z16
	VFMADD231PS.BCST 0(AX), Z16, Z0
	VFMADD231PS.BCST 4(AX), Z16, Z1
	VFMADD231PS.BCST 8(AX), Z16, Z2
	VFMADD231PS.BCST 12(AX), Z16, Z3
	VFMADD231PS.BCST 16(AX), Z16, Z4
	VFMADD231PS.BCST 20(AX), Z16, Z5
	VFMADD231PS.BCST 24(AX), Z16, Z6
	VFMADD231PS.BCST 28(AX), Z16, Z7
	VFMADD231PS.BCST 32(AX), Z16, Z8
	VFMADD231PS.BCST 36(AX), Z16, Z9
	VFMADD231PS.BCST 40(AX), Z16, Z10
	VFMADD231PS.BCST 44(AX), Z16, Z11
	VFMADD231PS.BCST 48(AX), Z16, Z12
	VFMADD231PS.BCST 52(AX), Z16, Z13
	VFMADD231PS.BCST 56(AX), Z16, Z14
	VFMADD231PS.BCST 60(AX), Z16, Z15
	ADDQ SI, AX
	DECQ CX
	JNZ gramcols_loop
gramcols_store:
	MOVBLZX acc+40(FP), BX
	TESTQ BX, BX
	JZ gramcols_write
	VADDPS 0(DI), Z0, Z0
	VADDPS 64(DI), Z1, Z1
	VADDPS 128(DI), Z2, Z2
	VADDPS 192(DI), Z3, Z3
	VADDPS 256(DI), Z4, Z4
	VADDPS 320(DI), Z5, Z5
	VADDPS 384(DI), Z6, Z6
	VADDPS 448(DI), Z7, Z7
	VADDPS 512(DI), Z8, Z8
	VADDPS 576(DI), Z9, Z9
	VADDPS 640(DI), Z10, Z10
	VADDPS 704(DI), Z11, Z11
	VADDPS 768(DI), Z12, Z12
	VADDPS 832(DI), Z13, Z13
	VADDPS 896(DI), Z14, Z14
	VADDPS 960(DI), Z15, Z15
gramcols_write:
	VMOVUPS Z0, 0(DI)
	VMOVUPS Z1, 64(DI)
	VMOVUPS Z2, 128(DI)
	VMOVUPS Z3, 192(DI)
	VMOVUPS Z4, 256(DI)
	VMOVUPS Z5, 320(DI)
	VMOVUPS Z6, 384(DI)
	VMOVUPS Z7, 448(DI)
	VMOVUPS Z8, 512(DI)
	VMOVUPS Z9, 576(DI)
	VMOVUPS Z10, 640(DI)
	VMOVUPS Z11, 704(DI)
	VMOVUPS Z12, 768(DI)
	VMOVUPS Z13, 832(DI)
	VMOVUPS Z14, 896(DI)
	VMOVUPS Z15, 960(DI)
	VZEROUPPER
	RET

// func gramRowsAVX512(k int, a, b *float32, ld, tail int, c *float32, n int, acc bool)
//
// For each of n tiles t, rows 4t..4t+3 of b:
// c[16t+4j+i] (+)= Σ_{p<16k+tail} a[i·ld+p]·b[(4t+j)·ld+p] for i, j < 4,
// a 4×4 tile (stored transposed) of a Gram matrix from rows of the
// untransposed operand, as sixteen dot products of rows a_i and b_j:
// Z_{4i+j} sums 16 lanes of products, 16 values of each row a step, the
// last tail values under a mask. A tree of lane shuffles then reduces the
// sixteen accumulators to one vector, lane 4j+i holding Z_{4i+j}'s sum.
TEXT ·gramRowsAVX512(SB), NOSPLIT, $0-57
	MOVQ ld+24(FP), SI
	SHLQ $2, SI
	LEAQ (SI)(SI*2), R8 // 3 rows
	LEAQ (SI)(SI*1), R11
	ADDQ R11, R11 // 4 rows
	MOVQ b+16(FP), R10
	MOVQ c+40(FP), DI
	MOVQ n+48(FP), R9
	MOVQ tail+32(FP), CX
	MOVL $1, DX
	SHLL CX, DX
	DECL DX
	KMOVW DX, K1
	MOVBLZX acc+56(FP), R12
	TESTQ R9, R9
	JZ gramrows_done
gramrows_tile:
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), AX
	MOVQ R10, BX
	ZERO_Z0_Z15
	TESTQ CX, CX
	JZ gramrows_tail
gramrows_loop:
	VMOVUPS (AX), Z16
	VMOVUPS (AX)(SI*1), Z17
	VMOVUPS (AX)(SI*2), Z18
	VMOVUPS (AX)(R8*1), Z19
	VMOVUPS (BX), Z20
	VMOVUPS (BX)(SI*1), Z21
	VMOVUPS (BX)(SI*2), Z22
	VMOVUPS (BX)(R8*1), Z23
	VFMADD231PS Z20, Z16, Z0
	VFMADD231PS Z21, Z16, Z1
	VFMADD231PS Z22, Z16, Z2
	VFMADD231PS Z23, Z16, Z3
	VFMADD231PS Z20, Z17, Z4
	VFMADD231PS Z21, Z17, Z5
	VFMADD231PS Z22, Z17, Z6
	VFMADD231PS Z23, Z17, Z7
	VFMADD231PS Z20, Z18, Z8
	VFMADD231PS Z21, Z18, Z9
	VFMADD231PS Z22, Z18, Z10
	VFMADD231PS Z23, Z18, Z11
	VFMADD231PS Z20, Z19, Z12
	VFMADD231PS Z21, Z19, Z13
	VFMADD231PS Z22, Z19, Z14
	VFMADD231PS Z23, Z19, Z15
	ADDQ $64, AX
	ADDQ $64, BX
	DECQ CX
	JNZ gramrows_loop
gramrows_tail:
	MOVQ tail+32(FP), CX
	TESTQ CX, CX
	JZ gramrows_reduce
	VMOVUPS.Z (AX), K1, Z16
	VMOVUPS.Z (AX)(SI*1), K1, Z17
	VMOVUPS.Z (AX)(SI*2), K1, Z18
	VMOVUPS.Z (AX)(R8*1), K1, Z19
	VMOVUPS.Z (BX), K1, Z20
	VMOVUPS.Z (BX)(SI*1), K1, Z21
	VMOVUPS.Z (BX)(SI*2), K1, Z22
	VMOVUPS.Z (BX)(R8*1), K1, Z23
	VFMADD231PS Z20, Z16, Z0
	VFMADD231PS Z21, Z16, Z1
	VFMADD231PS Z22, Z16, Z2
	VFMADD231PS Z23, Z16, Z3
	VFMADD231PS Z20, Z17, Z4
	VFMADD231PS Z21, Z17, Z5
	VFMADD231PS Z22, Z17, Z6
	VFMADD231PS Z23, Z17, Z7
	VFMADD231PS Z20, Z18, Z8
	VFMADD231PS Z21, Z18, Z9
	VFMADD231PS Z22, Z18, Z10
	VFMADD231PS Z23, Z18, Z11
	VFMADD231PS Z20, Z19, Z12
	VFMADD231PS Z21, Z19, Z13
	VFMADD231PS Z22, Z19, Z14
	VFMADD231PS Z23, Z19, Z15
gramrows_reduce:
	// Halves: Z_k = (Z_2k, Z_2k+1), eight partial sums of each.
	VSHUFF32X4 $0x44, Z1, Z0, Z24
	VSHUFF32X4 $0xEE, Z1, Z0, Z25
	VADDPS Z25, Z24, Z0
	VSHUFF32X4 $0x44, Z3, Z2, Z24
	VSHUFF32X4 $0xEE, Z3, Z2, Z25
	VADDPS Z25, Z24, Z1
	VSHUFF32X4 $0x44, Z5, Z4, Z24
	VSHUFF32X4 $0xEE, Z5, Z4, Z25
	VADDPS Z25, Z24, Z2
	VSHUFF32X4 $0x44, Z7, Z6, Z24
	VSHUFF32X4 $0xEE, Z7, Z6, Z25
	VADDPS Z25, Z24, Z3
	VSHUFF32X4 $0x44, Z9, Z8, Z24
	VSHUFF32X4 $0xEE, Z9, Z8, Z25
	VADDPS Z25, Z24, Z4
	VSHUFF32X4 $0x44, Z11, Z10, Z24
	VSHUFF32X4 $0xEE, Z11, Z10, Z25
	VADDPS Z25, Z24, Z5
	VSHUFF32X4 $0x44, Z13, Z12, Z24
	VSHUFF32X4 $0xEE, Z13, Z12, Z25
	VADDPS Z25, Z24, Z6
	VSHUFF32X4 $0x44, Z15, Z14, Z24
	VSHUFF32X4 $0xEE, Z15, Z14, Z25
	VADDPS Z25, Z24, Z7
	// Quarters: 128-bit lane L of Z_m holds four partial sums of Z_4m+L.
	VSHUFF32X4 $0x88, Z1, Z0, Z24
	VSHUFF32X4 $0xDD, Z1, Z0, Z25
	VADDPS Z25, Z24, Z0
	VSHUFF32X4 $0x88, Z3, Z2, Z24
	VSHUFF32X4 $0xDD, Z3, Z2, Z25
	VADDPS Z25, Z24, Z1
	VSHUFF32X4 $0x88, Z5, Z4, Z24
	VSHUFF32X4 $0xDD, Z5, Z4, Z25
	VADDPS Z25, Z24, Z2
	VSHUFF32X4 $0x88, Z7, Z6, Z24
	VSHUFF32X4 $0xDD, Z7, Z6, Z25
	VADDPS Z25, Z24, Z3
	// Within the lanes: pairs, then the final sums.
	VUNPCKLPS Z1, Z0, Z24
	VUNPCKHPS Z1, Z0, Z25
	VADDPS Z25, Z24, Z0
	VUNPCKLPS Z3, Z2, Z24
	VUNPCKHPS Z3, Z2, Z25
	VADDPS Z25, Z24, Z1
	VSHUFPS $0x44, Z1, Z0, Z24
	VSHUFPS $0xEE, Z1, Z0, Z25
	VADDPS Z25, Z24, Z0
	TESTQ R12, R12
	JZ gramrows_write
	VADDPS (DI), Z0, Z0
gramrows_write:
	VMOVUPS Z0, (DI)
	ADDQ $64, DI
	ADDQ R11, R10
	DECQ R9
	JNZ gramrows_tile
gramrows_done:
	VZEROUPPER
	RET

// func gramColsAVX2(k int, a, b *float32, ld int, c *float32, acc bool)
//
// gramColsAVX512 on AVX2: the tile in four passes of four rows, each row
// two YMM accumulators (Y0–Y7), each step two loads of b and four
// broadcasts of a for sixteen FMAs. Every entry adds its products in the
// order of p, as gramColsAVX512 does, so the two agree to the bit.
TEXT ·gramColsAVX2(SB), NOSPLIT, $0-41
	MOVQ ld+24(FP), SI
	SHLQ $2, SI
	MOVQ c+32(FP), DI
	MOVBLZX acc+40(FP), BX
	MOVQ a+8(FP), R8
	MOVL $4, R9 // passes
gramcols2_pass:
	MOVQ k+0(FP), CX
	MOVQ R8, AX
	MOVQ b+16(FP), DX
	SUBQ AX, DX // b - a: b is read at the same offset from a's row
	ZERO_Y0_Y7
	TESTQ CX, CX
	JZ gramcols2_store
gramcols2_loop:
	VMOVUPS (AX)(DX*1), Y8
	VMOVUPS 32(AX)(DX*1), Y9
	VBROADCASTSS 0(AX), Y10
	VBROADCASTSS 4(AX), Y11
	VBROADCASTSS 8(AX), Y12
	VBROADCASTSS 12(AX), Y13
	VFMADD231PS Y8, Y10, Y0
	VFMADD231PS Y9, Y10, Y1
	VFMADD231PS Y8, Y11, Y2
	VFMADD231PS Y9, Y11, Y3
	VFMADD231PS Y8, Y12, Y4
	VFMADD231PS Y9, Y12, Y5
	VFMADD231PS Y8, Y13, Y6
	VFMADD231PS Y9, Y13, Y7
	ADDQ SI, AX
	DECQ CX
	JNZ gramcols2_loop
gramcols2_store:
	TESTQ BX, BX
	JZ gramcols2_write
	VADDPS 0(DI), Y0, Y0
	VADDPS 32(DI), Y1, Y1
	VADDPS 64(DI), Y2, Y2
	VADDPS 96(DI), Y3, Y3
	VADDPS 128(DI), Y4, Y4
	VADDPS 160(DI), Y5, Y5
	VADDPS 192(DI), Y6, Y6
	VADDPS 224(DI), Y7, Y7
gramcols2_write:
	VMOVUPS Y0, 0(DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VMOVUPS Y4, 128(DI)
	VMOVUPS Y5, 160(DI)
	VMOVUPS Y6, 192(DI)
	VMOVUPS Y7, 224(DI)
	ADDQ $16, R8
	ADDQ $256, DI
	DECL R9
	JNZ gramcols2_pass
	VZEROUPPER
	RET

// gramLanes holds the lane numbers 0…7, for gramSweepAVX2's tail mask.
DATA gramLanes<>+0(SB)/4, $0
DATA gramLanes<>+4(SB)/4, $1
DATA gramLanes<>+8(SB)/4, $2
DATA gramLanes<>+12(SB)/4, $3
DATA gramLanes<>+16(SB)/4, $4
DATA gramLanes<>+20(SB)/4, $5
DATA gramLanes<>+24(SB)/4, $6
DATA gramLanes<>+28(SB)/4, $7
GLOBL gramLanes<>(SB), RODATA|NOPTR, $32

// func gramSweepAVX2(k int, a, b *float32, ld, tail int, c *float32, cstep, n int, cdiag *float32, acc bool, pf, pfn int)
//
// One column of 4×4 tiles of a Gram matrix from rows of the untransposed
// operand, from the top down to the diagonal: for each of n tiles t, rows
// 4t..4t+3 of a against rows 0..3 of b (tile (t, j) when b holds rows
// 4j..4j+3), then b against itself (the diagonal tile):
// c[4j+i] (+)= Σ_{p<8k+tail} a[(4t+i)·ld+p]·b[j·ld+p] for i, j < 4. Tile t
// goes to c + Σ_{s<t} (cstep − 64s) bytes (GramDot's row-major order of
// tiles, read down a column), the diagonal tile to cdiag; acc adds into
// them.
//
// Each sum is accumulated 8 lanes wide, lane l taking p ≡ l (mod 8) in
// order by FMA (the last tail values under a VMASKMOVPS lane mask, which
// neither reads nor faults past the row), then reduced as
// ((l0+l1)+(l2+l3)) + ((l4+l5)+(l6+l7)) by three rounds of VHADDPS and one
// exchange of 128-bit halves. A tile is formed in two halves, rows 2h and
// 2h+1 of a against the four of b: Y_{2j+i} sums a_{2h+i}·b_j, eight
// accumulators from six loads a step. b's rows stay in L1 for the whole
// column, so a sweep streams two rows at a time from L2, as a row of tiles
// with a fixed would stream b's. The half's reduced vector holds e(2h+i, j)
// in lane 2j+i; the two halves' are interleaved by pairs into the tile's
// order, e(i, j) at 4j+i.
//
// While the column is formed, the pfn bytes from pf bytes after b (the next
// column's rows, read by the next call) are fetched into L1 with
// PREFETCHT0, two cache lines every two steps until all are asked for
// (pfn = 0: none). Where a column's rows come from L3 or memory, the
// hardware's stream prefetchers, woken only by misses on rows of 8
// (k = 128) to 32 lines, left the first tiles of every column waiting on
// them.
TEXT ·gramSweepAVX2(SB), NOSPLIT, $0-96
	MOVQ ld+24(FP), SI
	SHLQ $2, SI
	LEAQ (SI)(SI*2), R8 // 3 rows
	MOVQ tail+32(FP), CX
	VMOVQ CX, X15
	VPBROADCASTD X15, Y15
	VMOVDQU gramLanes<>(SB), Y14
	VPCMPGTD Y14, Y15, Y15 // lane l: tail > l
	MOVQ a+8(FP), R10
	MOVQ c+40(FP), R11
	MOVQ cstep+48(FP), R13
	MOVQ n+56(FP), R9
	INCQ R9 // tiles, the diagonal one last
	MOVBLZX acc+72(FP), R12
	MOVQ b+16(FP), DI
	MOVQ pf+80(FP), DX
	ADDQ DI, DX // the next line to fetch
	MOVQ pfn+88(FP), R15
	ADDQ DX, R15 // the end of what to fetch
gsweep_tile:
	CMPQ R9, $1
	JNE gsweep_tile1
	MOVQ DI, R10 // the diagonal tile: b against itself
	MOVQ cdiag+64(FP), R11
gsweep_tile1:
	MOVL $2, R14 // halves: rows 0, 1 of a, then rows 2, 3
gsweep_half:
	MOVQ R10, AX
	MOVQ DI, BX
	ZERO_Y0_Y7
	MOVQ k+0(FP), CX
	SHRQ $1, CX
	JZ gsweep_odd
	CMPQ DX, R15
	JEQ gsweep_loop
gsweep_looppf:
	PREFETCHT0 (DX)
	PREFETCHT0 64(DX)
	ADDQ $128, DX
	CMPQ DX, R15
	CMOVQCC R15, DX
	VMOVUPS 0(AX), Y8
	VMOVUPS 0(AX)(SI*1), Y9
	VMOVUPS 0(BX), Y10
	VMOVUPS 0(BX)(SI*1), Y11
	VMOVUPS 0(BX)(SI*2), Y12
	VMOVUPS 0(BX)(R8*1), Y13
	VFMADD231PS Y10, Y8, Y0
	VFMADD231PS Y10, Y9, Y1
	VFMADD231PS Y11, Y8, Y2
	VFMADD231PS Y11, Y9, Y3
	VFMADD231PS Y12, Y8, Y4
	VFMADD231PS Y12, Y9, Y5
	VFMADD231PS Y13, Y8, Y6
	VFMADD231PS Y13, Y9, Y7
	VMOVUPS 32(AX), Y8
	VMOVUPS 32(AX)(SI*1), Y9
	VMOVUPS 32(BX), Y10
	VMOVUPS 32(BX)(SI*1), Y11
	VMOVUPS 32(BX)(SI*2), Y12
	VMOVUPS 32(BX)(R8*1), Y13
	VFMADD231PS Y10, Y8, Y0
	VFMADD231PS Y10, Y9, Y1
	VFMADD231PS Y11, Y8, Y2
	VFMADD231PS Y11, Y9, Y3
	VFMADD231PS Y12, Y8, Y4
	VFMADD231PS Y12, Y9, Y5
	VFMADD231PS Y13, Y8, Y6
	VFMADD231PS Y13, Y9, Y7
	ADDQ $64, AX
	ADDQ $64, BX
	DECQ CX
	JNZ gsweep_looppf
	JMP gsweep_odd
gsweep_loop:
	VMOVUPS 0(AX), Y8
	VMOVUPS 0(AX)(SI*1), Y9
	VMOVUPS 0(BX), Y10
	VMOVUPS 0(BX)(SI*1), Y11
	VMOVUPS 0(BX)(SI*2), Y12
	VMOVUPS 0(BX)(R8*1), Y13
	VFMADD231PS Y10, Y8, Y0
	VFMADD231PS Y10, Y9, Y1
	VFMADD231PS Y11, Y8, Y2
	VFMADD231PS Y11, Y9, Y3
	VFMADD231PS Y12, Y8, Y4
	VFMADD231PS Y12, Y9, Y5
	VFMADD231PS Y13, Y8, Y6
	VFMADD231PS Y13, Y9, Y7
	VMOVUPS 32(AX), Y8
	VMOVUPS 32(AX)(SI*1), Y9
	VMOVUPS 32(BX), Y10
	VMOVUPS 32(BX)(SI*1), Y11
	VMOVUPS 32(BX)(SI*2), Y12
	VMOVUPS 32(BX)(R8*1), Y13
	VFMADD231PS Y10, Y8, Y0
	VFMADD231PS Y10, Y9, Y1
	VFMADD231PS Y11, Y8, Y2
	VFMADD231PS Y11, Y9, Y3
	VFMADD231PS Y12, Y8, Y4
	VFMADD231PS Y12, Y9, Y5
	VFMADD231PS Y13, Y8, Y6
	VFMADD231PS Y13, Y9, Y7
	ADDQ $64, AX
	ADDQ $64, BX
	DECQ CX
	JNZ gsweep_loop
gsweep_odd:
	MOVQ k+0(FP), CX
	TESTQ $1, CX
	JZ gsweep_tail
	VMOVUPS 0(AX), Y8
	VMOVUPS 0(AX)(SI*1), Y9
	VMOVUPS 0(BX), Y10
	VMOVUPS 0(BX)(SI*1), Y11
	VMOVUPS 0(BX)(SI*2), Y12
	VMOVUPS 0(BX)(R8*1), Y13
	VFMADD231PS Y10, Y8, Y0
	VFMADD231PS Y10, Y9, Y1
	VFMADD231PS Y11, Y8, Y2
	VFMADD231PS Y11, Y9, Y3
	VFMADD231PS Y12, Y8, Y4
	VFMADD231PS Y12, Y9, Y5
	VFMADD231PS Y13, Y8, Y6
	VFMADD231PS Y13, Y9, Y7
	ADDQ $32, AX
	ADDQ $32, BX
gsweep_tail:
	MOVQ tail+32(FP), CX
	TESTQ CX, CX
	JZ gsweep_reduce
	VMASKMOVPS (AX), Y15, Y8
	VMASKMOVPS (AX)(SI*1), Y15, Y9
	VMASKMOVPS (BX), Y15, Y10
	VMASKMOVPS (BX)(SI*1), Y15, Y11
	VMASKMOVPS (BX)(SI*2), Y15, Y12
	VMASKMOVPS (BX)(R8*1), Y15, Y13
	VFMADD231PS Y10, Y8, Y0
	VFMADD231PS Y10, Y9, Y1
	VFMADD231PS Y11, Y8, Y2
	VFMADD231PS Y11, Y9, Y3
	VFMADD231PS Y12, Y8, Y4
	VFMADD231PS Y12, Y9, Y5
	VFMADD231PS Y13, Y8, Y6
	VFMADD231PS Y13, Y9, Y7
gsweep_reduce:
	// 128-bit half H of Y8 holds half H's sums of Y0–Y3, of Y9 those of
	// Y4–Y7; then lane m of Y0 is Y_m's sum.
	VHADDPS Y1, Y0, Y0
	VHADDPS Y3, Y2, Y2
	VHADDPS Y2, Y0, Y8
	VHADDPS Y5, Y4, Y4
	VHADDPS Y7, Y6, Y6
	VHADDPS Y6, Y4, Y9
	VPERM2F128 $0x20, Y9, Y8, Y0
	VPERM2F128 $0x31, Y9, Y8, Y1
	VADDPS Y1, Y0, Y0
	LEAQ (R10)(SI*2), R10 // the half's rows of a
	DECL R14
	JZ gsweep_store
	VMOVAPS Y0, Y14 // the first half's sums
	JMP gsweep_half
gsweep_store:
	// Y14 = e(0,0) e(1,0) e(0,1) e(1,1) | e(0,2) e(1,2) e(0,3) e(1,3),
	// Y0 the same for rows 2, 3: pairs interleaved, then 128-bit halves.
	VUNPCKLPD Y0, Y14, Y1 // e(·,0) | e(·,2)
	VUNPCKHPD Y0, Y14, Y2 // e(·,1) | e(·,3)
	VPERM2F128 $0x20, Y2, Y1, Y0
	VPERM2F128 $0x31, Y2, Y1, Y1
	TESTQ R12, R12
	JZ gsweep_write
	VADDPS (R11), Y0, Y0
	VADDPS 32(R11), Y1, Y1
gsweep_write:
	VMOVUPS Y0, (R11)
	VMOVUPS Y1, 32(R11)
	ADDQ R13, R11
	SUBQ $64, R13
	DECQ R9
	JNZ gsweep_tile
	VZEROUPPER
	RET
