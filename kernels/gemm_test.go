package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// gemmCase is one Sgemm call; pad is added to each leading dimension so the
// operands are sub-matrices of wider buffers.
type gemmCase struct {
	transA, transB bool
	m, n, k        int
	alpha, beta    float32
	pad            int
}

func (g gemmCase) String() string {
	return fmt.Sprintf("tA=%v,tB=%v,%dx%dx%d,α=%v,β=%v,pad=%d", g.transA, g.transB, g.m, g.n, g.k, g.alpha, g.beta, g.pad)
}

// operands returns random A, B and C buffers and their leading dimensions.
// C's buffer starts with NaN wherever the case ignores it (beta == 0), and
// the padding columns hold NaN too, so reading them shows.
func (g gemmCase) operands(r *rand.Rand) (a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	ar, ac := g.m, g.k
	if g.transA {
		ar, ac = ac, ar
	}
	br, bc := g.k, g.n
	if g.transB {
		br, bc = bc, br
	}
	lda, ldb, ldc = ac+g.pad, bc+g.pad, g.n+g.pad
	nan := float32(math.NaN())
	fill := func(rows, cols, ld int, keepNaN bool) []float32 {
		s := make([]float32, max(rows*ld, 1))
		for i := range s {
			s[i] = nan
			if i%ld < cols && !keepNaN {
				s[i] = float32(r.NormFloat64())
			}
		}
		return s
	}
	return fill(ar, ac, max(lda, 1), false), max(lda, 1), fill(br, bc, max(ldb, 1), false), max(ldb, 1), fill(g.m, g.n, max(ldc, 1), g.beta == 0), max(ldc, 1)
}

// checkAgainstNaive compares got (C after the call) with a float64 triple
// loop on the original operands. The tolerance is the standard bound for a
// float32 dot product of length k, k·ε·Σ|terms|, so a single wrong term fails.
func checkAgainstNaive(t *testing.T, g gemmCase, a []float32, lda int, b []float32, ldb int, c0, got []float32, ldc int) {
	t.Helper()
	at := func(i, p int) float64 {
		if g.transA {
			return float64(a[p*lda+i])
		}
		return float64(a[i*lda+p])
	}
	bt := func(p, j int) float64 {
		if g.transB {
			return float64(b[j*ldb+p])
		}
		return float64(b[p*ldb+j])
	}
	const eps = 1.0 / (1 << 23)
	for i := range g.m {
		for j := range g.n {
			var s, mag float64
			for p := range g.k {
				s += at(i, p) * bt(p, j)
				mag += math.Abs(at(i, p) * bt(p, j))
			}
			want, wantMag := float64(g.alpha)*s, math.Abs(float64(g.alpha))*mag
			if g.beta != 0 {
				want += float64(g.beta) * float64(c0[i*ldc+j])
				wantMag += math.Abs(float64(g.beta) * float64(c0[i*ldc+j]))
			}
			tol := float64(g.k+2)*eps*wantMag + 1e-30
			if d := math.Abs(float64(got[i*ldc+j]) - want); !(d <= tol) {
				t.Fatalf("%v: C[%d,%d] = %v, want %v (tolerance %.3g)", g, i, j, got[i*ldc+j], want, tol)
			}
		}
		for j := g.n; j < ldc && i*ldc+j < len(got); j++ {
			if math.Float32bits(got[i*ldc+j]) != math.Float32bits(c0[i*ldc+j]) {
				t.Fatalf("%v: padding C[%d,%d] written", g, i, j)
			}
		}
	}
}

// gemmShapes covers 1×1, primes, sizes around every micro-tile (2, 4, 6, 8, 12,
// 16, 32) and the cache blocks (kc = 256, mc = 128..240), and skinny shapes.
var gemmShapes = [][3]int{
	{1, 1, 1}, {1, 1, 7}, {2, 3, 5}, {7, 11, 13}, {1, 37, 64}, {37, 1, 64}, {64, 64, 1},
	{6, 16, 9}, {12, 32, 8}, {13, 33, 17}, {25, 47, 31}, {31, 17, 257}, {97, 101, 103},
	{241, 35, 20}, {130, 70, 300}, {48, 96, 513},
}

