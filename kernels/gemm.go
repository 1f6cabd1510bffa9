package kernels

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
)

// Sgemm computes C = alpha·op(A)·op(B) + beta·C, where op(X) is X or Xᵀ as
// transA and transB say, op(A) is m×k, op(B) is k×n and C is m×n. A is stored
// m×k (k×m when transposed) with leading dimension lda, and likewise B and C.
// With beta == 0, C is overwritten and its old contents (even NaN) are ignored.
//
// Sgemm uses up to GOMAXPROCS goroutines. Each element of C is computed by the
// same sequence of floating-point operations whatever the number of
// goroutines, so results are bit-identical for any GOMAXPROCS. It panics if a
// dimension is negative, a leading dimension is too small or a slice is too
// short for the matrix it holds.
func Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	checkGemm(transA, transB, m, n, k, a, lda, b, ldb, c, ldc)
	sgemm(best, runtime.GOMAXPROCS(0), transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// SgemmSqNorm computes C = alpha·op(A)·op(B) as Sgemm does with beta 0,
// element for element, and returns Σ C² accumulated in float64 (SqNorm's
// sums) block by block, each block of C as soon as it is complete, while it
// is in cache: a per-sample gradient and its squared norm without a second
// pass over the gradient from memory. The order of the additions depends
// only on m, n, k and the micro-kernel, not on GOMAXPROCS. The work is
// serial, for callers that spread independent products over goroutines
// themselves. It panics as Sgemm does.
func SgemmSqNorm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) float64 {
	checkGemm(transA, transB, m, n, k, a, lda, b, ldb, c, ldc)
	if sgemmShort(transA, transB, m, n, k, alpha, a, lda, b, ldb, 0, c, ldc) {
		return blockSqNorm(c, m, n, ldc)
	}
	var s float64
	ws := getWorkspace(best, n)
	gemmSerial(best, ws, nil, &s, transA, transB, m, n, k, alpha, a, lda, b, ldb, 0, c, ldc)
	workspaces.Put(ws)
	return s
}

// blockSqNorm returns Σ c² over the rows×cols block of c: one SqNorm of
// the block when its rows are contiguous, else one a row, added in order.
func blockSqNorm(c []float32, rows, cols, ldc int) float64 {
	if rows == 0 || cols == 0 {
		return 0
	}
	if ldc == cols {
		return vec.sqNorm(c[:rows*cols])
	}
	var s float64
	for i := range rows {
		s += vec.sqNorm(c[i*ldc : i*ldc+cols])
	}
	return s
}

// SgemmBatched runs batch independent Sgemm calls; the i-th uses A, B and C
// starting at i·strideA, i·strideB and i·strideC, in order: with strideC 0
// and beta 1 the products accumulate into one C. Small products with
// separate outputs are spread over goroutines whole; others are each
// parallelised as Sgemm does. Either way the results are bit-identical to
// batch sequential Sgemm calls.
func SgemmBatched(transA, transB bool, m, n, k int, alpha float32, a []float32, lda, strideA int, b []float32, ldb, strideB int, beta float32, c []float32, ldc, strideC int, batch int) {
	if batch < 0 || strideA < 0 || strideB < 0 || strideC < 0 {
		panic(fmt.Sprintf("kernels: SgemmBatched: negative batch %d or stride (%d, %d, %d)", batch, strideA, strideB, strideC))
	}
	if batch == 0 {
		return
	}
	// The last product reaches furthest into every slice.
	last := batch - 1
	checkGemm(transA, transB, m, n, k, a[min(len(a), last*strideA):], lda, b[min(len(b), last*strideB):], ldb, c[min(len(c), last*strideC):], ldc)
	threads := runtime.GOMAXPROCS(0)
	// With the weight shared by every product (a convolution over a batch
	// of images), pack it once rather than once per product.
	var pre []float32
	if strideA == 0 && batch > 1 && m*n*k > smallWork {
		buf := getPrepacked(roundUp(m, best.mr) * k)
		defer prepacked.Put(buf)
		pre = *buf
		best.prepackA(transA, a, lda, m, k, alpha, pre)
	}
	one := func(i, threads int) {
		sgemmPre(best, threads, pre, transA, transB, m, n, k, alpha, a[i*strideA:], lda, b[i*strideB:], ldb, beta, c[i*strideC:], ldc)
	}
	// Whole products per goroutine need no synchronisation inside them;
	// a product split among goroutines synchronises twice per kc slice,
	// which on AlexNet's convolutions (64 images, a few hundred µs each)
	// cost more than half of two threads' speed. Only large products in
	// batches too small to share out evenly (fewer than batchShare per
	// goroutine) are split inside. Products whose outputs overlap
	// (strideC 0 accumulates a weight gradient over a batch) must run one
	// after another, in order.
	overlap := strideC < (m-1)*ldc+n
	if strideC == 0 && batch > 1 && accumulateBatched(threads, pre, transA, transB, m, n, k, alpha, a, lda, strideA, b, ldb, strideB, beta, c, ldc, batch) {
		return
	}
	if threads == 1 || batch == 1 || overlap || (m*n*k >= batchSplitWork && batch < batchShare*threads) {
		for i := range batch {
			one(i, threads)
		}
		return
	}
	// Each goroutine takes the next product not yet taken, so one slowed
	// down by another job on its core takes fewer.
	var next atomic.Int64
	parallelFor(min(threads, batch), func() {
		for i := int(next.Add(1)) - 1; i < batch; i = int(next.Add(1)) - 1 {
			one(i, 1)
		}
	})
}

