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
// Where the CPU has Gram kernels (AVX-512, AVX2, NEON), only the square
// tiles on and above the diagonal of each (symmetric) Gram matrix are
// formed, from the operands as they are: 4×4 tiles of dot products of
// rows, or 16×16 tiles of outer products of columns. The sum is then the diagonal tiles' dot product
// plus twice the others'. This halves the flops of forming the two matrices
// in full, as Sgemm does, and replaces Sgemm's two transposing packs of
// each operand (as A and as Bᵀ) by no copy (rows; the last partial block of
// 4 is padded) or one plain copy padded to whole tiles (columns). Elsewhere
// the two matrices are formed by Sgemm. The result depends only on the
// arguments and the kernel in use, not on GOMAXPROCS: the work is serial.
// It panics if a slice is too short.
func GramDot(cols bool, t int, x []float32, kx int, y []float32, ky int) float64 {
	if t < 0 || kx < 0 || ky < 0 || len(x) < t*kx || len(y) < t*ky {
		panic(fmt.Sprintf("kernels: GramDot: %d vectors of %d and %d values in %d and %d elements", t, kx, ky, len(x), len(y)))
	}
	if t == 0 || kx == 0 || ky == 0 {
		return 0
	}
	if !cols {
		n := RowGramLen(t)
		buf := getGramScratch(2 * n)
		defer gramScratch.Put(buf)
		gx, gy := (*buf)[:n], (*buf)[n:]
		RowGram(t, x, kx, gx)
		RowGram(t, y, ky, gy)
		return RowGramDot(t, gx, gy)
	}
	if gramColsTile == nil {
		return gramDotSgemm(cols, t, x, kx, y, ky)
	}
	const side, sq = 16, 16 * 16
	nt := ceilDiv(t, side)
	tiles := nt * (nt + 1) / 2 * sq
	pad := (kx + ky) * nt * side // the operands padded to whole tiles
	buf := getGramScratch(2*tiles + pad)
	defer gramScratch.Put(buf)
	gx, gy, rest := (*buf)[:tiles], (*buf)[tiles:2*tiles], (*buf)[2*tiles:]
	gramCols(t, x, kx, rest[:kx*nt*side], gx)
	gramCols(t, y, ky, rest[kx*nt*side:], gy)
	return tilesDot(nt*sq, gx, gy)
}

// RowGramLen is the number of floats RowGram stores for t rows.
func RowGramLen(t int) int {
	if !gramRowKernels() {
		return t * t
	}
	nt := ceilDiv(t, 4)
	return nt * (nt + 1) / 2 * 16
}

// RowGram stores the Gram matrix XXᵀ of the t rows of x [t,k] in g
// (RowGramLen(t) floats), in a layout that only RowGramDot reads: where the
// CPU has GramDot's row kernel, its 4×4 tiles on and above the diagonal,
// else the whole matrix. So GramDot(false, t, x, kx, y, ky) is
// RowGramDot(t, gx, gy) of RowGram's gx and gy, to the bit, and a caller can
// form gx while x is in cache and gy later. The work is serial. It panics if
// a slice is too short.
func RowGram(t int, x []float32, k int, g []float32) {
	if t < 0 || k < 0 || len(x) < t*k || len(g) < RowGramLen(t) {
		panic(fmt.Sprintf("kernels: RowGram: %d rows of %d values in %d elements; Gram matrix in %d", t, k, len(x), len(g)))
	}
	g = g[:RowGramLen(t)]
	switch {
	case t == 0:
	case k == 0:
		clear(g)
	case !gramRowKernels():
		Sgemm(false, true, t, t, k, 1, x, k, x, k, 0, g, t)
	case t%4 == 0:
		gramRows(t, x, k, nil, g)
	default:
		buf := getGramScratch(4 * k) // the last rows padded with zero rows
		defer gramScratch.Put(buf)
		gramRows(t, x, k, *buf, g)
	}
}

// RowGramDot returns ⟨XXᵀ, YYᵀ⟩ from the Gram matrices gx and gy of t rows
// each that RowGram stored.
func RowGramDot(t int, gx, gy []float32) float64 {
	n := RowGramLen(t)
	if len(gx) < n || len(gy) < n {
		panic(fmt.Sprintf("kernels: RowGramDot: Gram matrices of %d rows in %d and %d elements, want %d", t, len(gx), len(gy), n))
	}
	if !gramRowKernels() {
		return Dot(gx[:n], gy[:n])
	}
	return tilesDot(ceilDiv(t, 4)*16, gx[:n], gy[:n])
}

