package kernels

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/psclip/psclip/bench"
)

// ZigguratAdd's assembly gives the portable code's bits on every length
// (the tail of fewer than 8 words in Go), for words that take the fast
// path and words that do not, onto values that include ±0, and marks the
// same words rejected.
func TestZigguratAdd(t *testing.T) {
	var layers [256][2]float64
	for i := range layers {
		layers[i] = [2]float64{3.7 - float64(i)/80, 0.99 - float64(i%7)*0.1} // about a third of the words rejected in some layers
	}
	rng := rand.New(rand.NewPCG(3, 4))
	impls := map[string]zigFunc{"in use": zigFast}
	for name, f := range zigAvailable() {
		impls[name] = f
	}
	for name, f := range impls {
		if f == nil {
			continue
		}
		for _, n := range []int{0, 1, 7, 8, 9, 16, 63, 64, 100, 1000} {
			w := make([]byte, 8*n)
			d := make([]float32, n)
			for j := range d {
				binary.LittleEndian.PutUint64(w[8*j:], rng.Uint64())
				switch j % 5 {
				case 0:
					d[j] = float32(math.Copysign(0, -1))
				case 1:
					d[j] = 0
				default:
					d[j] = float32(rng.NormFloat64())
				}
			}
			std := 0.37
			want, got := slices.Clone(d), slices.Clone(d)
			wantRej, gotRej := make([]uint8, (n+7)/8), make([]uint8, (n+7)/8)
			for j := range gotRej {
				gotRej[j] = 0xa5 // every byte must be written
			}
			zigguratAddGo(want, w, std, &layers, wantRej)
			m := n &^ 7
			if m > 0 {
				f(&got[0], &w[0], m, std, &layers, &gotRej[0])
			}
			zigguratAddGo(got[m:], w[8*m:], std, &layers, gotRej[m/8:])
			for j := range want {
				if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
					t.Fatalf("%s, n %d: d[%d] = %v (%#x), want %v (%#x)", name, n, j, got[j], math.Float32bits(got[j]), want[j], math.Float32bits(want[j]))
				}
			}
			if !slices.Equal(gotRej, wantRej) {
				t.Fatalf("%s, n %d: rejected %x, want %x", name, n, gotRej, wantRej)
			}
			if n == 1000 && !slices.ContainsFunc(wantRej, func(b uint8) bool { return b != 0 }) {
				t.Fatal("no word rejected: the test does not test the slow lanes")
			}
		}
	}
	// The exported function checks its arguments.
	defer func() {
		if recover() == nil {
			t.Error("ZigguratAdd with too short a rejected did not panic")
		}
	}()
	ZigguratAdd(make([]float32, 9), make([]byte, 72), 1, &layers, make([]uint8, 1))
}

