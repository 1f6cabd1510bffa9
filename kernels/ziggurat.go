package kernels

import (
	"encoding/binary"
	"fmt"
	"math"
)

// ZigguratAdd is the fast path of a 256-layer ziggurat for normal draws
// (package estimator's DP noise), over 64-bit random words w[j], the
// little-endian 8 bytes w[8j:8j+8] (len(w) a multiple of 8). Word w[j]
// picks the layer i = w[j] & 255, the sign (bit 8) and
// u = (w[j] >> 12)·2⁻⁵², uniform on [0, 1) and exact in float64. Layer i
// is layers[i] = {its width, the share of it inside}: where
// u < layers[i][1], the draw is z = ±u·layers[i][0], and ZigguratAdd adds
// std·z, rounded to float32, to d[j]; elsewhere it leaves d[j] alone and
// sets bit j%8 of rejected[j/8], for the caller's slow path. Every byte of
// rejected[:⌈len(w)/8⌉] is written. The results are the same bits on
// every kernel: each product is rounded once in float64, then to float32,
// then added in float32. It panics if d or rejected is too short.
func ZigguratAdd(d []float32, w []byte, std float64, layers *[256][2]float64, rejected []uint8) {
	n := zigCheck("ZigguratAdd", d, w, rejected)
	m := 0
	if zigFast != nil {
		m = n &^ 7
		if m > 0 {
			zigFast(&d[0], &w[0], m, std, layers, &rejected[0])
		}
	}
	zigguratAddGo(d[m:n], w[8*m:], std, layers, rejected[m/8:(n+7)/8])
}

// ZigguratAdd is c.KeyStream(w), then ZigguratAdd(d, w, std, layers,
// rejected): the same keystream in w, the same bits in d and rejected.
// With VAES under the avx512 kernel it makes the keystream and runs the
// fast path in one loop, 32 words a turn, so that AES's rounds and the
// fast path's table look-ups and products, which mostly take different
// execution ports, run side by side; elsewhere, and where the stream has
// bytes of an earlier block left over or a counter's low 64 bits would
// wrap within the call, it makes the two calls.
func (c *AESCTR) ZigguratAdd(d []float32, w []byte, std float64, layers *[256][2]float64, rejected []uint8) {
	n := zigCheck("AESCTR.ZigguratAdd", d, w, rejected)
	m := n &^ 7 // whole groups of 8 words, 4 blocks
	if c.zig == nil || c.off != len(c.buf) || m == 0 || c.lo > math.MaxUint64-uint64(m/2)-16 {
		c.KeyStream(w)
		ZigguratAdd(d, w, std, layers, rejected)
		return
	}
	c.zig(&c.rk, &w[0], m, c.lo, c.hi, &d[0], std, layers, &rejected[0])
	c.lo += uint64(m / 2)
	c.KeyStream(w[8*m:])
	zigguratAddGo(d[m:n], w[8*m:], std, layers, rejected[m/8:(n+7)/8])
}

// zigCheck returns the number of words in w, and panics, naming fn, if w
// is not whole words or d or rejected is too short for them.
func zigCheck(fn string, d []float32, w []byte, rejected []uint8) int {
	n := len(w) / 8
	if len(w)%8 != 0 || len(d) < n || len(rejected) < (n+7)/8 {
		panic(fmt.Sprintf("kernels: %s: %d bytes of words, %d values, %d bytes of rejected", fn, len(w), len(d), len(rejected)))
	}
	return n
}

// zigguratAddGo is ZigguratAdd's portable code.
func zigguratAddGo(d []float32, w []byte, std float64, layers *[256][2]float64, rejected []uint8) {
	clear(rejected)
	for j := range len(w) / 8 {
		wj := binary.LittleEndian.Uint64(w[8*j:])
		i := wj & 255
		u := math.Float64frombits(0x3ff0000000000000|wj>>12) - 1
		if !(u < layers[i][1]) {
			rejected[j/8] |= 1 << (j % 8)
			continue
		}
		x := u * layers[i][0]
		z := math.Float64frombits(math.Float64bits(x) | (wj&256)<<55)
		d[j] += float32(std * z)
	}
}

// zigFunc is an assembly ZigguratAdd on n words, n a multiple of 8.
type zigFunc func(d *float32, w *byte, n int, std float64, layers *[256][2]float64, rejected *uint8)

// zigAESFunc is an assembly AESCTR.ZigguratAdd on n words, n a multiple
// of 8, from the counter hi·2⁶⁴ + lo, whose low 64 bits do not wrap
// within lo + n/2 + 16.
type zigAESFunc func(rk *[176]byte, w *byte, n int, lo, hi uint64, d *float32, std float64, layers *[256][2]float64, rejected *uint8)