// GramDot's kernels (gram_amd64.go, gram_arm64.go, gram_other.go), nil where
// the micro-kernel in use has none. Over the first k values of each vector:
//   - gramRowsTile forms n 4×4 tiles (stored transposed, one after the other
//     in c) from rows 0..3 of a and rows 4t..4t+3 of b [4n,ld];
//   - gramRowsSweep forms gramRows' column j of tiles, (i, j) for i ≤ j in
//     g's layout for nt blocks of rows, from blocks 0..j−1 of a [·,ld] and
//     the 4 rows of b (block j, or its padded copy), and with next fetches
//     the 4 rows that follow b's in its array, the next column's;
//   - gramColsTile forms a 16×16 tile from columns 0..15 of a and of b
//     [k,ld].
//
// All add into their tiles when acc is set.
type (
	gramRowsTileFunc  func(k int, a, b []float32, ld int, c []float32, n int, acc bool)
	gramRowsSweepFunc func(k int, a, b []float32, ld int, g []float32, j, nt int, acc, next bool)
	gramColsTileFunc  func(k int, a, b []float32, ld int, c []float32, acc bool)
)

// gramRowKernels reports whether GramDot's rows are formed by a row kernel
// (by tiles or by columns of tiles) rather than by Sgemm.
func gramRowKernels() bool { return gramRowsTile != nil || gramRowsSweep != nil }

// tilesDot is the dot product of two symmetric matrices stored as their
// tiles on and above the diagonal, the d floats of the diagonal tiles first:
// those count once, the others twice.
func tilesDot(d int, gx, gy []float32) float64 {
	return Dot(gx[:d], gy[:d]) + 2*Dot(gx[d:], gy[d:])
}

// gramSlice is the most floats of the operand that gramRows and gramCols
// sweep for every tile before the next slice of the sums: 1 MiB, so that the
// slice stays in L2 while it is read a row (or column) of tiles at a time.
const gramSlice = 1 << 18

// gramRows stores the 4×4 tiles on and above the diagonal of VVᵀ in g,
// the nt diagonal tiles first, then the others by rows of tiles, from the t
// rows of v [t,k]; pad (4·k floats, when 4 does not divide t) holds the last
// rows padded with zero rows.
func gramRows(t int, v []float32, k int, pad, g []float32) {
	nt := ceilDiv(t, 4)
	full := t / 4
	block := func(i int) []float32 { return v[4*i*k:] }
	if full < nt {
		pad = pad[:4*k]
		clear(pad[copy(pad, v[4*full*k:t*k]):])
		block = func(i int) []float32 {
			if i == full {
				return pad
			}
			return v[4*i*k:]
		}
	}
	kc := max(16, gramSlice/t&^15)
	for pc := 0; pc < k; pc += kc {
		n := min(kc, k-pc)
		if gramRowsSweep != nil {
			// By columns of tiles, each fetching the next column's rows
			// (v's, and past the last one the rows that follow v).
			for j := range nt {
				gramRowsSweep(n, v[pc:], block(j)[pc:], k, g, j, nt, pc > 0, j < full)
			}
			continue
		}
		off := nt * 16
		for i := range nt {
			a := block(i)[pc:]
			gramRowsTile(n, a, a, k, g[i*16:], 1, pc > 0)
			// The blocks after i, as one call for those in v and one
			// for the padded last block.
			for j := i + 1; j < nt; {
				m := max(1, min(nt, full)-j)
				gramRowsTile(n, a, block(j)[pc:], k, g[off:], m, pc > 0)
				off += 16 * m
				j += m
			}
		}
	}
}

// gramCols is gramRows for the t columns of v [k,t] with 16×16 tiles, from
// a copy of v in vt [k][16·nt] padded with zero columns.
func gramCols(t int, v []float32, k int, vt, g []float32) {
	tp := len(vt) / k
	for p := range k {
		d := vt[p*tp : (p+1)*tp]
		clear(d[copy(d, v[p*t:(p+1)*t]):])
	}
	gramColsTiles(tp/16, vt, k, tp, g)
}

