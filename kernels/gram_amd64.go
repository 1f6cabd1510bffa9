//go:build !purego

package kernels

// gramColsAVX512 computes c[16r+j] = Σ_{p<k} a[p·ld+r]·b[p·ld+j] for r, j <
// 16, adding the sum into c when acc is set (gram_amd64.s).
//
//go:noescape
func gramColsAVX512(k int, a, b *float32, ld int, c *float32, acc bool)

// gramRowsAVX512 computes c[16t+4j+i] = Σ_{p<16k+tail}
// a[i·ld+p]·b[(4t+j)·ld+p] for i, j < 4 and t < n, adding the sums into c
// when acc is set (gram_amd64.s).
//
//go:noescape
func gramRowsAVX512(k int, a, b *float32, ld, tail int, c *float32, n int, acc bool)

// gramColsAVX2 is gramColsAVX512 on AVX2, bit-identical to it
// (gram_amd64.s).
//
//go:noescape
func gramColsAVX2(k int, a, b *float32, ld int, c *float32, acc bool)

// gramSweepAVX2 forms one column of gramRows' 4×4 tiles on AVX2, its sums
// added 8 lanes wide, not 16 as gramRowsAVX512's, so they round
// differently (gram_amd64.s).
//
//go:noescape
func gramSweepAVX2(k int, a, b *float32, ld, tail int, c *float32, cstep, n int, cdiag *float32, acc bool, pf, pfn int)

// GramDot's kernels, nil where the micro-kernel in use has none (gram.go
// has their contracts): AVX-512 forms rows of row tiles, AVX2 columns.
var gramRowsTile, gramRowsSweep, gramColsTile = gramTiles(best)

func gramTiles(kern *microKernel) (rows gramRowsTileFunc, sweep gramRowsSweepFunc, cols gramColsTileFunc) {
	colsAsm := gramColsAVX512
	switch kern {
	case avx512:
		rows = func(k int, a, b []float32, ld int, c []float32, n int, acc bool) {
			_, _, _ = a[3*ld+k-1], b[(4*n-1)*ld+k-1], c[16*n-1] // the extent the assembly touches
			gramRowsAVX512(k/16, &a[0], &b[0], ld, k%16, &c[0], n, acc)
		}
	case avx2:
		colsAsm = gramColsAVX2
		sweep = func(k int, a, b []float32, ld int, g []float32, j, nt int, acc, next bool) {
			// Tile (i, j), i < j, lies at 16·(nt + i(nt−1) − i(i−1)/2 + j−i−1).
			off, last := 0, 0
			if j > 0 {
				off = 16 * (nt + j - 1)
				last = 16 * (nt + (j-1)*(nt-1) - (j-1)*(j-2)/2)
				_ = a[(4*j-1)*ld+k-1]
			}
			_, _, _ = b[3*ld+k-1], g[16*j+15], g[last+15] // the extent the assembly touches
			pf := 0
			if next {
				pf = 4 * ld * 4
			}
			gramSweepAVX2(k/8, &a[0], &b[0], ld, k%8, &g[off], 64*(nt-2), j, &g[16*j], acc, pf, pf)
		}
	default:
		return nil, nil, nil
	}
	cols = func(k int, a, b []float32, ld int, c []float32, acc bool) {
		_, _, _ = a[(k-1)*ld+15], b[(k-1)*ld+15], c[255] // the extent the assembly touches
		colsAsm(k, &a[0], &b[0], ld, &c[0], acc)
	}
	return rows, sweep, cols
}