// prepacked pools SgemmBatched's buffers for a shared, packed A.
var prepacked sync.Pool

func getPrepacked(n int) *[]float32 {
	p, _ := prepacked.Get().(*[]float32)
	if p == nil {
		p = new([]float32)
	}
	*p = grow(*p, n)
	return p
}

const (
	// smallWork is the largest m·n·k computed by plain loops: below it,
	// packing costs more than it saves.
	smallWork = 8 * 8 * 8
	// minThreadWork is the least m·n·k worth handing to another goroutine
	// (about 5µs of work at ~50 GMAC/s per core).
	minThreadWork = 1 << 18
	// batchSplitWork is the m·n·k above which SgemmBatched parallelises
	// inside each product rather than across products when the batch is
	// too small to share out (attention products, 256×256×64, fall below
	// it; AlexNet's convolutions 2 to 5 above).
	batchSplitWork = 1 << 24
	// batchShare is how many large products per goroutine make SgemmBatched
	// share out whole products rather than split each one.
	batchShare = 4
	// fusedCols is about how many columns of op(B) gemmSerial packs at a
	// time when C has one block of rows: enough for an untransposed B to be
	// read in runs of 1 KiB rather than one panel's width.
	fusedCols = 256
	// fusedColsT is fusedCols for a transposed B, whose columns are
	// already runs of kc floats: fewer, so that the packed columns (64
	// KiB at kc 256) and the rows of B read for them stay in L2 beside A
	// on a core with 512 KiB of it (256 columns were 256 KiB of each).
	fusedColsT = 64
	// prefetchRows is how many rows ahead the plain packs prefetch.
	prefetchRows = 8
)

