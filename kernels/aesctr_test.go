package kernels

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"testing"

	"github.com/psclip/psclip/bench"
)

// ctrImpls is AESCTR's implementations this CPU runs: each assembly,
// crypto/cipher's stream ("go") and the one in use.
func ctrImpls() map[string]ctrFunc {
	fs := map[string]ctrFunc{"go": nil, "in use": ctrFast}
	for name, f := range ctrAvailable() {
		fs[name] = f
	}
	return fs
}

// checkKeyStream reads the keystream of key and iv in calls of the
// lengths given, from every implementation, against crypto/cipher's.
func checkKeyStream(t *testing.T, key, iv *[16]byte, lengths []int) {
	t.Helper()
	total := 0
	for _, n := range lengths {
		total += n
	}
	block, _ := aes.NewCipher(key[:])
	want := make([]byte, total)
	cipher.NewCTR(block, iv[:]).XORKeyStream(want, want)
	for name, f := range ctrImpls() {
		var c AESCTR
		c.reset(key, iv, f)
		got := make([]byte, total)
		for i := range got {
			got[i] = 0xa5 // every byte must be written
		}
		at := 0
		for _, n := range lengths {
			c.KeyStream(got[at : at+n])
			at += n
		}
		if !bytes.Equal(got, want) {
			i := 0
			for got[i] == want[i] {
				i++
			}
			t.Fatalf("%s, key %x, iv %x, calls %v: byte %d is %#x, want %#x", name, *key, *iv, lengths, i, got[i], want[i])
		}
	}
}

// AESCTR's keystream is crypto/cipher's on every implementation, for random
// keys and counters, counters whose low half or whole wraps within the
// stream, and reads of every length from 0 to several KiB, one call or
// many.
func TestAESCTR(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var key, iv [16]byte
	random := func(b *[16]byte) {
		binary.LittleEndian.PutUint64(b[:], r.Uint64())
		binary.LittleEndian.PutUint64(b[8:], r.Uint64())
	}
	// Counters about to carry from lo into hi and to wrap at 2¹²⁸, by
	// fewer blocks than a ZMM register holds, a main loop's turn holds,
	// and more.
	var ivs [][16]byte
	for _, before := range []uint64{1, 3, 5, 31, 33, 200} {
		var a, b [16]byte
		random(&a)
		binary.BigEndian.PutUint64(a[8:], -before)
		for i := range b {
			b[i] = 0xff
		}
		binary.BigEndian.PutUint64(b[8:], -before)
		ivs = append(ivs, a, b)
	}
	for _, n := range []int{0, 1, 8, 15, 16, 17, 63, 64, 65, 100, 511, 512, 513, 1000, 4096, 5000} {
		random(&key)
		random(&iv)
		checkKeyStream(t, &key, &iv, []int{n})
		for _, carry := range ivs {
			checkKeyStream(t, &key, &carry, []int{n, 3})
		}
	}
	// Calls of many lengths in a row, on every alignment to a block.
	for range 20 {
		random(&key)
		iv := ivs[r.IntN(len(ivs))]
		lengths := make([]int, 1+r.IntN(30))
		for i := range lengths {
			lengths[i] = r.IntN(1100)
		}
		checkKeyStream(t, &key, &iv, lengths)
	}
}

// FuzzAESCTR checks random keys, counters and lengths of up to three calls
// against crypto/cipher on every implementation.
func FuzzAESCTR(f *testing.F) {
	f.Add(uint64(1), uint64(2), uint64(3), uint64(4), uint16(100), uint16(7), uint16(1000))
	f.Add(uint64(0), uint64(0), ^uint64(0), ^uint64(1), uint16(512), uint16(64), uint16(3))
	f.Fuzz(func(t *testing.T, k0, k1, hi, lo uint64, n0, n1, n2 uint16) {
		var key, iv [16]byte
		binary.LittleEndian.PutUint64(key[:], k0)
		binary.LittleEndian.PutUint64(key[8:], k1)
		binary.BigEndian.PutUint64(iv[:], hi)
		binary.BigEndian.PutUint64(iv[8:], lo)
		checkKeyStream(t, &key, &iv, []int{int(n0 % 5000), int(n1 % 5000), int(n2 % 5000)})
	})
}

// The key schedule is FIPS 197's (appendix A.1's expansion).
func TestExpandKey128(t *testing.T) {
	key := [16]byte{0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae, 0xd2, 0xa6, 0xab, 0xf7, 0x15, 0x88, 0x09, 0xcf, 0x4f, 0x3c}
	rk := expandKey128(&key)
	for _, w := range []struct {
		i    int
		want string
	}{{4, "a0fafe17"}, {9, "7a96b943"}, {23, "11f915bc"}, {36, "ac7766f3"}, {40, "d014f9a8"}, {43, "b6630ca6"}} {
		if got := hex.EncodeToString(rk[4*w.i : 4*w.i+4]); got != w.want {
			t.Errorf("w[%d] = %s, want %s", w.i, got, w.want)
		}
	}
}

// BenchmarkAESCTR measures the keystream in bytes a second (and CPU-ns a
// byte) from crypto/cipher's CTR, as estimator's noise drew it before
// (clearing the buffer, then XORing the stream in), and from AESCTR on
// every implementation, in 4 KiB reads (the noise's).
func BenchmarkAESCTR(b *testing.B) {
	var key, iv [16]byte
	buf := make([]byte, 4096)
	run := func(b *testing.B, f func()) {
		b.SetBytes(int64(len(buf)))
		cpu := bench.CPUTime()
		for b.Loop() {
			f()
		}
		b.ReportMetric(float64(bench.CPUTime()-cpu)/float64(b.N)/float64(len(buf)), "cpu-ns/byte")
	}
	b.Run("crypto-cipher", func(b *testing.B) {
		block, _ := aes.NewCipher(key[:])
		s := cipher.NewCTR(block, iv[:])
		run(b, func() {
			clear(buf)
			s.XORKeyStream(buf, buf)
		})
	})
	for name, f := range ctrImpls() {
		if name == "in use" {
			continue
		}
		b.Run(name, func(b *testing.B) {
			var c AESCTR
			c.reset(&key, &iv, f)
			run(b, func() { c.KeyStream(buf) })
		})
	}
}
