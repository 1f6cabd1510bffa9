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
	n := len(w) / 8
	if len(w)%8 != 0 || len(d) < n || len(rejected) < (n+7)/8 {
		panic(fmt.Sprintf("kernels: ZigguratAdd: %d bytes of words, %d values, %d bytes of rejected", len(w), len(d), len(rejected)))
	}
	m := 0
	if zigFast != nil {
		m = n &^ 7
		if m > 0 {
			zigFast(&d[0], &w[0], m, std, layers, &rejected[0])
		}
	}
	zigguratAddGo(d[m:n], w[8*m:], std, layers, rejected[m/8:(n+7)/8])
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