// gramColsTiles is gramCols on the first 16·nt columns of v [k,ld] in
// place, ld ≥ 16·nt.
func gramColsTiles(nt int, v []float32, k, ld int, g []float32) {
	const sq = 16 * 16
	kc := max(1, gramSlice/ld)
	for pc := 0; pc < k; pc += kc {
		n := min(kc, k-pc)
		base := v[pc*ld:]
		off := nt * sq
		for i := range nt {
			a := base[i*16:]
			gramColsTile(n, a, a, ld, g[i*sq:(i+1)*sq], pc > 0)
			for j := i + 1; j < nt; j++ {
				gramColsTile(n, a, base[j*16:], ld, g[off:off+sq], pc > 0)
				off += sq
			}
		}
	}
}

// GramCols stores the Gram matrix VᵀV of the t columns of v [k,ld] (the
// first t of each row of ld values) in g [t,t]: entry (r,s), r ≤ s, is the
// dot product of columns r and s. Only the entries on and above the
// diagonal are guaranteed; those below it may be written or left as they
// were. (A caller that reads the symmetric matrix's upper triangle needs no
// more: Conv2d's ghost norm through the padded image.)
//
// Where the CPU has GramDot's column kernel (AVX-512, AVX2), the 16×16
// tiles on and above the diagonal are formed, each entry's products added
// in the order of the rows of v (in slices of the rows, as GramDot does),
// and copied into g: about half the flops of Sgemm's full product and none of
// its packing. The tiles are formed from v in place when its rows hold
// whole tiles (ld and len(v) reach the next multiple of 16 columns, whose
// values beyond column t only enter entries that are dropped), otherwise
// from a padded copy. Elsewhere g is Sgemm's VᵀV in full. The result
// depends only on the arguments and the kernel in use, not on GOMAXPROCS:
// the work is serial. It panics if ld < t or a slice is too short.
func GramCols(t int, v []float32, k, ld int, g []float32) {
	if t < 0 || k < 0 || ld < t || len(g) < t*t || (t > 0 && k > 0 && len(v) < (k-1)*ld+t) {
		panic(fmt.Sprintf("kernels: GramCols: %d columns of %d values, leading dimension %d, in %d elements; Gram matrix in %d", t, k, ld, len(v), len(g)))
	}
	if t == 0 {
		return
	}
	if k == 0 || gramColsTile == nil {
		Sgemm(true, false, t, t, k, 1, v, ld, v, ld, 0, g, t)
		return
	}
	const side, sq = 16, 16 * 16
	nt := ceilDiv(t, side)
	tiles := nt * (nt + 1) / 2 * sq
	inPlace := ld >= nt*side && len(v) >= (k-1)*ld+nt*side
	pad := 0
	if !inPlace {
		pad = k * nt * side
	}
	buf := getGramScratch(tiles + pad)
	defer gramScratch.Put(buf)
	tile := (*buf)[:tiles]
	if inPlace {
		gramColsTiles(nt, v, k, ld, tile)
	} else {
		vt := (*buf)[tiles:]
		for p := range k {
			d := vt[p*nt*side : (p+1)*nt*side]
			clear(d[copy(d, v[p*ld:p*ld+t]):])
		}
		gramColsTiles(nt, vt, k, nt*side, tile)
	}
	// The tiles' layout (gramCols): the nt diagonal tiles, then the
	// others by rows.
	put := func(i, j int, c []float32) {
		for r := range min(side, t-i*side) {
			row := (i*side + r) * t
			copy(g[row+j*side:row+min(t, (j+1)*side)], c[r*side:(r+1)*side])
		}
	}
	off := nt * sq
	for i := range nt {
		put(i, i, tile[i*sq:(i+1)*sq])
		for j := i + 1; j < nt; j++ {
			put(i, j, tile[off:off+sq])
			off += sq
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

// gramScratch pools GramDot's buffers (tiles and padded operands).
var gramScratch sync.Pool

func getGramScratch(n int) *[]float32 {
	p, _ := gramScratch.Get().(*[]float32)
	if p == nil {
		p = new([]float32)
	}
	*p = grow(*p, n)
	return p
}
