package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// TestGramDot checks GramDot, on every path this build has, against |YᵀX|²
// formed in float64 from the vectors: sizes straddle the 4×4 and 16×16 tiles
// (t 15, 16, 17, 33, 50), the 16-value steps of the rows kernel (kx 5 … 257)
// and the slices of the sums, vectors as rows and as columns, in buffers
// followed by NaN so that a read past them shows.
// The vectors share a common part, so that the Gram matrices' off-diagonal
// entries weigh as much as the diagonal (independent random vectors would
// leave them near 0, hiding a wrong or missing off-diagonal tile).
func TestGramDot(t *testing.T) {
	paths := []struct {
		name string
		f    func(cols bool, t int, x []float32, kx int, y []float32, ky int) float64
	}{{"GramDot", GramDot}, {"sgemm", gramDotSgemm}}
	r := rand.New(rand.NewPCG(3, 4))
	for _, p := range paths {
		for _, c := range []struct{ t, kx, ky int }{
			{1, 5, 3}, {2, 1, 1}, {15, 7, 40}, {16, 16, 16}, {17, 33, 9},
			{64, 128, 512}, {50, 257, 100}, {33, 300, 600}, {100, 24, 256},
			{300, 1000, 20}, // more than one slice of the sums (gramSlice)
		} {
			for _, cols := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/t=%d/kx=%d/ky=%d/cols=%v", p.name, c.t, c.kx, c.ky, cols), func(t *testing.T) {
					x := correlated(r, cols, c.t, c.kx, 1)
					y := correlated(r, cols, c.t, c.ky, 2)
					got := p.f(cols, c.t, x, c.kx, y, c.ky)
					want, mag := gramDotRef(cols, c.t, x, c.kx, y, c.ky)
					if math.Abs(got-want) > 1e-5*mag {
						t.Errorf("got %.9g, want %.9g (relative error %.2g of Σ|g_ab|² %.4g)", got, want, math.Abs(got-want)/mag, mag)
					}
				})
			}
		}
	}
}

// correlated returns t vectors of k values (rows, or columns with cols) that
// are a common random vector plus independent noise of a third of its size,
// at offset off of a buffer that holds NaN beyond them.
func correlated(r *rand.Rand, cols bool, t, k, off int) []float32 {
	_, v := randVec(r, t*k, off)
	common := make([]float32, k)
	for i := range common {
		common[i] = float32(r.NormFloat64())
	}
	for row := range t {
		for i, c := range common {
			j := row*k + i
			if cols {
				j = i*t + row
			}
			v[j] = c + v[j]/3
		}
	}
	return v
}

// gramDotRef returns |YᵀX|² and Σ_{a,b} Σ_r |y_r[a]·x_r[b]| squared (the
// scale of its rounding errors), in float64.
func gramDotRef(cols bool, t int, x []float32, kx int, y []float32, ky int) (sq, mag float64) {
	at := func(v []float32, k, r, i int) float64 {
		if cols {
			return float64(v[i*t+r])
		}
		return float64(v[r*k+i])
	}
	for a := range ky {
		for b := range kx {
			var g, m float64
			for r := range t {
				p := at(y, ky, r, a) * at(x, kx, r, b)
				g += p
				m += math.Abs(p)
			}
			sq += g * g
			mag += m * m
		}
	}
	return sq, mag
}