// AESCTR.ZigguratAdd writes crypto/cipher's keystream and ZigguratAdd's
// portable bits and rejected marks, fused or not, in calls of lengths that
// start and end inside a group of 8 words and a turn of 32, from counters
// far from a wrap and about to wrap (where the fused kernel gives way),
// for layers that reject a third of the words in some.
func TestAESCTRZigguratAdd(t *testing.T) {
	var layers [256][2]float64
	for i := range layers {
		layers[i] = [2]float64{3.7 - float64(i)/80, 0.99 - float64(i%7)*0.1}
	}
	impls := map[string]func(c *AESCTR, key, iv *[16]byte){
		"separate": func(c *AESCTR, key, iv *[16]byte) { c.reset(key, iv, ctrFast) },
		"in use":   func(c *AESCTR, key, iv *[16]byte) { c.Reset(key, iv) },
	}
	lengths := []int{9, 512, 33, 64, 1000, 7, 8, 31, 32, 512, 0, 100, 80, 96}
	r := rand.New(rand.NewPCG(7, 8))
	for _, lo := range []uint64{0, 1 << 40, 1<<64 - 600, 1<<64 - 3} {
		var key, iv [16]byte
		binary.LittleEndian.PutUint64(key[:], r.Uint64())
		binary.LittleEndian.PutUint64(key[8:], r.Uint64())
		binary.BigEndian.PutUint64(iv[:], r.Uint64())
		binary.BigEndian.PutUint64(iv[8:], lo)
		block, _ := aes.NewCipher(key[:])
		for name, reset := range impls {
			var c AESCTR
			reset(&c, &key, &iv)
			want := cipher.NewCTR(block, iv[:])
			for k, n := range lengths {
				d := make([]float32, n)
				for j := range d {
					d[j] = float32(r.NormFloat64())
					if j%5 == 0 {
						d[j] = float32(math.Copysign(0, -1))
					}
				}
				wantD, wantW, wantRej := slices.Clone(d), make([]byte, 8*n), make([]uint8, (n+7)/8)
				want.XORKeyStream(wantW, wantW)
				zigguratAddGo(wantD, wantW, 0.37, &layers, wantRej)
				w, rej := make([]byte, 8*n), make([]uint8, (n+7)/8)
				for j := range rej {
					rej[j] = 0xa5 // every byte must be written
				}
				c.ZigguratAdd(d, w, 0.37, &layers, rej)
				if !slices.Equal(w, wantW) {
					t.Fatalf("%s, lo %#x, call %d (%d words): other words than crypto/cipher's keystream", name, lo, k, n)
				}
				for j := range d {
					if math.Float32bits(d[j]) != math.Float32bits(wantD[j]) {
						t.Fatalf("%s, lo %#x, call %d (%d words): d[%d] = %v, want %v", name, lo, k, n, j, d[j], wantD[j])
					}
				}
				if !slices.Equal(rej, wantRej) {
					t.Fatalf("%s, lo %#x, call %d (%d words): rejected %x, want %x", name, lo, k, n, rej, wantRej)
				}
			}
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("AESCTR.ZigguratAdd with too short a d did not panic")
		}
	}()
	var c AESCTR
	c.Reset(new([16]byte), new([16]byte))
	c.ZigguratAdd(make([]float32, 8), make([]byte, 72), 1, &layers, make([]uint8, 2))
}

// BenchmarkZigguratAdd measures the fast path on 512 words in L1, in CPU-ns
// a value, on every implementation.
func BenchmarkZigguratAdd(b *testing.B) {
	var layers [256][2]float64
	for i := range layers {
		layers[i] = [2]float64{3.7 - float64(i)/80, 0.99}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	w := make([]byte, 4096)
	for j := range len(w) / 8 {
		binary.LittleEndian.PutUint64(w[8*j:], rng.Uint64())
	}
	d, rej := make([]float32, 512), make([]uint8, 64)
	impls := map[string]zigFunc{"go": nil}
	for name, f := range zigAvailable() {
		impls[name] = f
	}
	for name, f := range impls {
		b.Run(name, func(b *testing.B) {
			cpu := bench.CPUTime()
			for b.Loop() {
				if f == nil {
					zigguratAddGo(d, w, 0.5, &layers, rej)
				} else {
					f(&d[0], &w[0], len(d), 0.5, &layers, &rej[0])
				}
			}
			b.ReportMetric(float64(bench.CPUTime()-cpu)/float64(b.N)/float64(len(d)), "cpu-ns/value")
		})
	}
}

// BenchmarkAESCTRZigguratAdd measures the keystream and the fast path in
// L1, in CPU-ns a value, made by AESCTR.ZigguratAdd in use (one loop with
// VAES under avx512) and by its two calls, in reads of 512 words and of
// 2048 (estimator's noise's).
func BenchmarkAESCTRZigguratAdd(b *testing.B) {
	var layers [256][2]float64
	for i := range layers {
		layers[i] = [2]float64{3.7 - float64(i)/80, 0.99}
	}
	var key, iv [16]byte
	for name, reset := range map[string]func(c *AESCTR){
		"in-use":   func(c *AESCTR) { c.Reset(&key, &iv) },
		"separate": func(c *AESCTR) { c.reset(&key, &iv, ctrFast) },
	} {
		for _, n := range []int{512, 2048} {
			w, d, rej := make([]byte, 8*n), make([]float32, n), make([]uint8, n/8)
			b.Run(name+"/"+strconv.Itoa(n), func(b *testing.B) {
				var c AESCTR
				reset(&c)
				cpu := bench.CPUTime()
				for b.Loop() {
					c.ZigguratAdd(d, w, 0.5, &layers, rej)
				}
				b.ReportMetric(float64(bench.CPUTime()-cpu)/float64(b.N)/float64(n), "cpu-ns/value")
			})
		}
	}
}