func TestSgemm(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, kern := range available {
		for _, threads := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s/threads=%d", kern.name, threads), func(t *testing.T) {
				for i, s := range gemmShapes {
					for tr := range 4 {
						ab := [][2]float32{{1, 0}, {-0.5, 1}, {2, -1.5}, {1, 0}}[(i+tr)%4]
						g := gemmCase{transA: tr&1 != 0, transB: tr&2 != 0, m: s[0], n: s[1], k: s[2], alpha: ab[0], beta: ab[1], pad: (i + tr) % 3}
						a, lda, b, ldb, c, ldc := g.operands(r)
						c0 := append([]float32(nil), c...)
						sgemm(kern, threads, g.transA, g.transB, g.m, g.n, g.k, g.alpha, a, lda, b, ldb, g.beta, c, ldc)
						checkAgainstNaive(t, g, a, lda, b, ldb, c0, c, ldc)
					}
				}
			})
		}
	}
}

// SgemmSqNorm gives C the bits of Sgemm's with beta 0 and returns Σ C²
// within float64 rounding of the sum taken in float64, on shapes through
// each of gemmSerial's paths: one block of rows (m ≤ mc), several, K in
// several slices, padded leading dimensions and the small products.
func TestSgemmSqNorm(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, g := range []gemmCase{
		{transA: true, m: 384, n: 128, k: 64, alpha: 1},   // a per-sample weight gradient dyᵀ·x
		{transA: true, m: 128, n: 512, k: 64, alpha: 1},   // one block of rows
		{transA: true, m: 1536, n: 384, k: 256, alpha: 1}, // several blocks
		{m: 301, n: 67, k: 530, alpha: 1.5, pad: 3},       // K in slices, C not contiguous
		{transB: true, m: 40, n: 150, k: 600, alpha: 0.5, pad: 1},
		{m: 5, n: 7, k: 3, alpha: 1}, // small
		{m: 4, n: 6, k: 0, alpha: 1}, // C = 0
		{m: 0, n: 6, k: 3, alpha: 1},
	} {
		a, lda, b, ldb, c, ldc := g.operands(r)
		want := append([]float32(nil), c...)
		Sgemm(g.transA, g.transB, g.m, g.n, g.k, g.alpha, a, lda, b, ldb, 0, want, ldc)
		sq := SgemmSqNorm(g.transA, g.transB, g.m, g.n, g.k, g.alpha, a, lda, b, ldb, c, ldc)
		if !bitsEqual(c, want) {
			t.Errorf("%v: C differs from Sgemm's", g)
		}
		var exact float64
		for i := range g.m {
			for j := range g.n {
				v := float64(want[i*ldc+j])
				exact += v * v
			}
		}
		if tol := float64(g.m*g.n+1) * 0x1p-52 * exact; math.Abs(sq-exact) > tol {
			t.Errorf("%v: Σ C² = %v, want %v", g, sq, exact)
		}
	}
}

func TestSgemmDegenerate(t *testing.T) {
	nan := float32(math.NaN())
	for _, tc := range []struct {
		name        string
		m, n, k     int
		alpha, beta float32
		c, want     []float32
	}{
		{"k=0 beta=0 clears NaN", 1, 2, 0, 1, 0, []float32{nan, 3}, []float32{0, 0}},
		{"k=0 scales", 1, 2, 0, 1, 2, []float32{1, 3}, []float32{2, 6}},
		{"alpha=0 ignores A and B", 1, 2, 3, 0, -1, []float32{1, 3}, []float32{-1, -3}},
		{"m=0", 0, 2, 3, 1, 0, []float32{nan}, []float32{nan}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := []float32{nan, nan, nan}
			b := make([]float32, 6)
			for i := range b {
				b[i] = nan
			}
			Sgemm(false, false, tc.m, tc.n, tc.k, tc.alpha, a, max(tc.k, 1), b, tc.n, tc.beta, tc.c, tc.n)
			for i := range tc.want {
				if math.Float32bits(tc.c[i]) != math.Float32bits(tc.want[i]) {
					t.Fatalf("C = %v, want %v", tc.c, tc.want)
				}
			}
		})
	}
}

