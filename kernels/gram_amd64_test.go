//go:build !purego

package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestGramTiles checks the tile kernels of every micro-kernel this CPU runs
// (AVX-512 and AVX2 on an AVX-512 machine) against sums in float64, for
// every tail of the row kernels' steps (k 1 … 33) and longer rows, adding
// into tiles and not, and that the column kernels agree to the bit.
func TestGramTiles(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	same := correlated(r, true, 16, 300, 0) // for the column kernels' bits
	var cols0 []float32                     // the first kernel's column tile
	for _, kern := range available {
		rows, cols := gramTiles(kern)
		if rows == nil {
			continue
		}
		for _, k := range []int{1, 2, 3, 7, 8, 9, 15, 16, 17, 24, 31, 33, 100, 384} {
			for _, acc := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/k=%d/acc=%v", kern.name, k, acc), func(t *testing.T) {
					const n, ld = 3, 400 // rows of b: 4n
					a := correlated(r, false, 4, ld, 0)
					b := correlated(r, false, 4*n, ld, 0)
					c := make([]float32, 16*n)
					for i := range c {
						c[i] = float32(i)
					}
					rows(k, a, b, ld, c, n, acc)
					for tt := range n {
						for j := range 4 {
							for i := range 4 {
								var want, mag float64
								if acc {
									want = float64(16*tt + 4*j + i)
								}
								for p := range k {
									x := float64(a[i*ld+p]) * float64(b[(4*tt+j)*ld+p])
									want += x
									mag += math.Abs(x)
								}
								if got := float64(c[16*tt+4*j+i]); !(math.Abs(got-want) <= 1e-5*(mag+math.Abs(want))) {
									t.Fatalf("rows: tile %d (%d,%d) = %.9g, want %.9g", tt, i, j, got, want)
								}
							}
						}
					}
					// Columns: 16 of a and of b, in rows of ld values.
					a = correlated(r, true, ld, k, 0)
					b = correlated(r, true, ld, k, 0)
					c = make([]float32, 256)
					for i := range c {
						c[i] = float32(i)
					}
					cols(k, a, b, ld, c, acc)
					for i := range 16 {
						for j := range 16 {
							var want, mag float64
							if acc {
								want = float64(16*i + j)
							}
							for p := range k {
								x := float64(a[p*ld+i]) * float64(b[p*ld+j])
								want += x
								mag += math.Abs(x)
							}
							if got := float64(c[16*i+j]); !(math.Abs(got-want) <= 1e-5*(mag+math.Abs(want))) {
								t.Fatalf("cols: (%d,%d) = %.9g, want %.9g", i, j, got, want)
							}
						}
					}
				})
			}
		}
		// The column kernels' sums, added in the same order, agree to the bit.
		c := make([]float32, 256)
		cols(300, same, same, 16, c, false)
		if cols0 == nil {
			cols0 = c
		} else if !slices.Equal(c, cols0) {
			t.Errorf("%s: column tile differs from %s's", kern.name, available[0].name)
		}
	}
}
