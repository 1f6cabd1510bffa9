//go:build !purego

package kernels

// gramRowsNEON computes c[16t+4j+i] = Σ_{p<4k+tail} a[i·ld+p]·b[(4t+j)·ld+p]
// for i, j < 4 and t < n, adding the sums into c when acc is set
// (gram_arm64.s).
//
//go:noescape
func gramRowsNEON(k int, a, b *float32, ld, tail int, c *float32, n int, acc bool)

// GramDot's tile kernels, nil where the micro-kernel in use has none: with
// NEON the rows kernel, over the first k values of rows 0..3 of a and rows
// 4t..4t+3 of b [4n,ld] for t < n; vectors held as columns are formed by
// Sgemm.
var (
	gramRowsTile = func() gramRowsTileFunc {
		if best != neon {
			return nil
		}
		return func(k int, a, b []float32, ld int, c []float32, n int, acc bool) {
			_, _, _ = a[3*ld+k-1], b[(4*n-1)*ld+k-1], c[16*n-1] // the extent the assembly touches
			gramRowsNEON(k/4, &a[0], &b[0], ld, k%4, &c[0], n, acc)
		}
	}()
	gramRowsSweep gramRowsSweepFunc
	gramColsTile  gramColsTileFunc
)
