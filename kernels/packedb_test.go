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

// BenchmarkCausalAttention times one attention job's products at T = 1024
// and a head of 64 features (the GPT 4×256 at block size 1024), q, k and v
// read from a [T, 768] buffer. Over causal blocks of 64 query rows: the
// scores q·kᵀ (op(B) = kᵀ) and the output p·v (op(B) = v), op(B) packed by
// every Sgemm call ("sgemm") or once for all blocks ("packed"). Whole: the
// value gradient pᵀ·dy with the probabilities p lower triangular, by Sgemm
// or by SgemmUpper ("upper"); the rate counts the whole product's flops.
func BenchmarkCausalAttention(b *testing.B) {
	const t, hd, ld = 1024, 64, 768
	r := rand.New(rand.NewPCG(5, 6))
	qkv, p, out := make([]float32, t*ld), make([]float32, t*t), make([]float32, t*ld)
	for i := range qkv {
		qkv[i] = float32(r.NormFloat64())
	}
	for i := range t {
		for j := range i + 1 {
			p[i*t+j] = float32(r.Float64())
		}
	}
	q, k := qkv, qkv[256:]
	var blockFlops float64
	for r0 := 0; r0 < t; r0 += 64 {
		blockFlops += 2 * 64 * float64(r0+64) * hd
	}
	var pb PackedB
	for _, c := range []struct {
		name  string
		flops float64
		run   func()
	}{
		{"scores/sgemm", blockFlops, func() {
			for r0 := 0; r0 < t; r0 += 64 {
				Sgemm(false, true, 64, r0+64, hd, 1, q[r0*ld:], ld, k, ld, 0, p[r0*t:], t)
			}
		}},
		{"scores/packed", blockFlops, func() {
			pb.Pack(true, hd, t, k, ld)
			for r0 := 0; r0 < t; r0 += 64 {
				SgemmPacked(false, 64, r0+64, hd, 1, q[r0*ld:], ld, &pb, 0, p[r0*t:], t)
			}
		}},
		{"pv/sgemm", blockFlops, func() {
			for r0 := 0; r0 < t; r0 += 64 {
				Sgemm(false, false, 64, hd, r0+64, 1, p[r0*t:], t, k, ld, 0, out[r0*ld:], ld)
			}
		}},
		{"pv/packed", blockFlops, func() {
			pb.Pack(false, t, hd, k, ld)
			for r0 := 0; r0 < t; r0 += 64 {
				SgemmPacked(false, 64, hd, r0+64, 1, p[r0*t:], t, &pb, 0, out[r0*ld:], ld)
			}
		}},
		{"ptdy/sgemm", 2 * t * hd * t, func() { Sgemm(true, false, t, hd, t, 1, p, t, q, ld, 0, out, ld) }},
		{"ptdy/upper", 2 * t * hd * t, func() { SgemmUpper(true, false, t, hd, t, 1, p, t, q, ld, out, ld) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				c.run()
			}
			reportGFLOPs(b, c.flops)
		})
	}
}
