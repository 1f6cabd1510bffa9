package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// vecLengths covers every tail of every loop (0..70 straddles the 64-element
// unrolled step of AVX-512, the 32- and 16-element ones of AVX2 and each
// single-register step), plus lengths of whole gradient spans.
func vecLengths() []int {
	var ns []int
	for n := 0; n <= 70; n++ {
		ns = append(ns, n)
	}
	return append(ns, 127, 128, 129, 1000, 4097, 1<<15, 1<<15+13)
}

// randVec returns n normal values starting at offset off of a larger buffer,
// so starts are unaligned; the rest of the buffer holds NaN so that reading
// or writing past the slice shows.
func randVec(r *rand.Rand, n, off int) (buf, x []float32) {
	buf = make([]float32, off+n+17)
	for i := range buf {
		buf[i] = float32(math.NaN())
	}
	x = buf[off : off+n : off+n]
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return buf, x
}

// checkGuard fails if anything outside [off, off+n) of buf is not NaN.
func checkGuard(t *testing.T, buf []float32, off, n int) {
	t.Helper()
	for i, v := range buf {
		if (i < off || i >= off+n) && !math.IsNaN(float64(v)) {
			t.Fatalf("element %d outside the slice [%d,%d) written: %v", i, off, off+n, v)
		}
	}
}

func TestSqNormDot(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, ops := range vecAvailable {
		for _, n := range vecLengths() {
			for _, off := range []int{0, 1, 3} {
				t.Run(fmt.Sprintf("%s/n=%d/off=%d", ops.name, n, off), func(t *testing.T) {
					_, x := randVec(r, n, off)
					_, y := randVec(r, n, (off+1)%4)
					var sq, dot, mag float64
					for j := range x {
						sq += float64(x[j]) * float64(x[j])
						dot += float64(x[j]) * float64(y[j])
						mag += math.Abs(float64(x[j]) * float64(y[j]))
					}
					// Products of float32 are exact in float64; only the
					// float64 additions round, at most n·2⁻⁵³ of the
					// magnitudes (here ≤ 2e-11 relative): far below 1e-6.
					tol := float64(n+1) * 0x1p-52
					if got := ops.sqNorm(x); math.Abs(got-sq) > tol*sq {
						t.Errorf("sqNorm = %v, want %v", got, sq)
					}
					if got := ops.dot(x, y); math.Abs(got-dot) > tol*mag {
						t.Errorf("dot = %v, want %v", got, dot)
					}
				})
			}
		}
	}
}

func TestSqNormNonFinite(t *testing.T) {
	inf := float32(math.Inf(-1))
	nan := float32(math.NaN())
	for _, ops := range vecAvailable {
		for _, n := range []int{1, 7, 8, 9, 63, 64, 65, 200} {
			for _, at := range []int{0, n / 2, n - 1} {
				x := make([]float32, n)
				x[at] = inf
				if got := ops.sqNorm(x); !math.IsInf(got, 1) {
					t.Errorf("%s: n=%d, -Inf at %d: sqNorm = %v, want +Inf", ops.name, n, at, got)
				}
				x[at] = nan
				if got := ops.sqNorm(x); !math.IsNaN(got) {
					t.Errorf("%s: n=%d, NaN at %d: sqNorm = %v, want NaN", ops.name, n, at, got)
				}
			}
		}
	}
}

func TestAxpyScale(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, ops := range vecAvailable {
		for _, n := range vecLengths() {
			for _, off := range []int{0, 1, 3} {
				t.Run(fmt.Sprintf("%s/n=%d/off=%d", ops.name, n, off), func(t *testing.T) {
					a := float32(r.NormFloat64())
					_, x := randVec(r, n, (off+2)%4)
					ybuf, y := randVec(r, n, off)
					y0 := append([]float32(nil), y...)
					ops.axpy(a, x, y)
					checkGuard(t, ybuf, off, n)
					for j := range y {
						// One rounding (fused) or two: within 2 ulp of
						// the exact a·x+y's magnitudes.
						want := float64(a)*float64(x[j]) + float64(y0[j])
						mag := math.Abs(float64(a)*float64(x[j])) + math.Abs(float64(y0[j]))
						if math.Abs(float64(y[j])-want) > 0x1p-23*mag {
							t.Fatalf("axpy: y[%d] = %v, want %v", j, y[j], want)
						}
					}
					// axpyZero gives axpy's values and clears x.
					y1 := append([]float32(nil), y0...)
					xbuf, x := randVec(r, n, (off+2)%4)
					want := append([]float32(nil), y1...)
					ops.axpy(a, x, want)
					ops.axpyZero(a, x, y1)
					checkGuard(t, xbuf, (off+2)%4, n)
					for j := range y1 {
						if y1[j] != want[j] || x[j] != 0 {
							t.Fatalf("axpyZero: y[%d] = %v, x[%d] = %v; want %v and 0", j, y1[j], j, x[j], want[j])
						}
					}
					copy(y0, y)
					ops.scale(a, y)
					checkGuard(t, ybuf, off, n)
					for j := range y {
						if want := a * y0[j]; y[j] != want { // one correctly rounded product
							t.Fatalf("scale: x[%d] = %v, want %v", j, y[j], want)
						}
					}
				})
			}
		}
	}
}

