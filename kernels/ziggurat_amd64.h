// The ziggurat's fast path on AVX-512 (ZigguratAdd), shared by
// zigguratAVX512 (ziggurat_amd64.s) and zigguratVAES (aesctr_amd64.s),
// which makes the words with AES first.
//
// Registers: SI the words, DI d, R10 rejected, R8 layers; Z14 1.0 and
// Z15 std in every lane, Z31 the sign bit in every quadword; ZIG8 writes
// Z4–Z7, Z12, Z13, Z18, Z19, K3, AX, BX, DX, R9 and R11–R13.

// ZIGCONSTS sets Z14 to 1.0 and Z31 to the sign bit in every quadword,
// through the general register r.
#define ZIGCONSTS(r) \
	MOVQ $0x3ff0000000000000, r \
	VPBROADCASTQ r, Z14 \
	MOVQ $0x8000000000000000, r \
	VPBROADCASTQ r, Z31

// ZIGPAIR loads the layer pair of the word at byte off of SI into 128-bit
// lane lane of register z (VINSERTF32X4): its layer, the word's low byte,
// into r, times 16.
#define ZIGPAIR(off, r, lane, z) \
	MOVBLZX off(SI), r \
	SHLL $4, r \
	VINSERTF32X4 $lane, (R8)(r*1), z, z

// ZIG8 is the fast path of the 8 words at byte off of SI (a multiple of
// 64), onto the 8 values at off/2 of DI, their rejected byte at off/64 of
// R10. The pairs of words 0, 2, 4, 6 go into the lanes of Z6, of words 1,
// 3, 5, 7 into Z5: unpacking their low and high halves gives the widths
// (Z12) and the insides (Z6) in the words' order. Z7 is u, Z13 x, then
// x | sign (bit 8 of the word shifted to bit 63, the bits below it masked
// off, in one VPTERNLOGQ), then std·(x | sign); K3 the lanes kept, whose
// values are added to d by a merging add (its upper 8 lanes masked off);
// their complement is the rejected byte.
#define ZIG8(off) \
	MOVBLZX off(SI), AX \
	SHLL $4, AX \
	VMOVUPD (R8)(AX*1), X6 \
	ZIGPAIR(off+16, BX, 1, Z6) \
	ZIGPAIR(off+32, DX, 2, Z6) \
	ZIGPAIR(off+48, R9, 3, Z6) \
	MOVBLZX (off+8)(SI), R11 \
	SHLL $4, R11 \
	VMOVUPD (R8)(R11*1), X5 \
	ZIGPAIR(off+24, R12, 1, Z5) \
	ZIGPAIR(off+40, R13, 2, Z5) \
	ZIGPAIR(off+56, AX, 3, Z5) \
	VUNPCKLPD Z5, Z6, Z12 \
	VUNPCKHPD Z5, Z6, Z6 \
	VMOVDQU64 off(SI), Z4 \
	VPSRLQ $12, Z4, Z7 \
	VPORQ Z14, Z7, Z7 \
	VSUBPD Z14, Z7, Z7 \
	VCMPPD $0x11, Z6, Z7, K3 \
	VMULPD Z12, Z7, Z13 \
	VPSLLQ $55, Z4, Z18 \
	VPTERNLOGQ $0xf8, Z31, Z18, Z13 \
	VMULPD Z15, Z13, Z13 \
	VCVTPD2PS Z13, Y13 \
	VMOVUPS (off/2)(DI), Y19 \
	VADDPS Z13, Z19, K3, Z19 \
	VMOVUPS Y19, (off/2)(DI) \
	KMOVW K3, AX \
	NOTL AX \
	MOVB AX, (off/64)(R10)
