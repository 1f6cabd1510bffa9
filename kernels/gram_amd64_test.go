//go:build !purego

package kernels

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestGramTiles checks the tile kernels of every micro-kernel this CPU runs
// (AVX-512 and AVX2 on an AVX-512 machine) against sums in float64, for
// every tail of the row kernels' steps (k 1 … 33) and longer rows, adding
// into tiles and not, the AVX2 column sweep also bit for bit against
// sum8 (its order of additions), and that the column kernels agree to the
// bit.
func TestGramTiles(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	same := correlated(r, true, 16, 300, 0) // for the column kernels' bits
	var cols0 []float32                     // the first kernel's column tile
	for _, kern := range available {
		rows, sweep, cols := gramTiles(kern)
		if cols == nil {
			continue
		}
		for _, k := range []int{1, 2, 3, 7, 8, 9, 15, 16, 17, 24, 31, 33, 100, 384} {
			for _, acc := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/k=%d/acc=%v", kern.name, k, acc), func(t *testing.T) {
					if sweep != nil {
						checkSweep(t, r, sweep, k, acc)
					}
					if rows == nil {
						return
					}
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
				})
				t.Run(fmt.Sprintf("%s/cols/k=%d/acc=%v", kern.name, k, acc), func(t *testing.T) {
					// 16 columns of a and of b, in rows of ld values.
					const ld = 400
					a := correlated(r, true, ld, k, 0)
					b := correlated(r, true, ld, k, 0)
					c := make([]float32, 256)
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

// checkSweep checks a column sweep (gramRowsSweep) on the 4×4 tiles of the
// Gram matrix of 12 rows (3 blocks) of k values, in rows of 400: every
// column j, adding into tiles that hold their index (acc) or not, against
// sums in float64 and against sum8 bit for bit; the tiles of other columns
// and the floats past the layout must stay as they were.
func checkSweep(t *testing.T, r *rand.Rand, sweep gramRowsSweepFunc, k int, acc bool) {
	const nt, ld = 3, 400
	x := correlated(r, false, 4*nt+4, ld, 0) // a block of rows past the last: fetched, never read
	n := nt * (nt + 1) / 2 * 16
	pos := func(i, j int) int { // tile (i, j)'s place: diagonal first, then by rows
		if i == j {
			return 16 * i
		}
		p := 16 * nt
		for ii := range i {
			p += 16 * (nt - 1 - ii)
		}
		return p + 16*(j-i-1)
	}
	for j := range nt {
		g := make([]float32, n+4)
		for i := range g {
			g[i] = float32(i)
		}
		sweep(k, x, x[4*j*ld:], ld, g[:n], j, nt, acc, true)
		for i := range nt {
			for c := range 16 {
				at := pos(i, j) + c
				rr, ss := 4*i+c%4, 4*j+c/4 // entry (rr, ss): rows rr and ss
				if i > j {
					if g[at] != float32(at) {
						t.Fatalf("column %d: tile (%d,%d) written", j, i, j)
					}
					continue
				}
				var want, mag float64
				bits := sum8(x[rr*ld:rr*ld+k], x[ss*ld:ss*ld+k])
				if acc {
					want, bits = float64(at), float32(at)+bits
				}
				for p := range k {
					v := float64(x[rr*ld+p]) * float64(x[ss*ld+p])
					want += v
					mag += math.Abs(v)
				}
				if got := float64(g[at]); !(math.Abs(got-want) <= 1e-5*(mag+math.Abs(want))) {
					t.Fatalf("column %d: tile (%d,%d) entry (%d,%d) = %.9g, want %.9g", j, i, j, rr, ss, got, want)
				}
				if math.Float32bits(g[at]) != math.Float32bits(bits) {
					t.Fatalf("column %d: tile (%d,%d) entry (%d,%d) = %.9g, sum8 %.9g", j, i, j, rr, ss, g[at], bits)
				}
			}
		}
		for i := n; i < len(g); i++ {
			if g[i] != float32(i) {
				t.Fatalf("column %d: wrote past the layout's %d floats", j, n)
			}
		}
	}
}

// sum8 is Σ_p a[p]·b[p] as the AVX2 row kernels add it: 8 float32 lanes,
// lane l taking p ≡ l (mod 8) in order by fused multiply-add, then
// ((l0+l1)+(l2+l3)) + ((l4+l5)+(l6+l7)).
func sum8(a, b []float32) float32 {
	var l [8]float32
	for p := range a {
		l[p%8] = fma32(a[p], b[p], l[p%8])
	}
	return ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]))
}

// fma32 is a·b + c rounded once to float32: the product is exact in
// float64, and big.Float rounds the exact sum to 24 bits (nearest, ties to
// even).
func fma32(a, b, c float32) float32 {
	s := new(big.Float).SetPrec(24).SetMode(big.ToNearestEven)
	s.Add(big.NewFloat(float64(a)*float64(b)), big.NewFloat(float64(c)))
	f, _ := s.Float32()
	return f
}