// sgemm is Sgemm with an explicit micro-kernel and thread count, so tests can
// pin both. The arguments have been checked.
func sgemm(kern *microKernel, threads int, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	sgemmPre(kern, threads, nil, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// sgemmShort does the products that need no packing, and reports whether
// it did: an empty C, C = beta·C (alpha or k zero) and products small
// enough for sgemmSmall.
func sgemmShort(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) bool {
	switch {
	case m == 0 || n == 0:
	case alpha == 0 || k == 0:
		scaleC(m, n, beta, c, ldc)
	case m*n*k <= smallWork:
		sgemmSmall(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	default:
		return false
	}
	return true
}

// sgemmPre is sgemm taking op(A) already packed by prepackA when pre is not
// nil; a and lda are then only used by the small-product path.
func sgemmPre(kern *microKernel, threads int, pre []float32, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if sgemmShort(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) {
		return
	}
	if workers := min(threads, m*n*k/minThreadWork); workers > 1 && gemmParallel(kern, workers, pre, nil, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) {
		return
	}
	ws := getWorkspace(kern, n)
	gemmSerial(kern, ws, pre, nil, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	workspaces.Put(ws)
}

// offset is where row or column i of a stored operand begins: row i of an
// untransposed A (i·ld), column i of a transposed one (i).
func offset(trans bool, i, ld int) int {
	if trans {
		return i
	}
	return i * ld
}

// gemmSerial is the blocked algorithm of Goto and van de Geijn (BLIS loop
// order): for each nc-wide block of columns and kc-deep slice of K, pack that
// kc×nc block of op(B) once (it stays in L3/L2), then for each mc-tall block
// of rows pack op(A)'s mc×kc block (it stays in L2, scaled by alpha) and sweep
// the micro-kernel over it. Packing makes both operands contiguous in the
// order the micro-kernel reads them, which also absorbs the transposes.
//
// When C has a single block of rows (m ≤ mc: the batch-64 classifier
// products, whose op(B) is a weight matrix far larger than the caches), each
// panel of op(B) is used by that block alone, so a few panels at a time
// (fusedCols columns, fusedColsT of a transposed B) are packed just before
// use into a buffer that stays in L2,
// rather than the whole kc×nc block being written out to L3 and read back.
// Every tile is computed from the same packed values either way.
//
// With norm not nil, it adds Σ C² of each block of C into *norm once the
// block's last slice of K is done (blockSqNorm), in the order the blocks
// complete.
func gemmSerial(kern *microKernel, ws *workspace, pre []float32, norm *float64, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m <= kern.mc {
		fused := roundUp(fusedCols, kern.nr)
		if transB {
			fused = roundUp(fusedColsT, kern.nr)
		}
		for pc := 0; pc < k; pc += kern.kc {
			kc := min(kern.kc, k-pc)
			bet := beta
			if pc > 0 {
				bet = 1
			}
			pa := kern.blockA(pre, transA, a, lda, m, 0, m, pc, kc, alpha, ws.a, false)
			for jr := 0; jr < n; jr += fused {
				nb := min(fused, n-jr)
				kern.packB(transB, b, ldb, pc, kc, jr, nb, ws.b)
				macroKernel(kern, pa, ws.b, kc, ws.t, m, nb, kc, bet, c[jr:], ldc)
				if norm != nil && pc+kc == k {
					*norm += blockSqNorm(c[jr:], m, nb, ldc)
				}
			}
		}
		return
	}
	for jc := 0; jc < n; jc += kern.nc {
		nc := min(kern.nc, n-jc)
		for pc := 0; pc < k; pc += kern.kc {
			kc := min(kern.kc, k-pc)
			kern.packB(transB, b, ldb, pc, kc, jc, nc, ws.b)
			bet := beta
			if pc > 0 {
				bet = 1 // later slices of K accumulate onto the first
			}
			for ic := 0; ic < m; ic += kern.mc {
				mc := min(kern.mc, m-ic)
				pa := kern.blockA(pre, transA, a, lda, m, ic, mc, pc, kc, alpha, ws.a, false)
				macroKernel(kern, pa, ws.b, kc, ws.t, mc, nc, kc, bet, c[ic*ldc+jc:], ldc)
				if norm != nil && pc+kc == k {
					*norm += blockSqNorm(c[ic*ldc+jc:], mc, nc, ldc)
				}
			}
		}
	}
}

// An aBlock is the mc×kc block of alpha·op(A) a macro-kernel reads: packed
// mr-row panels, or, where rows is not nil, rows in place (lda apart, as
// kern.rowsA reads them) for every whole panel and packed only for the
// last, partial one (at its place in packed).
type aBlock struct {
	packed []float32
	rows   []float32
	lda    int
}

// macroKernel sweeps the micro-kernel over an mc×nc block of C from the A
// block pa and the packed block pb, whose nr-column panels start depth
// floats apart (depth ≥ kc: a panel packed deeper than this product's
// slice of K is read for its first kc steps, which hold the same values).
// Column panels are the outer loop so that one kc×nr panel of B stays in
// L1 while the mc×kc block of A streams through from L2. Tiles cut by the
// edge of C are computed into t and copied.
func macroKernel(kern *microKernel, pa aBlock, pb []float32, depth int, t []float32, mc, nc, kc int, beta float32, c []float32, ldc int) {
	mr, nr := kern.mr, kern.nr
	for jr := 0; jr < nc; jr += nr {
		nb := min(nr, nc-jr)
		bp := pb[jr*depth : jr*depth+nr*kc]
		for ir := 0; ir < mc; ir += mr {
			mb := min(mr, mc-ir)
			inPlace := pa.rows != nil && mb == mr
			var ap []float32
			if !inPlace {
				ap = pa.packed[ir*kc : (ir+mr)*kc]
			}
			switch {
			case mb == mr && nb == nr && inPlace:
				kern.rowsA(kc, nb, pa.rows[ir*pa.lda:], pa.lda, bp, c[ir*ldc+jr:], ldc, beta)
				continue
			case mb == mr && nb == nr:
				kern.tile(kc, ap, bp, c[ir*ldc+jr:], ldc, beta)
				continue
			case inPlace:
				kern.rowsA(kc, nb, pa.rows[ir*pa.lda:], pa.lda, bp, t, nr, 0)
			case kern.edge != nil:
				kern.edge(kc, mb, nb, ap, bp, t, nr, 0)
			default:
				kern.tile(kc, ap, bp, t, nr, 0)
			}
			for i := range mb {
				ci := c[(ir+i)*ldc+jr : (ir+i)*ldc+jr+nb]
				ti := t[i*nr : i*nr+nb]
				if beta == 0 {
					copy(ci, ti)
					continue
				}
				for j, t := range ti {
					ci[j] = t + beta*ci[j]
				}
			}
		}
	}
}

// inPlaceA reports whether kern reads the blocks of alpha·op(A) in place
// rather than packed: untransposed, unscaled, not packed in advance, and
// with rows that are not a multiple of 4 KiB apart. Rows so far apart all
// fall in one set of L1, where the mr rows the micro-kernel reads at once
// evict each other and B's panel (a 12-way L1 holds AVX-512's 12 rows and
// nothing else of the set): with AVX-512 on Zen 5 the 2048³ product ran
// 10 % slower in place than packed, the 1024³ up to 25 % with cold caches;
// with AVX2 both took the same time. Both give the same bits (TestRowsA).
func (kern *microKernel) inPlaceA(pre []float32, transA bool, alpha float32, lda int) bool {
	return kern.rowsA != nil && pre == nil && !transA && alpha == 1 && lda%1024 != 0
}

// blockA returns the mc×kc block of alpha·op(A) at (ic, pc): a slice of pre
// when A was packed in advance, rows of a in place where kern reads them
// so (with the last, partial panel packed into buf), else buf after packing
// into it. With packed, buf holds the packing already.
func (kern *microKernel) blockA(pre []float32, transA bool, a []float32, lda, m, ic, mc, pc, kc int, alpha float32, buf []float32, packed bool) aBlock {
	if pre != nil {
		return aBlock{packed: pre[pc*roundUp(m, kern.mr)+ic*kc:]}
	}
	if kern.inPlaceA(pre, transA, alpha, lda) {
		full := mc / kern.mr * kern.mr
		if full < mc && !packed {
			kern.packA(transA, a, lda, ic+full, mc-full, pc, kc, alpha, buf[full*kc:])
		}
		return aBlock{packed: buf, rows: a[ic*lda+pc:], lda: lda}
	}
	if !packed {
		kern.packA(transA, a, lda, ic, mc, pc, kc, alpha, buf)
	}
	return aBlock{packed: buf}
}

// prepackA packs all of alpha·op(A), m×k, into dst (at least roundUp(m, mr)·k
// long) laid out as blockA expects: kc-deep slices one after the other, each
// holding the mr-row panels of all m rows.
func (kern *microKernel) prepackA(transA bool, a []float32, lda, m, k int, alpha float32, dst []float32) {
	for pc := 0; pc < k; pc += kern.kc {
		kc := min(kern.kc, k-pc)
		kern.packA(transA, a, lda, 0, m, pc, kc, alpha, dst[pc*roundUp(m, kern.mr):])
	}
}

// packA copies alpha·op(A)[i0:i0+mc, p0:p0+kc] into dst as mr-row panels,
// each stored step by step (kc groups of mr values). The last panel is padded
// with zeros: the rows they produce are discarded, but zeros keep stale
// (possibly subnormal, hence slow) values out of the micro-kernel.
func (kern *microKernel) packA(trans bool, a []float32, lda, i0, mc, p0, kc int, alpha float32, dst []float32) {
	mr := kern.mr
	if trans {
		// op(A)[i, p] = a[p·lda + i]: each step of a panel is a contiguous
		// run, read row by row across all panels as packB does.
		full := 0
		if kern.packRows != nil {
			full = mc / mr * mr
			if full > 0 {
				kern.packRows(a[p0*lda+i0:], lda, kc, dst, full/mr, mr, alpha)
			}
		}
		if full == mc {
			return
		}
		for p := range kc {
			src := a[(p0+p)*lda+i0:][:mc]
			if p+prefetchRows < kc {
				prefetch(a[(p0+p+prefetchRows)*lda+i0+full:][:mc-full])
			}
			for ir := full; ir < mc; ir += mr {
				d := dst[ir*kc+p*mr:][:mr]
				clear(d[copy(d, src[ir:]):])
			}
		}
		scalePanels(alpha, dst[full*kc:roundUp(mc, mr)*kc])
		return
	}
	for ir := 0; ir < mc; ir += mr {
		panel := dst[ir*kc : (ir+mr)*kc]
		rows := min(mr, mc-ir)
		if kern.transposed(a[(i0+ir)*lda+p0:], lda, kc, panel, mr, rows) {
			scalePanels(alpha, panel)
			continue
		}
		for r := range rows {
			src := a[(i0+ir+r)*lda+p0:][:kc]
			for p, v := range src {
				panel[p*mr+r] = alpha * v
			}
		}
		for r := rows; r < mr; r++ {
			for p := range kc {
				panel[p*mr+r] = 0
			}
		}
	}
}

// scalePanels multiplies packed panels of A by alpha, unless alpha is 1:
// each value is the one rounded product alpha·v that packing it scaled
// would give, and the padding's zeros stay zeros but for their sign (and
// NaN for an infinite alpha), which only the discarded rows of a tile
// see.
func scalePanels(alpha float32, panels []float32) {
	if alpha != 1 {
		vec.scale(alpha, panels)
	}
}

// packB copies op(B)[p0:p0+kc, j0:j0+nc] into dst as nr-column panels, each
// stored step by step (kc groups of nr values), zero-padding the last as
// packA does.
func (kern *microKernel) packB(trans bool, b []float32, ldb, p0, kc, j0, nc int, dst []float32) {
	nr := kern.nr
	if !trans {
		// op(B)[p, j] = b[p·ldb + j]: each step of a panel is a contiguous
		// run. Rows are read in order, across all panels, so the reads
		// stream rather than stride through B (a panel is 4·nr bytes of
		// each of kc rows).
		full := 0
		if kern.packRows != nil {
			full = nc / nr * nr
			if full > 0 {
				kern.packRows(b[p0*ldb+j0:], ldb, kc, dst, full/nr, nr, 1)
			}
		}
		if full == nc {
			return
		}
		for p := range kc {
			src := b[(p0+p)*ldb+j0:][:nc]
			if p+prefetchRows < kc {
				prefetch(b[(p0+p+prefetchRows)*ldb+j0+full:][:nc-full])
			}
			for jr := full; jr < nc; jr += nr {
				d := dst[jr*kc+p*nr:][:nr]
				clear(d[copy(d, src[jr:]):])
			}
		}
		return
	}
	for jr := 0; jr < nc; jr += nr {
		panel := dst[jr*kc : (jr+nr)*kc]
		cols := min(nr, nc-jr)
		if kern.transposed(b[(j0+jr)*ldb+p0:], ldb, kc, panel, nr, cols) {
			continue
		}
		for j := range cols {
			src := b[(j0+jr+j)*ldb+p0:][:kc]
			for p, v := range src {
				panel[p*nr+j] = v
			}
		}
		for j := cols; j < nr; j++ {
			for p := range kc {
				panel[p*nr+j] = 0
			}
		}
	}
}

// transposed copies rows rows of src, k elements each with leading
// dimension ld, transposed into the k steps of a panel width wide
// (element p of row j goes to panel[p·width+j]), zero-filling the steps past
// rows, with kern.transpose. It reports false, doing nothing, where the CPU
// has no fast transpose or ld is too large for its 32-bit gather offsets.
func (kern *microKernel) transposed(src []float32, ld, k int, panel []float32, width, rows int) bool {
	t := kern.maxRows
	if kern.transpose == nil || int64(t-1)*int64(ld) > math.MaxInt32 {
		return false
	}
	if rows < width {
		clear(panel[:k*width])
	}
	for j := 0; j < rows; j += t {
		kern.transpose(src[j*ld:], ld, k, panel[j:], width, min(t, rows-j))
	}
	return true
}

// sgemmSmall computes tiny products directly, skipping packing.
func sgemmSmall(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	for i := range m {
		ci := c[i*ldc : i*ldc+n]
		for j := range ci {
			var s float32
			for p := range k {
				s += a[offset(!transA, p, lda)+offset(transA, i, lda)] * b[offset(!transB, j, ldb)+offset(transB, p, ldb)]
			}
			if beta == 0 {
				ci[j] = alpha * s
			} else {
				ci[j] = alpha*s + beta*ci[j]
			}
		}
	}
}

// scaleC sets C = beta·C, treating beta == 0 as an overwrite with zeros.
func scaleC(m, n int, beta float32, c []float32, ldc int) {
	for i := range m {
		ci := c[i*ldc : i*ldc+n]
		if beta == 0 {
			clear(ci)
			continue
		}
		for j := range ci {
			ci[j] *= beta
		}
	}
}

// A workspace holds one goroutine's packed blocks. They are pooled so that a
// steady stream of Sgemm calls does not allocate.
type workspace struct {
	a, b, t []float32
}

var workspaces sync.Pool

// getWorkspace returns a workspace big enough for kern on n columns of C.
func getWorkspace(kern *microKernel, n int) *workspace {
	ws, _ := workspaces.Get().(*workspace)
	if ws == nil {
		ws = new(workspace)
	}
	ws.a = grow(ws.a, kern.mc*kern.kc)
	ws.b = grow(ws.b, ceilDiv(min(n, kern.nc), kern.nr)*kern.nr*kern.kc)
	ws.t = grow(ws.t, kern.mr*kern.nr)
	return ws
}

func grow(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

func roundUp(a, b int) int { return ceilDiv(a, b) * b }

// checkGemm panics unless the slices hold the matrices the dimensions and
// leading dimensions describe.
func checkGemm(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	if m < 0 || n < 0 || k < 0 {
		panic(fmt.Sprintf("kernels: negative GEMM dimension m=%d n=%d k=%d", m, n, k))
	}
	checkMatrix("A", transA, m, k, a, lda)
	checkMatrix("B", transB, k, n, b, ldb)
	checkMatrix("C", false, m, n, c, ldc)
}

// checkMatrix checks an r×c operand stored transposed or not.
func checkMatrix(name string, trans bool, r, c int, s []float32, ld int) {
	if trans {
		r, c = c, r
	}
	if ld < max(1, c) {
		panic(fmt.Sprintf("kernels: leading dimension of %s is %d, less than its %d columns", name, ld, c))
	}
	if r > 0 && c > 0 && len(s) < (r-1)*ld+c {
		panic(fmt.Sprintf("kernels: %s has %d elements, need %d for %d×%d with leading dimension %d", name, len(s), (r-1)*ld+c, r, c, ld))
	}
}