func TestSgemmPanics(t *testing.T) {
	s := make([]float32, 12)
	for name, f := range map[string]func(){
		"negative m":    func() { Sgemm(false, false, -1, 2, 2, 1, s, 2, s, 2, 0, s, 2) },
		"lda too small": func() { Sgemm(false, false, 2, 2, 3, 1, s, 2, s, 2, 0, s, 2) },
		"B too short":   func() { Sgemm(false, true, 2, 5, 3, 1, s, 3, s, 3, 0, make([]float32, 10), 5) },
		"ldc too small": func() { Sgemm(false, false, 2, 3, 2, 1, s, 2, s, 3, 0, s, 2) },
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

// TestSgemmDeterministic checks that results do not depend on the number of
// goroutines: every split must give the bits of the serial computation.
func TestSgemmDeterministic(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, g := range []gemmCase{
		{m: 301, n: 67, k: 530, alpha: 1.5, beta: 0.25},
		{transA: true, m: 50, n: 700, k: 300, alpha: 1, beta: 0},
		{transB: true, m: 513, n: 515, k: 129, alpha: -1, beta: 1, pad: 1},
		{transA: true, transB: true, m: 300, n: 800, k: 270, alpha: 0.5, beta: -1, pad: 2},
	} {
		a, lda, b, ldb, c, ldc := g.operands(r)
		run := func(f func(c []float32)) []float32 {
			c := append([]float32(nil), c...)
			f(c)
			return c
		}
		want := run(func(c []float32) {
			sgemm(best, 1, g.transA, g.transB, g.m, g.n, g.k, g.alpha, a, lda, b, ldb, g.beta, c, ldc)
		})
		for _, procs := range []int{1, 2, 3} {
			got := run(func(c []float32) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				Sgemm(g.transA, g.transB, g.m, g.n, g.k, g.alpha, a, lda, b, ldb, g.beta, c, ldc)
			})
			for _, threads := range []int{2, 5, 8} {
				got2 := run(func(c []float32) {
					sgemm(best, threads, g.transA, g.transB, g.m, g.n, g.k, g.alpha, a, lda, b, ldb, g.beta, c, ldc)
				})
				if !bitsEqual(got2, want) {
					t.Fatalf("%v: %d workers differ from serial", g, threads)
				}
			}
			if !bitsEqual(got, want) {
				t.Fatalf("%v: GOMAXPROCS=%d differs from serial", g, procs)
			}
		}
	}
}

// TestParallelChunks runs both of gemmParallel's splits, by rows and by
// columns, in several numbers of chunks, one to three goroutines and op(A)
// packed in advance or not, for every micro-kernel: each must give the bits
// of the serial computation, whichever goroutine takes which chunk.
func TestParallelChunks(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 20))
	for _, kern := range available {
		for _, g := range []gemmCase{
			{m: 301, n: 67, k: 530, alpha: 1.5, beta: 0.25},
			{transA: true, transB: true, m: 300, n: 290, k: 270, alpha: 0.5, beta: -1, pad: 2},
			{transB: true, m: 40, n: 150, k: 600, alpha: 1, beta: 0},
		} {
			a, lda, b, ldb, c, ldc := g.operands(r)
			want := append([]float32(nil), c...)
			ws := getWorkspace(kern, g.n)
			gemmSerial(kern, ws, nil, nil, g.transA, g.transB, g.m, g.n, g.k, g.alpha, a, lda, b, ldb, g.beta, want, ldc)
			workspaces.Put(ws)
			pre := make([]float32, roundUp(g.m, kern.mr)*g.k)
			kern.prepackA(g.transA, a, lda, g.m, g.k, g.alpha, pre)
			for _, workers := range []int{1, 2, 3} {
				for _, chunks := range []int{1, 2, 3, 7} {
					for _, p := range [][]float32{nil, pre} {
						got := append([]float32(nil), c...)
						gemmRows(kern, workers, chunks, p, nil, g.transA, g.transB, g.m, g.n, g.k, g.alpha, a, lda, b, ldb, g.beta, got, ldc)
						if !bitsEqual(got, want) {
							t.Fatalf("%s %v: rows in %d chunks, %d workers, prepacked %v: differs from serial", kern.name, g, chunks, workers, p != nil)
						}
						got = append([]float32(nil), c...)
						gemmCols(kern, workers, chunks, p, nil, g.transA, g.transB, g.m, g.n, g.k, g.alpha, a, lda, b, ldb, g.beta, got, ldc)
						if !bitsEqual(got, want) {
							t.Fatalf("%s %v: columns in %d chunks, %d workers, prepacked %v: differs from serial", kern.name, g, chunks, workers, p != nil)
						}
					}
				}
			}
		}
	}
}