// TestVectorAPI checks the exported functions' length handling.
func TestVectorAPI(t *testing.T) {
	x := []float32{1, 2, 3}
	y := []float32{1, 1, 1, 7}
	if got := Dot(x, y); got != 6 {
		t.Errorf("Dot = %v, want 6 (y's extra element ignored)", got)
	}
	Axpy(2, x, y)
	if want := []float32{3, 5, 7, 7}; fmt.Sprint(y) != fmt.Sprint(want) {
		t.Errorf("Axpy: y = %v, want %v", y, want)
	}
	z := []float32{1, 1}
	AxpyZero(1, z, y[1:])
	if want := []float32{3, 6, 8, 7}; fmt.Sprint(y) != fmt.Sprint(want) || z[0] != 0 || z[1] != 0 {
		t.Errorf("AxpyZero: y = %v, x = %v, want %v and zeros", y, z, want)
	}
	Scale(0.5, y[:2])
	if want := []float32{1.5, 3, 8, 7}; fmt.Sprint(y) != fmt.Sprint(want) {
		t.Errorf("Scale: y = %v, want %v", y, want)
	}
	if got := SqNorm(nil); got != 0 {
		t.Errorf("SqNorm(nil) = %v", got)
	}
	for name, f := range map[string]func(){
		"Dot":      func() { Dot(y, x) },
		"Axpy":     func() { Axpy(1, y, x) },
		"AxpyZero": func() { AxpyZero(1, y, x) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s with a short y did not panic", name)
				}
			}()
			f()
		}()
	}
}

// AxpyMany gives y the bits of one Axpy call per term in order, on every
// implementation, and keeps the NaN of a term whose factor is 0 out of y.
func TestAxpyMany(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	nan := float32(math.NaN())
	for _, ops := range vecAvailable {
		for _, n := range vecLengths() {
			for _, terms := range []int{1, 2, 12, 17, 40} {
				// The vectors 3 apart, NaN between them.
				stride := n + 3
				x := make([]float32, terms*stride)
				c := make([]float32, terms)
				for k := range terms {
					for j := range stride {
						x[k*stride+j] = nan
						if j < n {
							x[k*stride+j] = float32(r.NormFloat64())
						}
					}
					c[k] = float32(r.NormFloat64())
				}
				if terms > 1 {
					c[terms/2] = 0
					for j := range n {
						x[terms/2*stride+j] = nan
					}
				}
				ybuf, y := randVec(r, n, 1)
				want := append([]float32(nil), y...)
				for k, ck := range c {
					if ck != 0 {
						ops.axpy(ck, x[k*stride:k*stride+n], want)
					}
				}
				axpyMany(ops, y, c, x, stride)
				checkGuard(t, ybuf, 1, n)
				if !bitsEqual(y, want) {
					t.Fatalf("%s: n %d, %d terms: AxpyMany differs from Axpy term by term", ops.name, n, terms)
				}
			}
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("AxpyMany with too short an x did not panic")
		}
	}()
	AxpyMany(make([]float32, 4), make([]float32, 2), make([]float32, 7), 4)
}

func BenchmarkVector(b *testing.B) {
	const n = 1 << 15 // one gradient span of package train: 128 KiB, in L2
	r := rand.New(rand.NewPCG(5, 6))
	_, x := randVec(r, n, 0)
	_, y := randVec(r, n, 0)
	var sink float64
	for _, ops := range vecAvailable {
		for _, c := range []struct {
			name  string
			bytes int // memory traffic per call
			f     func()
		}{
			{"SqNorm", 4 * n, func() { sink += ops.sqNorm(x) }},
			{"Dot", 8 * n, func() { sink += ops.dot(x, y) }},
			{"Axpy", 12 * n, func() { ops.axpy(1e-9, x, y) }},
			{"AxpyZero", 16 * n, func() { ops.axpyZero(1e-9, x, y) }},
			{"Scale", 8 * n, func() { ops.scale(1, y) }},
		} {
			b.Run(c.name+"/"+ops.name, func(b *testing.B) {
				b.SetBytes(int64(c.bytes))
				for b.Loop() {
					c.f()
				}
			})
		}
	}
	_ = sink
}

func TestAddRows(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, v := range vecAvailable {
		for _, rows := range []int{1, 2, 5} {
			for n := 0; n <= 40; n++ {
				ldd, lds := n+3, n+1
				src := randSlice(r, rows*lds)
				dst := randSlice(r, rows*ldd+8)
				for i := rows * ldd; i < len(dst); i++ {
					dst[i] = float32(math.NaN())
				}
				want := append([]float32(nil), dst...)
				for row := range rows {
					for i := range n {
						want[row*ldd+i] += src[row*lds+i]
					}
				}
				v.addRows(dst, ldd, src, lds, rows, n)
				for i := range dst {
					if math.Float32bits(dst[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s: rows %d, n %d: dst[%d] = %v, want %v", v.name, rows, n, i, dst[i], want[i])
					}
				}
			}
		}
	}
}
