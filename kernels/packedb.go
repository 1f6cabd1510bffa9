package kernels

import "fmt"

// PackedB is the op(B) operand of several products packed once, for
// SgemmPacked: the causal attention's blocks of query rows multiply by
// leading blocks of one key or value matrix (the first r1 of its rows or
// columns for the block that ends at row r1), and Sgemm packed that
// leading block again for every call — about t/128 times the whole
// operand for t positions in blocks of 64 rows.
//
// The packing is the one Sgemm makes: kc-deep slices of K one after the
// other, each holding the nr-column panels of all n columns, the last
// panel padded with zeros. A product over the leading k′×n′ block reads the
// first n′ columns' panels of its first slices, each for its first steps,
// which hold the values packing that block alone would have written, so
// its result is bit-identical to Sgemm's.
//
// The zero value is empty; Pack fills it, reusing its buffer.
type PackedB struct {
	kern   *microKernel
	trans  bool
	b      []float32 // the operand, for products too small to pack
	ldb    int
	k, n   int
	panels []float32
}

// Pack packs op(B), k×n (B stored k×n with leading dimension ldb, or n×k
// when transB), for the micro-kernel in use. It keeps b for the products
// SgemmPacked computes without packing, so b must not change while p is in
// use. It panics as Sgemm does on a negative size, a leading dimension too
// small or a slice too short.
func (p *PackedB) Pack(transB bool, k, n int, b []float32, ldb int) {
	checkMatrix("B", transB, k, n, b, ldb)
	p.pack(best, transB, k, n, b, ldb)
}

// pack is Pack for the micro-kernel kern (tests pin it).
func (p *PackedB) pack(kern *microKernel, transB bool, k, n int, b []float32, ldb int) {
	if k < 0 || n < 0 {
		panic(fmt.Sprintf("kernels: PackedB.Pack: negative size k=%d n=%d", k, n))
	}
	p.kern, p.trans, p.b, p.ldb, p.k, p.n = kern, transB, b, ldb, k, n
	np := roundUp(n, kern.nr)
	p.panels = grow(p.panels, np*k)
	if n == 0 {
		return
	}
	for pc := 0; pc < k; pc += kern.kc {
		kern.packB(transB, b, ldb, pc, min(kern.kc, k-pc), 0, n, p.panels[pc*np:])
	}
}

// SgemmPacked computes C = alpha·op(A)·B′ + beta·C, where B′ is the leading
// k×n block of the op(B) that p packed (k and n at most Pack's): the same
// bits as Sgemm with that block of B, without packing it again. It runs on
// the calling goroutine — it is for products that callers already run in
// parallel, such as the attention's (sample, head) jobs — and panics as
// Sgemm does, or if the block is larger than what p packed.
func SgemmPacked(transA bool, m, n, k int, alpha float32, a []float32, lda int, p *PackedB, beta float32, c []float32, ldc int) {
	if k > p.k || n > p.n {
		panic(fmt.Sprintf("kernels: SgemmPacked: %d×%d block of a packed %d×%d operand", k, n, p.k, p.n))
	}
	checkGemm(transA, p.trans, m, n, k, a, lda, p.b, p.ldb, c, ldc)
	kern := p.kern
	if sgemmShort(transA, p.trans, m, n, k, alpha, a, lda, p.b, p.ldb, beta, c, ldc) {
		return
	}
	ws := getWorkspace(kern, 0)
	np := roundUp(p.n, kern.nr)
	// Every tile of C gets gemmSerial's operations: the slices of K in
	// order, each from the same packed values of A and B.
	for pc := 0; pc < k; pc += kern.kc {
		kc := min(kern.kc, k-pc)
		bet := beta
		if pc > 0 {
			bet = 1
		}
		depth := min(kern.kc, p.k-pc) // the depth of p's slice
		for ic := 0; ic < m; ic += kern.mc {
			mc := min(kern.mc, m-ic)
			pa := kern.blockA(nil, transA, a, lda, m, ic, mc, pc, kc, alpha, ws.a, false)
			macroKernel(kern, pa, p.panels[pc*np:], depth, ws.t, mc, n, kc, bet, c[ic*ldc:], ldc)
		}
	}
	workspaces.Put(ws)
}

// SgemmUpper computes C = alpha·op(A)·op(B) for an op(A) that is zero below
// its diagonal (op(A)[i, p] = 0 for p < i: the transposed probabilities,
// or score gradients, of causal attention, in dV = Pᵀ·dY and dK = dSᵀ·Q),
// on the calling goroutine, overwriting C as Sgemm with beta 0 does. A
// block of rows of C starting at row i skips the kc slices of K that end
// at or before i, whose terms are all of that zero part: a third of the
// packing and the arithmetic of a 1024×1024 op(A) (12 of 32 pairs of row
// block and slice with AVX2, 6 of 20 with AVX-512).
//
// The skipped slices add nothing but exact zeros: the micro-kernels sum
// each slice from +0 and a sum of products of +0 with finite values is +0,
// so the first slice kept, written over C, gives the value C held after the
// skipped ones and that slice in Sgemm. The result is bit-identical to
// Sgemm's but where op(B) holds Inf or NaN in the skipped rows, which
// Sgemm multiplies by the zeros into NaN. It panics as Sgemm does.
func SgemmUpper(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	checkGemm(transA, transB, m, n, k, a, lda, b, ldb, c, ldc)
	sgemmUpper(best, transA, transB, m, n, k, alpha, a, lda, b, ldb, c, ldc)
}

// sgemmUpper is SgemmUpper with an explicit micro-kernel (tests pin it).
func sgemmUpper(kern *microKernel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	if m <= kern.mc || m*n*k <= smallWork || alpha == 0 || k == 0 || n == 0 {
		sgemm(kern, 1, transA, transB, m, n, k, alpha, a, lda, b, ldb, 0, c, ldc)
		return
	}
	ws := getWorkspace(kern, n)
	// gemmSerial's loops (n within one nc block or not), each block of
	// rows starting at its first slice that reaches its diagonal.
	for jc := 0; jc < n; jc += kern.nc {
		nc := min(kern.nc, n-jc)
		for pc := 0; pc < k; pc += kern.kc {
			kc := min(kern.kc, k-pc)
			packed := false
			for ic := 0; ic < m; ic += kern.mc {
				start := ic / kern.kc * kern.kc // the block's first slice kept
				if start > pc {
					break
				}
				if !packed {
					kern.packB(transB, b, ldb, pc, kc, jc, nc, ws.b)
					packed = true
				}
				bet := float32(1)
				if pc == start {
					bet = 0
				}
				mc := min(kern.mc, m-ic)
				pa := kern.blockA(nil, transA, a, lda, m, ic, mc, pc, kc, alpha, ws.a, false)
				macroKernel(kern, pa, ws.b, kc, ws.t, mc, nc, kc, bet, c[ic*ldc+jc:], ldc)
			}
		}
	}
	workspaces.Put(ws)
}