// TestRowsA checks that the micro-kernels that read an untransposed A in
// place give the bits of the packed path, on every shape of gemmShapes
// (edge tiles of rows and columns, several kc slices and mc blocks) with
// padded leading dimensions, beta 0 and not, on one and two goroutines,
// and with rows 4 KiB apart, which they pack (inPlaceA).
func TestRowsA(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, kern := range available {
		if kern.rowsA == nil {
			continue
		}
		packed := *kern
		packed.rowsA = nil
		for _, s := range append(gemmShapes, [3]int{768, 384, 128}, [3]int{250, 65, 300}, [3]int{40, 70, 1024}) {
			for _, g := range []gemmCase{
				{m: s[0], n: s[1], k: s[2], alpha: 1, beta: 0, pad: 3},
				{transB: true, m: s[0], n: s[1], k: s[2], alpha: 1, beta: 0.5},
			} {
				a, lda, b, ldb, c, ldc := g.operands(r)
				for _, threads := range []int{1, 2} {
					want := append([]float32(nil), c...)
					sgemm(&packed, threads, g.transA, g.transB, g.m, g.n, g.k, g.alpha, a, lda, b, ldb, g.beta, want, ldc)
					got := append([]float32(nil), c...)
					sgemm(kern, threads, g.transA, g.transB, g.m, g.n, g.k, g.alpha, a, lda, b, ldb, g.beta, got, ldc)
					if !bitsEqual(got, want) {
						t.Fatalf("%s %v, %d goroutines: A in place differs from A packed", kern.name, g, threads)
					}
				}
			}
		}
	}
}

func bitsEqual(x, y []float32) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if math.Float32bits(x[i]) != math.Float32bits(y[i]) {
			return false
		}
	}
	return true
}

// TestKernelsAgree runs every available micro-kernel (the assembly ones and
// the portable one) on the same product and compares them with each other.
func TestKernelsAgree(t *testing.T) {
	if len(available) < 2 {
		t.Skip("only the portable micro-kernel is built")
	}
	r := rand.New(rand.NewPCG(11, 12))
	g := gemmCase{transB: true, m: 77, n: 93, k: 600, alpha: 0.5, beta: 2}
	a, lda, b, ldb, c, ldc := g.operands(r)
	ref := append([]float32(nil), c...)
	sgemm(generic, 1, g.transA, g.transB, g.m, g.n, g.k, g.alpha, a, lda, b, ldb, g.beta, ref, ldc)
	for _, kern := range available[:len(available)-1] {
		got := append([]float32(nil), c...)
		sgemm(kern, 2, g.transA, g.transB, g.m, g.n, g.k, g.alpha, a, lda, b, ldb, g.beta, got, ldc)
		for i := range got {
			if d := math.Abs(float64(got[i] - ref[i])); d > 1e-4*(1+math.Abs(float64(ref[i]))) {
				t.Fatalf("%s and %s differ at %d: %v vs %v", kern.name, generic.name, i, got[i], ref[i])
			}
		}
	}
}

