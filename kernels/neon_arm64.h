// NEON instructions that Go's arm64 assembler lacks, as WORDs. Operands are
// register numbers in ARM's order, destination first: FMUL_2D(d, n, m) is
// "fmul vd.2d, vn.2d, vm.2d", vd = vn·vm. Each opcode was checked with
// llvm-mc -triple=aarch64 -show-encoding, and the assembled files with
// llvm-objdump.

#define NEON3(op, d, n, m) WORD $((op) | (m)<<16 | (n)<<5 | (d))
#define NEON2(op, d, n) WORD $((op) | (n)<<5 | (d))

// Two float64 lanes.
#define FADD_2D(d, n, m) NEON3(0x4e60d400, d, n, m)
#define FSUB_2D(d, n, m) NEON3(0x4ee0d400, d, n, m)
#define FMUL_2D(d, n, m) NEON3(0x6e60dc00, d, n, m)
#define FDIV_2D(d, n, m) NEON3(0x6e60fc00, d, n, m)
#define FACGE_2D(d, n, m) NEON3(0x6e60ec00, d, n, m) // |n| ≥ |m|: all ones, else (NaN too) 0
#define FCVTL_2D(d, n) NEON2(0x0e617800, d, n)       // low two float32 of n, widened
#define FCVTL2_2D(d, n) NEON2(0x4e617800, d, n)      // high two
#define FCVTN_2S(d, n) NEON2(0x0e616800, d, n)       // n rounded into d's low half, high half cleared
#define FCVTN2_4S(d, n) NEON2(0x4e616800, d, n)      // n rounded into d's high half

// Two 64-bit integer lanes.
#define ADD_2D(d, n, m) NEON3(0x4ee08400, d, n, m)
#define SUB_2D(d, n, m) NEON3(0x6ee08400, d, n, m)
#define USHR_2D(d, n, sh) NEON2(0x6f000400 | (128-(sh))<<16, d, n)
#define SHL_2D(d, n, sh) NEON2(0x4f005400 | (64+(sh))<<16, d, n)
#define UMOV_D0(x, n) NEON2(0x4e083c00, x, n) // general register x = lane 0 of n
#define UMOV_D1(x, n) NEON2(0x4e183c00, x, n) // lane 1

// LD2_D0(t, x) loads the two float64 at the address in general register x
// into lane 0 of vt and of vt+1; LD2_D1 into lane 1.
#define LD2_D0(t, x) NEON2(0x0d608400, t, x)
#define LD2_D1(t, x) NEON2(0x4d608400, t, x)

// Four float32 lanes.
#define FADD_4S(d, n, m) NEON3(0x4e20d400, d, n, m)
#define FSUB_4S(d, n, m) NEON3(0x4ea0d400, d, n, m)
#define FMUL_4S(d, n, m) NEON3(0x6e20dc00, d, n, m)
#define FDIV_4S(d, n, m) NEON3(0x6e20fc00, d, n, m)
#define FMLA_4S(d, n, m) NEON3(0x4e20cc00, d, n, m)
#define FSQRT_4S(d, n) NEON2(0x6ea1f800, d, n)
#define FCMGT0_4S(d, n) NEON2(0x4ea0c800, d, n) // n > 0: all ones, else (NaN too) 0
#define FCMLT0_4S(d, n) NEON2(0x4ea0e800, d, n) // n < 0
#define FMAX_4S(d, n, m) NEON3(0x4e20f400, d, n, m)
#define FADDP_4S(d, n, m) NEON3(0x6e20d400, d, n, m) // pairwise: n0+n1, n2+n3, m0+m1, m2+m3
#define FCMEQ_4S(d, n, m) NEON3(0x4e20e400, d, n, m) // n == m: all ones, else (NaN too) 0
#define ADD_4S(d, n, m) NEON3(0x4ea08400, d, n, m)    // int32 lanes

// Bitwise, 128 bits.
#define AND_16B(d, n, m) NEON3(0x4e201c00, d, n, m)
#define BIC_16B(d, n, m) NEON3(0x4e601c00, d, n, m) // n &^ m
#define MOV_16B(d, n) NEON3(0x4ea01c00, d, n, n)   // orr vd, vn, vn
#define ORN_16B(d, n, m) NEON3(0x4ee01c00, d, n, m) // n | ^m
#define BIT_16B(d, n, m) NEON3(0x6ea01c00, d, n, m) // d = n where m's bits are set

// LOOP runs STEP on R3 elements, 16 a step (4 for LOOP4), counting in R4,
// then ONE on each of the rest: a function's body, labels and RET included.
#define LOOP(STEP, ONE) \
	LSR $4, R3, R4 \
	CBZ R4, tail \
loop: \
	STEP \
	SUBS $1, R4 \
	BNE loop \
tail: \
	ANDS $15, R3 \
	BEQ done \
loop1: \
	ONE \
	SUBS $1, R3 \
	BNE loop1 \
done: \
	RET

#define LOOP4(STEP, ONE) \
	LSR $2, R3, R4 \
	CBZ R4, tail \
loop: \
	STEP \
	SUBS $1, R4 \
	BNE loop \
tail: \
	ANDS $3, R3 \
	BEQ done \
loop1: \
	ONE \
	SUBS $1, R3 \
	BNE loop1 \
done: \
	RET
