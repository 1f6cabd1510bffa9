package kernels

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"math/bits"
)

// AESCTR is the keystream of AES-128 in counter mode: the bytes that
// crypto/cipher.NewCTR(aes.NewCipher(key), iv) XORs into its input, the
// 16-byte block iv encrypted, then iv+1, iv+2, … as a 128-bit big-endian
// number (wrapping at 2¹²⁸), read in order. It makes them on this CPU's
// AES instructions (see ctrFast): with AVX-512 and VAES 4 blocks an
// instruction, 32 blocks in flight; with AES-NI 8 blocks in flight; with
// PSCLIP_KERNEL=go, on other CPUs and with -tags purego it reads
// crypto/cipher's stream. Package estimator's DP noise draws its random
// words from it. Its zero value is unusable: call Reset first.
type AESCTR struct {
	fast   ctrFunc       // the assembly in use; nil: stream
	zig    zigAESFunc    // ZigguratAdd's kernel of keystream and fast path in one; nil: none
	rk     [176]byte     // the 11 round keys of AES-128 (FIPS 197's w[0..43], in byte order), for fast
	lo, hi uint64        // the next block's counter, for fast
	stream cipher.Stream // the portable path
	buf    [64]byte      // keystream made and not read yet: buf[off:]
	off    int
}

// ctrFunc is an assembly AESCTR: the keystream blocks of counters
// hi·2⁶⁴ + lo, +1, … (mod 2¹²⁸) written to dst, blocks a positive
// multiple of 4.
type ctrFunc func(rk *[176]byte, dst *byte, blocks int, lo, hi uint64)

// Reset starts the keystream of key at counter block iv.
func (c *AESCTR) Reset(key, iv *[16]byte) {
	c.reset(key, iv, ctrFast)
	c.zig = zigVAES
}

// reset is Reset on the assembly f (nil: crypto/cipher's stream), without
// ZigguratAdd's fused kernel.
func (c *AESCTR) reset(key, iv *[16]byte, f ctrFunc) {
	c.fast, c.zig, c.off = f, nil, len(c.buf)
	if f == nil {
		b, _ := aes.NewCipher(key[:]) // never fails for 16 bytes
		c.stream = cipher.NewCTR(b, iv[:])
		return
	}
	c.stream = nil
	c.rk = expandKey128(key)
	c.hi, c.lo = binary.BigEndian.Uint64(iv[:8]), binary.BigEndian.Uint64(iv[8:])
}

// KeyStream writes the keystream's next len(dst) bytes to dst: what is
// left of the last call's block first, then whole groups of 4 blocks
// straight into dst, and the end from one more group kept for the next
// call.
func (c *AESCTR) KeyStream(dst []byte) {
	n := copy(dst, c.buf[c.off:])
	c.off += n
	dst = dst[n:]
	if m := len(dst) &^ (len(c.buf) - 1); m > 0 {
		c.blocks(dst[:m])
		dst = dst[m:]
	}
	if len(dst) > 0 {
		c.blocks(c.buf[:])
		c.off = copy(dst, c.buf[:])
	}
}

// blocks writes the next len(b)/16 blocks of keystream to b, len(b) a
// multiple of 64.
func (c *AESCTR) blocks(b []byte) {
	if c.fast == nil {
		clear(b)
		c.stream.XORKeyStream(b, b)
		return
	}
	n := len(b) / 16
	c.fast(&c.rk, &b[0], n, c.lo, c.hi)
	var carry uint64
	c.lo, carry = bits.Add64(c.lo, uint64(n), 0)
	c.hi += carry
}

// expandKey128 returns AES-128's round keys of key (FIPS 197, 5.2): word
// i ≥ 4 is word i−4 XOR word i−1, the latter first rotated a byte left,
// put through the S-box and XORed with the round constant where i is a
// multiple of 4.
func expandKey128(key *[16]byte) (rk [176]byte) {
	// On the words as big-endian uint32s, four at a time (a round key):
	// the rotation is then a left rotation by 8 bits.
	w0 := binary.BigEndian.Uint32(key[0:])
	w1 := binary.BigEndian.Uint32(key[4:])
	w2 := binary.BigEndian.Uint32(key[8:])
	w3 := binary.BigEndian.Uint32(key[12:])
	copy(rk[:], key[:])
	rcon := byte(1)
	for i := 16; i < len(rk); i += 16 {
		t := bits.RotateLeft32(w3, 8)
		t = uint32(aesSbox[t>>24])<<24 | uint32(aesSbox[t>>16&0xff])<<16 | uint32(aesSbox[t>>8&0xff])<<8 | uint32(aesSbox[t&0xff])
		w0 ^= t ^ uint32(rcon)<<24
		w1 ^= w0
		w2 ^= w1
		w3 ^= w2
		r := (*[16]byte)(rk[i:])
		binary.BigEndian.PutUint32(r[0:], w0)
		binary.BigEndian.PutUint32(r[4:], w1)
		binary.BigEndian.PutUint32(r[8:], w2)
		binary.BigEndian.PutUint32(r[12:], w3)
		rcon = rcon<<1 ^ 0x1b*(rcon>>7) // ·x in GF(2⁸)
	}
	return rk
}

// aesSbox is AES's S-box: the inverse in GF(2⁸) (0 for 0) through the
// affine map b ⊕ rotl(b,1) ⊕ rotl(b,2) ⊕ rotl(b,3) ⊕ rotl(b,4) ⊕ 0x63,
// computed by walking the multiplicative group with p·3 and q/3 = p⁻¹.
var aesSbox = func() (s [256]byte) {
	s[0] = 0x63
	p, q := byte(1), byte(1)
	for {
		p ^= p<<1 ^ 0x1b*(p>>7) // p·3
		q ^= q << 1             // q/3: q·(3⁻¹ = 0xf6) by shifts
		q ^= q << 2
		q ^= q << 4
		q ^= 0x09 * (q >> 7)
		s[p] = q ^ bits.RotateLeft8(q, 1) ^ bits.RotateLeft8(q, 2) ^ bits.RotateLeft8(q, 3) ^ bits.RotateLeft8(q, 4) ^ 0x63
		if p == 1 {
			return s
		}
	}
}()