func TestSgemmBatched(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, g := range []gemmCase{
		{m: 5, n: 7, k: 3, alpha: 1, beta: 0},
		{transA: true, m: 40, n: 33, k: 27, alpha: 2, beta: 1},
		{transB: true, m: 64, n: 130, k: 600, alpha: 1, beta: 0},
		{m: 37, n: 64, k: 300, alpha: 0.5, beta: 0},
		{transA: true, m: 300, n: 20, k: 40, alpha: 1, beta: 0.5}, // serial, several row blocks
		// Above batchSplitWork: split by rows inside each product, over
		// an A prepacked once.
		{transA: true, m: 700, n: 130, k: 200, alpha: 1, beta: 0},
	} {
		const batch = 5
		as, bs, cs := make([][]float32, batch), make([][]float32, batch), make([][]float32, batch)
		var lda, ldb, ldc int
		for i := range batch {
			as[i], lda, bs[i], ldb, cs[i], ldc = g.operands(r)
		}
		// Pack the batch with a gap between consecutive operands.
		join := func(parts [][]float32) ([]float32, int) {
			stride := len(parts[0]) + 3
			out := make([]float32, stride*len(parts))
			for i, p := range parts {
				copy(out[i*stride:], p)
			}
			return out, stride
		}
		b, sb := join(bs)
		c, sc := join(cs)
		for _, shared := range []bool{false, true} {
			a, sa := join(as)
			if shared { // one A for all, as a convolution's weight
				for i := range as {
					as[i] = as[0]
				}
				a, sa = as[0], 0
			}
			for _, procs := range []int{1, 2} {
				got := append([]float32(nil), c...)
				func() {
					defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
					SgemmBatched(g.transA, g.transB, g.m, g.n, g.k, g.alpha, a, lda, sa, b, ldb, sb, g.beta, got, ldc, sc, batch)
				}()
				for i := range batch {
					want := append([]float32(nil), cs[i]...)
					Sgemm(g.transA, g.transB, g.m, g.n, g.k, g.alpha, as[i], lda, bs[i], ldb, g.beta, want, ldc)
					if !bitsEqual(got[i*sc:i*sc+len(want)], want) {
						t.Fatalf("%v: batch item %d with GOMAXPROCS=%d, shared A %v, differs from a lone Sgemm", g, i, procs, shared)
					}
					checkAgainstNaive(t, g, as[i], lda, bs[i], ldb, cs[i], got[i*sc:i*sc+len(want)], ldc)
				}
			}
		}
	}
}

