package kernels

import (
	"fmt"
	"sync"
)

// GramDot returns ⟨XXᵀ, YYᵀ⟩ = Σ_{r,s} (x_r·x_s)(y_r·y_s) for t vectors x_r of
// kx values and y_r of ky values, held as the rows of X [t,kx] and Y [t,ky]
// or, with cols, as the columns of X [kx,t] and Y [ky,t]. It equals |YᵀX|²,
// the squared norm of Σ_r y_r x_rᵀ: a linear layer's per-sample gradient
// from its t input rows and output-gradient rows (the ghost norm), in
// T²(kx+ky) multiply-adds instead of the T·kx·ky of forming the gradient.
//
// Where the CPU has a Gram tile kernel (AVX-512), both operands are
// transposed once into [k][T] with T padded to whole 16×16 tiles, only the
// tiles on and above the diagonal of each (symmetric) Gram matrix are formed,
// and the sum is the diagonal tiles' dot product plus twice the others'. This
// halves the flops of forming the two matrices in full, as Sgemm does, and
// packs each operand once where Sgemm packs it twice (as A and as Bᵀ).
// Elsewhere the two matrices are formed by Sgemm. The result depends only on
// the arguments and the kernel in use, not on GOMAXPROCS: the work is serial.
// It panics if a slice is too short.
func GramDot(cols bool, t int, x []float32, kx int, y []float32, ky int) float64 {
	if t < 0 || kx < 0 || ky < 0 || len(x) < t*kx || len(y) < t*ky {
		panic(fmt.Sprintf("kernels: GramDot: %d vectors of %d and %d values in %d and %d elements", t, kx, ky, len(x), len(y)))
	}
	if t == 0 || kx == 0 || ky == 0 {
		return 0
	}
	if gramTile == nil {
		return gramDotSgemm(cols, t, x, kx, y, ky)
	}
	tp := roundUp(t, gramSize)
	nt := tp / gramSize
	tiles := nt * (nt + 1) / 2 * gramSize * gramSize
	buf := getGramScratch((kx+ky)*tp + 2*tiles)
	defer gramScratch.Put(buf)
	s := *buf
	xt, yt := s[:kx*tp], s[kx*tp:(kx+ky)*tp]
	gx, gy := s[(kx+ky)*tp:][:tiles], s[(kx+ky)*tp+tiles:][:tiles]
	gramTranspose(cols, t, x, kx, xt, tp)
	gramTranspose(cols, t, y, ky, yt, tp)
	gramUpper(xt, kx, tp, gx)
	gramUpper(yt, ky, tp, gy)
	d := nt * gramSize * gramSize // the diagonal tiles come first
	return Dot(gx[:d], gy[:d]) + 2*Dot(gx[d:], gy[d:])
}

const (
	// gramSize is the side of the square tiles of gramTile.
	gramSize = 16
	// gramKC is how many steps of the sum gramUpper takes for all tiles
	// before the next: a 16-wide column block of that many steps (16 KiB)
	// stays in L1 while it is reused along a row of tiles.
	gramKC = 256
)

// gramTranspose stores the t vectors of v (rows or, with cols, columns;
// k values each) as the columns of dst [k][tp], zeroing columns t..tp-1.
func gramTranspose(cols bool, t int, v []float32, k int, dst []float32, tp int) {
	if cols {
		for p := range k {
			d := dst[p*tp : (p+1)*tp]
			clear(d[copy(d, v[p*t:(p+1)*t]):])
		}
		return
	}
	if best.transposed(v, k, k, dst, tp, t) {
		return
	}
	for p := range k {
		d := dst[p*tp : (p+1)*tp]
		for r := range t {
			d[r] = v[r*k+p]
		}
		clear(d[t:])
	}
}

// gramUpper forms the tiles on and above the diagonal of VᵀV from vt [k][tp]
// (the vectors as columns), the nt diagonal tiles first, then the others row
// of tiles by row, each stored as 16×16 contiguous floats.
func gramUpper(vt []float32, k, tp int, g []float32) {
	nt := tp / gramSize
	const sq = gramSize * gramSize
	for pc := 0; pc < k; pc += gramKC {
		kc := min(gramKC, k-pc)
		base := vt[pc*tp:]
		off := nt * sq
		for i := range nt {
			a := base[i*gramSize:]
			gramTile(kc, a, a, tp, g[i*sq:(i+1)*sq], pc > 0)
			for j := i + 1; j < nt; j++ {
				gramTile(kc, a, base[j*gramSize:], tp, g[off:off+sq], pc > 0)
				off += sq
			}
		}
	}
}

// gramDotSgemm is GramDot by two full Sgemm products.
func gramDotSgemm(cols bool, t int, x []float32, kx int, y []float32, ky int) float64 {
	buf := getGramScratch(2 * t * t)
	defer gramScratch.Put(buf)
	gx, gy := (*buf)[:t*t], (*buf)[t*t:]
	if cols {
		Sgemm(true, false, t, t, kx, 1, x, t, x, t, 0, gx, t)
		Sgemm(true, false, t, t, ky, 1, y, t, y, t, 0, gy, t)
	} else {
		Sgemm(false, true, t, t, kx, 1, x, kx, x, kx, 0, gx, t)
		Sgemm(false, true, t, t, ky, 1, y, ky, y, ky, 0, gy, t)
	}
	return Dot(gx, gy)
}

// gramScratch pools GramDot's buffers (transposed operands and tiles).
var gramScratch sync.Pool

func getGramScratch(n int) *[]float32 {
	p, _ := gramScratch.Get().(*[]float32)
	if p == nil {
		p = new([]float32)
	}
	*p = grow(*p, n)
	return p
}