// TestGramCols checks GramCols' upper triangle against VᵀV formed in
// float64, on sizes that straddle the 16×16 tiles and the slices of the
// sums (k·ld past gramSlice), with correlated columns (see correlated) in
// rows of t values, of whole tiles (formed in place) and of t+3 (copied),
// the values past the t columns NaN, as are those past the buffer. Run with
// PSCLIP_KERNEL=avx2 it checks the AVX2 kernel, with PSCLIP_KERNEL=go the
// Sgemm path.
func TestGramCols(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, c := range []struct{ t, k int }{
		{1, 1}, {1, 5}, {15, 7}, {16, 16}, {17, 33}, {64, 384}, {100, 192}, {50, 0}, {300, 1000},
	} {
		for _, ld := range []int{c.t, (c.t + 15) &^ 15, c.t + 3} {
			v := correlated(r, true, c.t, c.k, 1)
			buf := make([]float32, c.k*ld+1)
			for i := range buf {
				buf[i] = float32(math.NaN())
			}
			for p := range c.k {
				copy(buf[1+p*ld:], v[p*c.t:(p+1)*c.t])
			}
			g := make([]float32, c.t*c.t)
			GramCols(c.t, buf[1:], c.k, ld, g)
			for i := range c.t {
				for j := i; j < c.t; j++ {
					var want, mag float64
					for p := range c.k {
						x := float64(v[p*c.t+i]) * float64(v[p*c.t+j])
						want += x
						mag += math.Abs(x)
					}
					if got := float64(g[i*c.t+j]); !(math.Abs(got-want) <= 1e-5*mag) {
						t.Fatalf("t=%d k=%d ld=%d: g[%d,%d] = %.9g, want %.9g", c.t, c.k, ld, i, j, got, want)
					}
				}
			}
		}
	}
}

// TestRowGram checks that RowGram's matrices, formed apart into buffers
// longer than RowGramLen (whose extra floats must stay as they were), give
// GramDot's value to the bit, and the reference's.
func TestRowGram(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, c := range []struct{ t, kx, ky int }{{1, 5, 3}, {17, 33, 9}, {64, 128, 384}, {50, 0, 7}} {
		t.Run(fmt.Sprintf("t=%d/kx=%d/ky=%d", c.t, c.kx, c.ky), func(t *testing.T) {
			x := correlated(r, false, c.t, c.kx, 1)
			y := correlated(r, false, c.t, c.ky, 2)
			n := RowGramLen(c.t)
			gx, gy := make([]float32, n+3), make([]float32, n+3)
			gx[n], gy[n+2] = -1, -2
			RowGram(c.t, x, c.kx, gx)
			RowGram(c.t, y, c.ky, gy)
			if gx[n] != -1 || gy[n+2] != -2 {
				t.Errorf("RowGram wrote past RowGramLen(%d) = %d", c.t, n)
			}
			got := RowGramDot(c.t, gx, gy)
			if want := GramDot(false, c.t, x, c.kx, y, c.ky); math.Float64bits(got) != math.Float64bits(want) {
				t.Errorf("RowGramDot %.17g, GramDot %.17g", got, want)
			}
			if want, mag := gramDotRef(false, c.t, x, c.kx, y, c.ky); math.Abs(got-want) > 1e-5*mag {
				t.Errorf("got %.9g, want %.9g", got, want)
			}
		})
	}
}

func TestGramDotEmpty(t *testing.T) {
	if got := GramDot(false, 0, nil, 3, nil, 4); got != 0 {
		t.Errorf("t = 0: %v, want 0", got)
	}
	if got := GramDot(false, 3, make([]float32, 3), 1, nil, 0); got != 0 {
		t.Errorf("ky = 0: %v, want 0", got)
	}
}

// BenchmarkGramDot times one sample's ghost norm on the GPTs' layer shapes
// (positions, inputs, outputs), by GramDot and by two Sgemm products.
func BenchmarkGramDot(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, c := range []struct {
		name      string
		t, kx, ky int
	}{
		{"char/c_attn", 64, 128, 384}, {"char/c_fc", 64, 128, 512}, {"char/mlp.c_proj", 64, 512, 128},
		{"gpt384/c_attn", 256, 384, 1152}, {"gpt384/c_fc", 256, 384, 1536}, {"gpt384/mlp.c_proj", 256, 1536, 384},
	} {
		_, x := randVec(r, c.t*c.kx, 0)
		_, y := randVec(r, c.t*c.ky, 0)
		for _, p := range []struct {
			name string
			f    func(cols bool, t int, x []float32, kx int, y []float32, ky int) float64
		}{{"GramDot", GramDot}, {"sgemm", gramDotSgemm}} {
			b.Run(c.name+"/"+p.name, func(b *testing.B) {
				for b.Loop() {
					p.f(false, c.t, x, c.kx, y, c.ky)
				}
				b.ReportMetric(float64(c.t*c.t*(c.kx+c.ky))*float64(b.N)/b.Elapsed().Seconds()/1e9, "full-GMAC/s")
			})
		}
	}
}