// TestSgemmBatchedAccumulate checks that products sharing C (strideC 0) run
// in order, as a weight gradient summed over a batch needs.
func TestSgemmBatchedAccumulate(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	const m, n, k, batch = 8, 9, 10, 16
	a, b := randSlice(r, batch*m*k), randSlice(r, batch*k*n)
	want := randSlice(r, m*n)
	got := append([]float32(nil), want...)
	for i := range batch {
		Sgemm(false, true, m, n, k, 1, a[i*m*k:], k, b[i*k*n:], k, 1, want, n)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	SgemmBatched(false, true, m, n, k, 1, a, k, m*k, b, k, k*n, 1, got, n, 0, batch)
	if !bitsEqual(got, want) {
		t.Errorf("accumulated batch differs from sequential calls")
	}
}

// FuzzSgemm checks random shapes, paddings, transposes and scalars against
// the float64 reference, with every micro-kernel and one or two workers.
func FuzzSgemm(f *testing.F) {
	f.Add(uint8(1), uint8(1), uint16(1), uint8(0), uint8(0), int8(2), int8(0), uint64(1))
	f.Add(uint8(13), uint8(35), uint16(300), uint8(2), uint8(3), int8(-3), int8(1), uint64(2))
	f.Add(uint8(100), uint8(97), uint16(17), uint8(1), uint8(1), int8(1), int8(-2), uint64(3))
	f.Add(uint8(255), uint8(2), uint16(64), uint8(0), uint8(2), int8(4), int8(0), uint64(4))
	f.Fuzz(func(t *testing.T, m, n uint8, k uint16, pad, trans uint8, alpha, beta int8, seed uint64) {
		g := gemmCase{
			transA: trans&1 != 0, transB: trans&2 != 0,
			m: int(m), n: int(n), k: int(k % 700), pad: int(pad % 5),
			alpha: float32(alpha) / 2, beta: float32(beta) / 2,
		}
		r := rand.New(rand.NewPCG(seed, 0))
		a, lda, b, ldb, c, ldc := g.operands(r)
		for _, kern := range available {
			for _, threads := range []int{1, 2} {
				got := append([]float32(nil), c...)
				sgemm(kern, threads, g.transA, g.transB, g.m, g.n, g.k, g.alpha, a, lda, b, ldb, g.beta, got, ldc)
				checkAgainstNaive(t, g, a, lda, b, ldb, c, got, ldc)
			}
		}
	})
}

// TestSgemmNoAllocs checks that a steady stream of serial products reuses its
// pooled packing buffers instead of allocating.
func TestSgemmNoAllocs(t *testing.T) {
	const m, n, k = 100, 90, 300
	a, b, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
	allocs := testing.AllocsPerRun(20, func() {
		sgemm(best, 1, false, true, m, n, k, 1, a, k, b, k, 0, c, n)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per call, want 0", allocs)
	}
}

// TestTranspose checks each micro-kernel's transposing copy (used to pack a
// transposed B or an untransposed A) against its definition for every row
// count, lengths around its block size and padded strides, and that it
// writes nothing outside the rows it copies.
func TestTranspose(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	for _, kern := range available {
		if kern.transpose == nil {
			continue
		}
		for rows := 1; rows <= kern.maxRows; rows++ {
			for _, k := range []int{1, 7, 8, 9, 15, 16, 17, 31, 33, 40} {
				for _, pad := range []int{0, 3} {
					ld, stride := k+2, rows+pad
					src := randSlice(r, rows*ld)
					dst := make([]float32, k*stride+16)
					for i := range dst {
						dst[i] = float32(math.NaN())
					}
					kern.transpose(src, ld, k, dst, stride, rows)
					for i, v := range dst {
						p, j := i/stride, i%stride
						want := float32(math.NaN())
						if p < k && j < rows {
							want = src[j*ld+p]
						}
						if math.Float32bits(v) != math.Float32bits(want) {
							t.Fatalf("%s: rows %d, k %d, stride %d: dst[%d] = %v, want %v", kern.name, rows, k, stride, i, v, want)
						}
					}
				}
			}
		}
	}
}

func TestPackRows(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 20))
	for _, kern := range available {
		if kern.packRows == nil {
			continue
		}
		for _, width := range []int{2, 4, 6, 8, 10, 12, 16, 32} {
			for _, k := range []int{1, 2, 8, 9, 10, 33} {
				for _, panels := range []int{1, 3} {
					for _, alpha := range []float32{1, -0.3} {
						ld := panels*width + 3
						src := randSlice(r, k*ld)
						src[0] = float32(math.Inf(1))
						dst := make([]float32, panels*k*width+16)
						for i := range dst {
							dst[i] = float32(math.NaN())
						}
						kern.packRows(src, ld, k, dst, panels, width, alpha)
						for i, v := range dst {
							want := float32(math.NaN())
							if i < panels*k*width {
								j, p, c := i/(k*width), i%(k*width)/width, i%width
								want = src[p*ld+j*width+c]
								if alpha != 1 {
									want *= alpha
								}
							}
							if math.Float32bits(v) != math.Float32bits(want) {
								t.Fatalf("%s: width %d, k %d, panels %d, alpha %v: dst[%d] = %v, want %v", kern.name, width, k, panels, alpha, i, v, want)
							}
						}
					}
				}
			}
		}
	}
}
