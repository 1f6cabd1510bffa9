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

// gramRowsAVX2 is gramRowsAVX512 over 8k+tail values, tail < 8, on AVX2
// (gram_amd64.s): its sums are added 8 lanes wide, not 16, so they round
// differently.
//
//go:noescape
func gramRowsAVX2(k int, a, b *float32, ld, tail int, c *float32, n int, acc bool)

// GramDot's tile kernels, nil where the micro-kernel in use has none. Over
// the first k values of each vector, gramRowsTile forms n 4×4 tiles (stored
// transposed, one after the other in c) from rows 0..3 of a and rows 4t..4t+3
// of b [4n,ld]; gramColsTile a 16×16 tile from columns 0..15 of a and of b
// [k,ld]. Both add into c when acc is set.
var gramRowsTile, gramColsTile = gramTiles(best)

func gramTiles(kern *microKernel) (rows func(k int, a, b []float32, ld int, c []float32, n int, acc bool), cols func(k int, a, b []float32, ld int, c []float32, acc bool)) {
	var (
		rowsAsm = gramRowsAVX512
		colsAsm = gramColsAVX512
		step    = 16 // values of each row a step of rowsAsm
	)
	switch kern {
	case avx512:
	case avx2:
		rowsAsm, colsAsm, step = gramRowsAVX2, gramColsAVX2, 8
	default:
		return nil, nil
	}
	rows = func(k int, a, b []float32, ld int, c []float32, n int, acc bool) {
		_, _, _ = a[3*ld+k-1], b[(4*n-1)*ld+k-1], c[16*n-1] // the extent the assembly touches
		rowsAsm(k/step, &a[0], &b[0], ld, k%step, &c[0], n, acc)
	}
	cols = func(k int, a, b []float32, ld int, c []float32, acc bool) {
		_, _, _ = a[(k-1)*ld+15], b[(k-1)*ld+15], c[255] // the extent the assembly touches
		colsAsm(k, &a[0], &b[0], ld, &c[0], acc)
	}
	return rows, cols
}
