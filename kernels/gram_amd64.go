//go:build !purego

package kernels

// gramTileAVX512 computes c[r·16+j] = Σ_{p<k} a[p·ld+r]·b[p·ld+j] for r, j <
// 16, adding the sum into c when acc is set (gram_amd64.s).
//
//go:noescape
func gramTileAVX512(k int, a, b *float32, ld int, c *float32, acc bool)

// gramTile is GramDot's tile kernel, nil where the micro-kernel in use has
// none: one 16×16 tile of a Gram matrix from column blocks a and b of the
// transposed operand [k][ld].
var gramTile = gramTileFor(best)

func gramTileFor(kern *microKernel) func(k int, a, b []float32, ld int, c []float32, acc bool) {
	if kern != avx512 {
		return nil
	}
	return func(k int, a, b []float32, ld int, c []float32, acc bool) {
		_, _, _ = a[(k-1)*ld+gramSize-1], b[(k-1)*ld+gramSize-1], c[gramSize*gramSize-1] // the extent the assembly touches
		gramTileAVX512(k, &a[0], &b[0], ld, &c[0], acc)
	}
}
