package kernels

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// chunksPerWorker is about how many chunks of C gemmParallel cuts per
	// goroutine: enough that one slowed by another job on its core leaves
	// its share to the others, few enough that each chunk keeps the cache
	// blocking of gemmSerial.
	chunksPerWorker = 4
	// minRowTiles and minColTiles are the fewest micro-tile rows and
	// columns in a chunk: each packed panel of the shared operand, loaded
	// into L1 from L2 or L3, should serve several tiles.
	minRowTiles, minColTiles = 4, 2
	// reuseWidth is share's cost of a chunk, in rows or columns.
	reuseWidth = 64
	// packUnit is about how many floats of the shared operand one unit of
	// gemmParallel's joint packing holds (256 KiB).
	packUnit = 1 << 16
	// spinYields is how many times a goroutine that has to wait for others
	// (for the last units of the joint packing, or at the end of a
	// product) yields its P before it blocks: they have tens of
	// microseconds of work left, less than waking a parked goroutine takes
	// on a virtual machine.
	spinYields = 1 << 10
)

// gemmParallel computes C as gemmSerial does, with up to workers goroutines.
// C is cut into chunks of whole micro-tile rows, or of columns where rows
// share out worse, and the goroutines take the chunks one after another
// from a shared counter, so that one slowed down (by another job on its
// core) takes fewer of them and nobody waits for its share. The operand
// every chunk reads whole — op(B) for chunks of rows, op(A) for chunks of
// columns — is packed first, for all of K, by the goroutines together
// (unless SgemmBatched packed A already); the other operand is packed by
// the goroutine that computes the chunk, as gemmSerial does. The goroutines
// thus synchronise once per product, after the joint packing, where
// splitting each kc slice of gemmSerial's loop synchronised twice per
// slice.
//
// Chunks start on micro-tile boundaries of the whole C and every tile is
// computed from the same packed values, kc slice by kc slice, as in
// gemmSerial, so every element of C gets the same operations whatever the
// number of goroutines and whichever of them computes it.
//
// Each goroutine first calls side, unless it is nil (SgemmConcurrent's
// other products, which the goroutines take whole before they join this
// one).
//
// It reports false, doing nothing, when C does not make two chunks.
func gemmParallel(kern *microKernel, workers int, pre []float32, side func(), transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) bool {
	mr, nr := kern.mr, kern.nr
	mt, nt := ceilDiv(m, mr), ceilDiv(n, nr)
	rowChunks := chunkCount(mt, minRowTiles, kern.mc/mr, workers)
	colChunks := chunkCount(nt, minColTiles, kern.nc/nr, workers)
	rowShare, colShare := share(mt, rowChunks, mr, workers), share(nt, colChunks, nr, workers)
	switch {
	case rowShare == 0 && colShare == 0:
		return false
	case rowShare >= colShare:
		gemmRows(kern, workers, rowChunks, pre, side, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	default:
		gemmCols(kern, workers, colChunks, pre, side, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	}
	return true
}

// chunkCount returns how many chunks to cut tiles micro-tiles into along one
// dimension: chunksPerWorker per goroutine, or as near as chunks of lo to hi
// tiles allow, rounded down to a multiple of workers where that leaves
// more than one. Chunk i is tiles i·tiles/chunks up to (i+1)·tiles/chunks,
// so chunks differ by one tile at most.
func chunkCount(tiles, lo, hi, workers int) int {
	chunks := clamp(chunksPerWorker*workers, ceilDiv(tiles, hi), tiles/lo)
	if chunks > workers {
		chunks -= chunks % workers
	}
	return chunks
}

// chunkBounds returns where the chunks of chunkCount's count (chunks of
// tiles micro-tiles along one dimension) begin and end: chunk i is tiles
// bounds[i] up to bounds[i+1]. Where halves of them would still hold lo
// tiles, the last workers chunks are cut in two each, so that the
// goroutines, taking the chunks in order, finish within half a chunk of
// each other rather than a whole one.
func chunkBounds(tiles, chunks, lo, workers int) []int {
	split := 0
	if chunks > workers && tiles/(2*chunks) >= lo {
		split = workers
	}
	halves := 2 * chunks
	bounds := make([]int, 0, chunks+split+1)
	for h := 0; h < halves; h += 2 {
		bounds = append(bounds, h*tiles/halves)
		if h >= halves-2*split {
			bounds = append(bounds, (h+1)*tiles/halves)
		}
	}
	return append(bounds, tiles)
}

// share estimates how well C splits into chunks of tiles micro-tiles (of
// size rows or columns each) along one dimension: the share of the
// goroutines' time spent on the product, as the one given the most chunks
// sets the time, times the share left by reloading the panels of the
// shared operand into L1 for every chunk, which costs about as much as
// reuseWidth rows or columns of computing. It is 0 for a single chunk.
// (Fitted on the model shapes, two threads: each choice it makes was
// measured the faster, or within 5 %.)
func share(tiles, chunks, size, workers int) float64 {
	if chunks < 2 {
		return 0
	}
	width := float64(tiles*size) / float64(chunks)
	return float64(chunks) / float64(min(workers, chunks)*ceilDiv(chunks, workers)) * width / (width + reuseWidth)
}

// gemmRows is gemmParallel with the rows of C in chunks, over op(B) packed
// whole: kc-deep slices one after the other, each holding the nr-column
// panels of all n columns.
func gemmRows(kern *microKernel, workers, chunks int, pre []float32, side func(), transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	mr, nr := kern.mr, kern.nr
	np := roundUp(n, nr)
	buf := getPrepacked(np * k)
	defer prepacked.Put(buf)
	pb := *buf
	// At least two units a goroutine where op(B) has the panels for them,
	// so that none waits long for another's last one.
	cols := clamp(roundUp(ceilDiv(n, 2*workers), nr), nr, packUnit/kern.kc/nr*nr)
	groups := ceilDiv(n, cols)
	bounds := chunkBounds(ceilDiv(m, mr), chunks, minRowTiles, workers)
	rows := func(i int) (i0, i1 int) { return bounds[i] * mr, min(m, bounds[i+1]*mr) }
	var first func(ws *workspace, i int)
	if pre == nil {
		first = func(ws *workspace, i int) {
			i0, i1 := rows(i)
			kern.blockA(nil, transA, a, lda, m, i0, min(kern.mc, i1-i0), 0, min(kern.kc, k), alpha, ws.a, false)
		}
	}
	shareOut(kern, workers, side, 0, ceilDiv(k, kern.kc)*groups, func(u int) {
		pc, j0 := u/groups*kern.kc, u%groups*cols
		kc := min(kern.kc, k-pc)
		kern.packB(transB, b, ldb, pc, kc, j0, min(cols, n-j0), pb[pc*np+j0*kc:])
	}, len(bounds)-1, first, func(ws *workspace, i int, packed bool) {
		i0, i1 := rows(i)
		for pc := 0; pc < k; pc += kern.kc {
			kc := min(kern.kc, k-pc)
			bet := beta
			if pc > 0 {
				bet = 1
			}
			for ic := i0; ic < i1; ic += kern.mc {
				mc := min(kern.mc, i1-ic)
				pa := kern.blockA(pre, transA, a, lda, m, ic, mc, pc, kc, alpha, ws.a, packed && pc == 0 && ic == i0)
				macroKernel(kern, pa, pb[pc*np:], kc, ws.t, mc, n, kc, bet, c[ic*ldc:], ldc)
			}
		}
	})
}

// gemmCols is gemmParallel with the columns of C in chunks, each computed by
// gemmSerial over op(A) packed whole, as prepackA lays it out.
func gemmCols(kern *microKernel, workers, chunks int, pre []float32, side func(), transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	mr, nr := kern.mr, kern.nr
	units := 0
	var pack func(u int)
	if pre == nil && !kern.inPlaceA(pre, transA, alpha, lda) {
		mp := roundUp(m, mr)
		buf := getPrepacked(mp * k)
		defer prepacked.Put(buf)
		pre = *buf
		rows := max(mr, packUnit/kern.kc/mr*mr)
		groups := ceilDiv(m, rows)
		units = ceilDiv(k, kern.kc) * groups
		pack = func(u int) {
			pc, i0 := u/groups*kern.kc, u%groups*rows
			kc := min(kern.kc, k-pc)
			kern.packA(transA, a, lda, i0, min(rows, m-i0), pc, kc, alpha, pre[pc*mp+i0*kc:])
		}
	}
	bounds := chunkBounds(ceilDiv(n, nr), chunks, minColTiles, workers)
	shareOut(kern, workers, side, ceilDiv(ceilDiv(n, nr), chunks)*nr, units, pack, len(bounds)-1, nil, func(ws *workspace, i int, _ bool) {
		j0, j1 := bounds[i]*nr, min(n, bounds[i+1]*nr)
		gemmSerial(kern, ws, pre, nil, transA, transB, m, j1-j0, k, alpha, a, lda, b[offset(!transB, j0, ldb):], ldb, beta, c[j0:], ldc)
	})
}

// shareOut runs units calls of pack, then chunks calls of compute, on up to
// workers goroutines, each taking the next unit (then chunk) not yet taken.
// No chunk starts before every unit is packed. Each goroutine computes in
// its own workspace, sized for cols columns of C.
//
// A goroutine that finds no unit left while others are still packing does
// not just wait: it takes its first chunk and, with first (unless nil),
// packs into its workspace what that chunk reads of the other operand
// first, which does not depend on the units; compute is then told so
// (packed). On a product whose shared operand is a single unit (a GPT's
// weight) the waiting is thus spent on work the chunk needs anyway.
//
// Each goroutine first calls side, unless it is nil: a goroutine that has
// other work there joins late, and finds the units packed and fewer chunks
// left.
func shareOut(kern *microKernel, workers int, side func(), cols, units int, pack func(u int), chunks int, first func(ws *workspace, i int), compute func(ws *workspace, i int, packed bool)) {
	var nextUnit, packed, nextChunk atomic.Int64
	ready := make(chan struct{})
	if units == 0 {
		close(ready)
	}
	parallelFor(min(workers, max(units, chunks)), func() {
		if side != nil {
			side()
		}
		for u := int(nextUnit.Add(1)) - 1; u < units; u = int(nextUnit.Add(1)) - 1 {
			pack(u)
			if packed.Add(1) == int64(units) {
				close(ready)
			}
		}
		var ws *workspace
		early := -1
		if first != nil && packed.Load() != int64(units) {
			if i := int(nextChunk.Add(1)) - 1; i < chunks {
				ws = getWorkspace(kern, cols)
				first(ws, i)
				early = i
			}
		}
		spinWait(func() bool { return packed.Load() == int64(units) }, ready)
		if early >= 0 {
			compute(ws, early, true)
		}
		for i := int(nextChunk.Add(1)) - 1; i < chunks; i = int(nextChunk.Add(1)) - 1 {
			if ws == nil {
				ws = getWorkspace(kern, cols)
			}
			compute(ws, i, false)
		}
		if ws != nil {
			workspaces.Put(ws)
		}
	})
}

// Parallel runs f(w) for every w in [0, n) at once, f(0) on the calling
// goroutine and the others on helper goroutines that Sgemm's parallel
// products share, kept between calls, and returns when all have returned.
// Each w runs exactly once; which goroutine runs it is not fixed, so f(w)
// must depend only on w for results to be reproducible. It is for work
// split among up to GOMAXPROCS goroutines: starting a fresh goroutine on
// another core costs tens of microseconds on the machines this runs on
// (parallelFor), which a layer's pass on two cores can take entirely.
func Parallel(n int, f func(w int)) {
	if n <= 1 {
		if n == 1 {
			f(0)
		}
		return
	}
	var next atomic.Int64
	parallelFor(n, func() { f(int(next.Add(1)) - 1) })
}

// parallelFor runs f on the calling goroutine and on workers-1 helpers,
// and returns when all are done.
//
// Starting a goroutine on another core is slow on the virtual machines
// this runs on: the creator pays for waking a parked thread (about 10 µs
// here), and the new goroutine, queued to run next on its creator's P, is
// taken by an idle P only after a pause (3 µs asked, up to a hundred with
// Linux's default timer slack), so on two cores it often started only
// when the caller blocked at the end. So helpers are goroutines kept
// between calls, which look for the next job for a while (helperSpin)
// before they block: products called one after another (a network's
// layers) find them running. A helper that has to be woken is let onto
// this P at once by yielding, the caller moving to the P the wake-up
// readies. At the end the caller yields a while before it blocks, as
// waking it would take longer than the others need to finish.
func parallelFor(workers int, f func()) {
	if workers <= 1 {
		f()
		return
	}
	j := &job{f: f, done: make(chan struct{})}
	j.left.Store(int64(workers - 1))
	woke := false
	for range workers - 1 {
		woke = startHelper(j) || woke
	}
	if woke {
		runtime.Gosched()
	}
	f()
	spinWait(func() bool { return j.left.Load() == 0 }, j.done)
}

// A job is parallelFor's work for its helpers.
type job struct {
	f    func()
	left atomic.Int64  // helpers still running f
	done chan struct{} // closed when none is
}

// helperSpin is how long an idle helper keeps looking for a job before it
// blocks (burning its core meanwhile, but yielding it to any goroutine
// that is ready to run).
const helperSpin = 100 * time.Microsecond

// A helper is a goroutine that runs parallelFor's jobs.
type helper struct {
	job      atomic.Pointer[job]
	spinning atomic.Bool   // looking for a job rather than blocked
	wake     chan struct{} // a token after each job given
}

// idle holds the helpers waiting for a job: at most GOMAXPROCS-1, the
// most one parallelFor uses; others end.
var idle struct {
	sync.Mutex
	helpers []*helper
}

// startHelper gives job to an idle helper, or to a new one, and reports
// whether a blocked goroutine had to be woken for it.
func startHelper(j *job) bool {
	idle.Lock()
	var h *helper
	if n := len(idle.helpers); n > 0 {
		h, idle.helpers = idle.helpers[n-1], idle.helpers[:n-1]
	}
	idle.Unlock()
	if h == nil {
		h = &helper{wake: make(chan struct{}, 1)}
		h.job.Store(j)
		go h.run()
		return true
	}
	h.job.Store(j)
	select {
	case h.wake <- struct{}{}:
	default:
	}
	return !h.spinning.Load()
}

// run runs jobs until the idle list is full when it has finished one. It
// goes back on the list before it reports the job done, so that the next
// parallelFor of a caller waiting for it finds it there.
func (h *helper) run() {
	for {
		j := h.job.Swap(nil)
		if j == nil {
			j = h.await()
		}
		j.f()
		idle.Lock()
		keep := len(idle.helpers) < runtime.GOMAXPROCS(0)-1
		if keep {
			idle.helpers = append(idle.helpers, h)
		}
		idle.Unlock()
		if j.left.Add(-1) == 0 {
			close(j.done)
		}
		if !keep {
			return
		}
	}
}

// await returns the next job given, looking for it for helperSpin, then
// blocking until a token comes (a token may be left from a job that was
// found while looking).
func (h *helper) await() *job {
	h.spinning.Store(true)
	for start := time.Now(); time.Since(start) < helperSpin; {
		if j := h.job.Swap(nil); j != nil {
			h.spinning.Store(false)
			return j
		}
		runtime.Gosched()
	}
	h.spinning.Store(false)
	for {
		if j := h.job.Swap(nil); j != nil {
			return j
		}
		<-h.wake
	}
}

// spinWait returns once cond holds, which closes done: it yields its P up
// to spinYields times while cond does not hold, then blocks on done.
func spinWait(cond func() bool, done <-chan struct{}) {
	for range spinYields {
		if cond() {
			return
		}
		runtime.Gosched()
	}
	<-done
}

func clamp(x, lo, hi int) int { return max(lo, min(x, hi)) }