// BenchmarkGramCols times the upper triangle of VᵀV for AlexNet's 8×8
// convolutions' ghost norms (nn's imageSqNorm: the padded 10×10 image's
// channels, and the output gradient's 64 positions), by GramCols and by
// Sgemm's full product.
func BenchmarkGramCols(b *testing.B) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, c := range []struct {
		name string
		t, k int
	}{
		{"image/192", 100, 192}, {"image/384", 100, 384}, {"dy/256", 64, 256}, {"dy/384", 64, 384},
	} {
		_, v := randVec(r, c.t*c.k, 0)
		g := make([]float32, c.t*c.t)
		for _, p := range []struct {
			name string
			f    func()
		}{
			{"GramCols", func() { GramCols(c.t, v, c.k, c.t, g) }},
			{"sgemm", func() { Sgemm(true, false, c.t, c.t, c.k, 1, v, c.t, v, c.t, 0, g, c.t) }},
		} {
			b.Run(c.name+"/"+p.name, func(b *testing.B) {
				for b.Loop() {
					p.f()
				}
				b.ReportMetric(float64(c.t*c.t*c.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "full-GMAC/s")
			})
		}
	}
}

// BenchmarkGramRate times RowGram, one Gram matrix XXᵀ of T rows of k values,
// against Sgemm forming the same matrix in full, on the GPTs' ghost-norm
// shapes (the char GPT: T 64, k its layers' widths 128, 384, 512; the 6×384
// GPT: T 256, k 384, 1152, 1536), in rate per multiply-add performed: the
// upper 4×4 tiles' T′(T′+4)/2·k for RowGram (T′ = T rounded up to 4), T²k
// for Sgemm. "cache" forms the Gram matrix of one X again and again (in L2
// where it fits, 384 KB at T 64, k 1536 at T 256 does not); "memory" those of
// the samples of a batch that spans 64 MiB, one after the other as nn's
// Linear forms them, so that each X comes from memory. GMAC/s is by the wall
// clock, cpu-GMAC/s by the thread's CPU time where the OS gives it (linux),
// which a loaded machine inflates less. Run it on one thread (-cpu 1):
// Sgemm would otherwise share out its larger products.
func BenchmarkGramRate(b *testing.B) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, c := range []struct {
		name string
		t, k int
	}{
		{"char/k=128", 64, 128}, {"char/k=384", 64, 384}, {"char/k=512", 64, 512},
		{"gpt384/k=384", 256, 384}, {"gpt384/k=1152", 256, 1152}, {"gpt384/k=1536", 256, 1536},
	} {
		for _, where := range []string{"cache", "memory"} {
			samples := 1
			if where == "memory" {
				samples = max(2, (64<<20)/(4*c.t*c.k))
			}
			x := randSlice(r, samples*c.t*c.k)
			g := make([]float32, max(RowGramLen(c.t), c.t*c.t))
			nt := ceilDiv(c.t, 4)
			for _, p := range []struct {
				name string
				macs float64
				f    func(x []float32)
			}{
				{"RowGram", float64(nt*(nt+1)/2*16) * float64(c.k), func(x []float32) { RowGram(c.t, x, c.k, g) }},
				{"Sgemm", float64(c.t*c.t) * float64(c.k), func(x []float32) { Sgemm(false, true, c.t, c.t, c.k, 1, x, c.k, x, c.k, 0, g, c.t) }},
			} {
				b.Run(c.name+"/"+where+"/"+p.name, func(b *testing.B) {
					runtime.LockOSThread()
					defer runtime.UnlockOSThread()
					i := 0
					cpu0 := threadCPU()
					for b.Loop() {
						p.f(x[i*c.t*c.k : (i+1)*c.t*c.k])
						i = (i + 1) % samples
					}
					macs := p.macs * float64(b.N)
					b.ReportMetric(macs/b.Elapsed().Seconds()/1e9, "GMAC/s")
					if cpu := threadCPU() - cpu0; cpu > 0 {
						b.ReportMetric(macs/cpu.Seconds()/1e9, "cpu-GMAC/s")
					}
				})
			}
		}
	}
}
