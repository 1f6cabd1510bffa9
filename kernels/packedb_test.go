package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestSgemmPacked checks products over leading blocks of a packed op(B)
// against a float64 triple loop (checkAgainstNaive) and, bit for bit,
// against Sgemm with the same block, for every micro-kernel: blocks that
// end inside a kc slice or a panel, several slices of K (k > kc) and
// several row blocks (m > mc), both layouts of B, A transposed, scaled
// (packed) and in place, and the products too small to pack.
func TestSgemmPacked(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	type block struct{ m, n, k int }
	for _, kern := range available {
		for _, tc := range []struct {
			packK, packN int // the packed op(B)
			blocks       []block
		}{
			{64, 1024, []block{{64, 64, 64}, {64, 576, 64}, {64, 1024, 64}, {37, 1000, 64}, {5, 17, 63}}},
			{1024, 64, []block{{64, 64, 64}, {64, 64, 320}, {64, 64, 1024}, {64, 57, 700}, {300, 64, 513}}},
			{600, 90, []block{{200, 90, 600}, {150, 33, 257}, {7, 5, 3}, {3, 2, 1}}},
		} {
			for _, transB := range []bool{false, true} {
				for _, transA := range []bool{false, true} {
					for _, alpha := range []float32{1, 0.125} {
						name := fmt.Sprintf("%s/B=%dx%d,tB=%v,tA=%v,α=%v", kern.name, tc.packK, tc.packN, transB, transA, alpha)
						full := gemmCase{transB: transB, m: 1, n: tc.packN, k: tc.packK, pad: 3}
						_, _, b, ldb, _, _ := full.operands(r)
						var p PackedB
						p.pack(kern, transB, tc.packK, tc.packN, b, ldb)
						for i, bl := range tc.blocks {
							g := gemmCase{transA: transA, transB: transB, m: bl.m, n: bl.n, k: bl.k, alpha: alpha, beta: []float32{0, 1, -0.5}[i%3], pad: i % 2}
							a, lda, _, _, c, ldc := g.operands(r)
							want := append([]float32(nil), c...)
							sgemm(kern, 1, transA, transB, g.m, g.n, g.k, alpha, a, lda, b, ldb, g.beta, want, ldc)
							got := append([]float32(nil), c...)
							SgemmPacked(transA, g.m, g.n, g.k, alpha, a, lda, &p, g.beta, got, ldc)
							checkAgainstNaive(t, g, a, lda, b, ldb, c, got, ldc)
							sameBits(t, fmt.Sprintf("%s %v", name, g), got, want)
						}
					}
				}
			}
		}
	}
}

func TestSgemmPackedPanics(t *testing.T) {
	b := make([]float32, 64*32)
	var p PackedB
	p.Pack(false, 64, 32, b, 32)
	c := make([]float32, 64*64)
	for name, f := range map[string]func(){
		"k beyond the packing": func() { SgemmPacked(false, 2, 32, 65, 1, c, 65, &p, 0, c, 32) },
		"n beyond the packing": func() { SgemmPacked(false, 2, 33, 64, 1, c, 64, &p, 0, c, 33) },
		"lda too small":        func() { SgemmPacked(false, 2, 32, 64, 1, c, 63, &p, 0, c, 32) },
		"B too short":          func() { p.Pack(true, 64, 32, b[:100], 64) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			f()
		})
	}
}

