package kernels

import (
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"
)

// TestSgemmEach checks every product against a lone Sgemm, bit for bit, at
// several GOMAXPROCS, with B_i written by operands just before its product
// (as an unfolded image is) and C_i read by done just after it, into
// per-goroutine scratch: products shared out whole, split inside (large
// products in a small batch), small ones and a batch of one.
func TestSgemmEach(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, tc := range []struct {
		g     gemmCase
		batch int
	}{
		{gemmCase{m: 64, n: 100, k: 27, alpha: 1}, 9},                            // conv1-like, shared out whole
		{gemmCase{transA: true, m: 300, n: 64, k: 40, alpha: 1}, 7},              // column gradients
		{gemmCase{m: 5, n: 7, k: 3, alpha: 2, beta: 0.5, pad: 2}, 5},             // below smallWork
		{gemmCase{transB: true, m: 700, n: 200, k: 130, alpha: 1, beta: 1}, 3},   // ≥ batchSplitWork: split
		{gemmCase{transA: true, transB: true, m: 50, n: 60, k: 70, alpha: 1}, 1}, // one product
	} {
		g := tc.g
		a, lda, _, ldb, c0, ldc := g.operands(r)
		bs := make([][]float32, tc.batch)
		cs := make([][]float32, tc.batch)
		for i := range bs {
			_, _, bs[i], _, cs[i], _ = g.operands(r)
		}
		want := make([][]float32, tc.batch)
		for i := range want {
			want[i] = append([]float32(nil), cs[i]...)
			Sgemm(g.transA, g.transB, g.m, g.n, g.k, g.alpha, a, lda, bs[i], ldb, g.beta, want[i], ldc)
		}
		for _, procs := range []int{1, 2, 3} {
			func() {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				bScratch := make([][]float32, procs)
				cScratch := make([][]float32, procs)
				for w := range procs {
					bScratch[w] = make([]float32, len(bs[0]))
					cScratch[w] = make([]float32, len(c0))
				}
				got := make([][]float32, tc.batch)
				var calls, badSlot atomic.Int32
				SgemmEach(g.transA, g.transB, g.m, g.n, g.k, g.alpha, a, lda, ldb, g.beta, ldc, tc.batch,
					func(w, i int) ([]float32, []float32) {
						if w >= min(procs, tc.batch) {
							badSlot.Add(1)
						}
						copy(bScratch[w], bs[i])
						copy(cScratch[w], cs[i])
						return bScratch[w], cScratch[w]
					},
					func(w, i int) {
						calls.Add(1)
						got[i] = append([]float32(nil), cScratch[w]...)
					})
				if badSlot.Load() != 0 {
					t.Fatalf("%v: a goroutine slot at or above min(GOMAXPROCS, batch)", g)
				}
				if n := int(calls.Load()); n != tc.batch {
					t.Fatalf("%v: done called %d times for %d products", g, n, tc.batch)
				}
				for i := range want {
					if !bitsEqual(got[i], want[i]) {
						t.Errorf("%v, batch %d, GOMAXPROCS %d: product %d differs from a lone Sgemm", g, tc.batch, procs, i)
					}
				}
			}()
		}
	}
}

// TestSgemmEachOwn checks SgemmEachOwn as TestSgemmEach does SgemmEach, with
// a different A_i for every product, handed out by operands.
func TestSgemmEachOwn(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for _, tc := range []struct {
		g     gemmCase
		batch int
	}{
		{gemmCase{transB: true, m: 64, n: 27, k: 100, alpha: 1}, 9},            // conv1's per-sample weight gradients
		{gemmCase{m: 5, n: 7, k: 3, alpha: 2, beta: 0.5, pad: 2}, 5},           // below smallWork
		{gemmCase{transB: true, m: 700, n: 200, k: 130, alpha: 1, beta: 1}, 3}, // ≥ batchSplitWork: split
		{gemmCase{transA: true, m: 50, n: 60, k: 70, alpha: 1}, 1},             // one product
	} {
		g := tc.g
		as := make([][]float32, tc.batch)
		bs := make([][]float32, tc.batch)
		cs := make([][]float32, tc.batch)
		var lda, ldb, ldc int
		for i := range bs {
			as[i], lda, bs[i], ldb, cs[i], ldc = g.operands(r)
		}
		want := make([][]float32, tc.batch)
		for i := range want {
			want[i] = append([]float32(nil), cs[i]...)
			Sgemm(g.transA, g.transB, g.m, g.n, g.k, g.alpha, as[i], lda, bs[i], ldb, g.beta, want[i], ldc)
		}
		for _, procs := range []int{1, 2, 3} {
			func() {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				got := make([][]float32, tc.batch)
				for i := range got {
					got[i] = append([]float32(nil), cs[i]...)
				}
				var calls, early atomic.Int32
				SgemmEachOwn(g.transA, g.transB, g.m, g.n, g.k, g.alpha, lda, ldb, g.beta, ldc, tc.batch,
					func(w, i int) ([]float32, []float32, []float32) { return as[i], bs[i], got[i] },
					func(w, i int) {
						calls.Add(1)
						if !bitsEqual(got[i], want[i]) {
							early.Add(1) // done before its product was complete
						}
					})
				if n := int(calls.Load()); n != tc.batch || early.Load() != 0 {
					t.Fatalf("%v: done called %d times for %d products, %d before the product", g, n, tc.batch, early.Load())
				}
				for i := range want {
					if !bitsEqual(got[i], want[i]) {
						t.Errorf("%v, batch %d, GOMAXPROCS %d: product %d differs from a lone Sgemm", g, tc.batch, procs, i)
					}
				}
			}()
		}
	}
}