// BenchmarkCausalBlocks times one attention job's products over causal
// blocks of 64 query rows at T = 1024 and a head of 64 features (the GPT
// 4×256 at block size 1024), q, k and v read from a [T, 768] buffer:
// the scores q·kᵀ (op(B) = kᵀ) and the output p·v (op(B) = v), with op(B)
// packed by every Sgemm call ("sgemm") or once for all blocks ("packed").
func BenchmarkCausalBlocks(b *testing.B) {
	const t, hd, ld = 1024, 64, 768
	r := rand.New(rand.NewPCG(5, 6))
	qkv, p, out := make([]float32, t*ld), make([]float32, t*t), make([]float32, t*ld)
	for i := range qkv {
		qkv[i] = float32(r.NormFloat64())
	}
	for i := range p {
		p[i] = float32(r.Float64())
	}
	q, k := qkv, qkv[256:]
	for _, s := range []struct {
		name   string
		transB bool
	}{{"scores", true}, {"pv", false}} {
		// scores: [r1-r0, r1] = q·kᵀ over hd; pv: [r1-r0, hd] = p·v over r1.
		run := func(r0, r1 int, pb *PackedB) {
			if s.transB {
				if pb == nil {
					Sgemm(false, true, r1-r0, r1, hd, 1, q[r0*ld:], ld, k, ld, 0, p[r0*t:], t)
					return
				}
				SgemmPacked(false, r1-r0, r1, hd, 1, q[r0*ld:], ld, pb, 0, p[r0*t:], t)
				return
			}
			if pb == nil {
				Sgemm(false, false, r1-r0, hd, r1, 1, p[r0*t:], t, k, ld, 0, out[r0*ld:], ld)
				return
			}
			SgemmPacked(false, r1-r0, hd, r1, 1, p[r0*t:], t, pb, 0, out[r0*ld:], ld)
		}
		flops := 0.0
		for r0 := 0; r0 < t; r0 += 64 {
			flops += 2 * 64 * float64(r0+64) * hd
		}
		b.Run(s.name+"/sgemm", func(b *testing.B) {
			for b.Loop() {
				for r0 := 0; r0 < t; r0 += 64 {
					run(r0, r0+64, nil)
				}
			}
			reportGFLOPs(b, flops)
		})
		b.Run(s.name+"/packed", func(b *testing.B) {
			var pb PackedB
			for b.Loop() {
				if s.transB {
					pb.Pack(true, hd, t, k, ld)
				} else {
					pb.Pack(false, t, hd, k, ld)
				}
				for r0 := 0; r0 < t; r0 += 64 {
					run(r0, r0+64, &pb)
				}
			}
			reportGFLOPs(b, flops)
		})
	}
}

// TestSgemmUpper checks products whose op(A) is zero below its diagonal
// against a float64 triple loop and, bit for bit, against Sgemm with beta
// 0 over the whole of K, for every micro-kernel: several row blocks and kc
// slices (so that slices are skipped), both layouts of A and B, scaled A,
// NaN in C (overwritten), more columns than an nc block (bits only) and
// shapes too small to skip anything.
func TestSgemmUpper(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for _, kern := range available {
		for i, s := range [][3]int{{1024, 64, 1024}, {700, 37, 900}, {300, 20, 260}, {100, 64, 100}, {5, 3, 7}, {300, 4100, 300}} {
			for tr := range 4 {
				g := gemmCase{transA: tr&1 != 0, transB: tr&2 != 0, m: s[0], n: s[1], k: s[2], alpha: []float32{1, 0.125}[(i+tr)%2], pad: (i + tr) % 3}
				a, lda, b, ldb, c, ldc := g.operands(r)
				for row := range g.m {
					for p := range min(row, g.k) { // op(A)[row, p] = 0 below the diagonal
						if g.transA {
							a[p*lda+row] = 0
						} else {
							a[row*lda+p] = 0
						}
					}
				}
				want := append([]float32(nil), c...)
				sgemm(kern, 1, g.transA, g.transB, g.m, g.n, g.k, g.alpha, a, lda, b, ldb, 0, want, ldc)
				got := append([]float32(nil), c...)
				sgemmUpper(kern, g.transA, g.transB, g.m, g.n, g.k, g.alpha, a, lda, b, ldb, got, ldc)
				if g.m*g.n*g.k <= 1<<26 { // the loop's time bounds the shapes it checks
					checkAgainstNaive(t, g, a, lda, b, ldb, c, got, ldc)
				}
				sameBits(t, fmt.Sprintf("%s %v", kern.name, g), got, want)
			}
		}
	}
}
