package dist

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

// The checks in this file run on every rank of a communicator: in memory
// here (Group), and in MPI jobs in mpi_test.go.

// layout is the shape of one AllReduce's Bufs: the lengths of its float32
// and float64 slices.
type layout struct {
	name     string
	f32, f64 []int
}

var layouts = []layout{
	{"one float32 slice", []int{1000}, nil},
	{"float64 only", nil, []int{1000, 7}},
	{"gradients and scalars", []int{0, 3, 0, 17, 1, 250}, []int{5}},
	{"fewer elements than ranks", []int{1}, []int{1}},
	{"empty", nil, nil},
}

// rankData returns rank r's data for l: values of magnitudes 10⁻³..10², so
// that the order of additions shows in the rounding. With integers set,
// small integers, whose sums are exact in any order.
func rankData(l layout, r int, integers bool) Bufs {
	rng := rand.New(rand.NewPCG(uint64(r), 7))
	value := func() float64 {
		if integers {
			return float64(rng.IntN(201) - 100)
		}
		return rng.NormFloat64() * math.Pow(10, float64(rng.IntN(6)-3))
	}
	var b Bufs
	for _, n := range l.f32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(value())
		}
		b.F32 = append(b.F32, x)
	}
	for _, n := range l.f64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = value()
		}
		b.F64 = append(b.F64, x)
	}
	return b
}

// ringSum returns the sum of the ranks' values, x[r] being rank r's value of
// an element of chunk k out of n: added in the order the package
// documentation promises, from rank k on around the ring.
func ringSum[T float32 | float64](x []T, k int) T {
	n := len(x)
	s := x[k]
	for j := 1; j < n; j++ {
		s += x[(k+j)%n]
	}
	return s
}

// chunkOf returns the chunk out of n that element i of a length-total
// vector belongs to.
func chunkOf(i, total, n int) int {
	for k := range n {
		if i < (k+1)*total/n {
			return k
		}
	}
	panic("element outside the vector")
}

// checkAllReduce sums rankData over c's ranks and compares every element
// with the independent ringSum, bit for bit, and with the float64 sum
// within the rounding of n float32 additions.
func checkAllReduce(t *testing.T, c Comm, l layout, integers bool) {
	t.Helper()
	n := c.Size()
	all := make([]Bufs, n)
	for r := range all {
		all[r] = rankData(l, r, integers)
	}
	got := rankData(l, c.Rank(), integers)
	c.AllReduce(got)
	total32 := 0
	for _, x := range got.F32 {
		total32 += len(x)
	}
	vals32, vals64 := make([]float32, n), make([]float64, n)
	i := 0
	for s, x := range got.F32 {
		for j, v := range x {
			vals := vals32
			var exact, mag float64
			for r := range all {
				vals[r] = all[r].F32[s][j]
				exact += float64(vals[r])
				mag += math.Abs(float64(vals[r]))
			}
			want := ringSum(vals, chunkOf(i, total32, n))
			if math.Float32bits(v) != math.Float32bits(want) {
				t.Errorf("%s: rank %d: float32 element %d = %v, want %v", l.name, c.Rank(), i, v, want)
			}
			if tol := float64(n) * 0x1p-24 * mag; math.Abs(float64(v)-exact) > tol || integers && float64(v) != exact {
				t.Errorf("%s: rank %d: float32 element %d = %v, exact sum %v", l.name, c.Rank(), i, v, exact)
			}
			i++
		}
	}
	total64 := 0
	for _, x := range got.F64 {
		total64 += len(x)
	}
	i = 0
	for s, x := range got.F64 {
		for j, v := range x {
			vals := vals64
			for r := range all {
				vals[r] = all[r].F64[s][j]
			}
			if want := ringSum(vals, chunkOf(i, total64, n)); math.Float64bits(v) != math.Float64bits(want) {
				t.Errorf("%s: rank %d: float64 element %d = %v, want %v", l.name, c.Rank(), i, v, want)
			}
			i++
		}
	}
}

// digest is a hash of b's bits, to compare results between ranks and runs.
func digest(b Bufs) uint64 {
	h := fnv.New64a()
	for _, x := range b.F32 {
		h.Write(asBytes(x))
	}
	for _, x := range b.F64 {
		h.Write(asBytes(x))
	}
	return h.Sum64()
}

// reduceDigest returns the digest of the sum of rankData(l, ·, false).
func reduceDigest(c Comm, l layout) uint64 {
	b := rankData(l, c.Rank(), false)
	c.AllReduce(b)
	return digest(b)
}

// checkBroadcast broadcasts from every root in turn and checks that every
// rank ends with root's data, of every element type.
func checkBroadcast(t *testing.T, c Comm) {
	t.Helper()
	for root := range c.Size() {
		b := rankData(layouts[2], c.Rank(), false)
		b.Bytes = [][]byte{[]byte(fmt.Sprintf("rank %03d", c.Rank())), {}}
		want := rankData(layouts[2], root, false)
		c.Broadcast(root, b)
		if digest(b) != digest(want) {
			t.Errorf("rank %d: floats broadcast from %d differ from root's", c.Rank(), root)
		}
		if w := fmt.Sprintf("rank %03d", root); string(b.Bytes[0]) != w {
			t.Errorf("rank %d: bytes broadcast from %d = %q, want %q", c.Rank(), root, b.Bytes[0], w)
		}
		if got := BroadcastBytes(c, root, []byte(fmt.Sprint(c.Rank()))); string(got) != fmt.Sprint(root) {
			t.Errorf("rank %d: BroadcastBytes from %d = %q", c.Rank(), root, got)
		}
	}
}

// errBad is the error the error-agreement checks inject.
type errBad struct{ rank int }

func (e *errBad) Error() string { return fmt.Sprintf("bad input on rank %d", e.rank) }

// agreeCase is one pattern of failing ranks and the message every rank must
// then end with.
type agreeCase struct {
	name    string
	failing func(rank, size int) bool
	want    func(size int) string
}

var agreeCases = []agreeCase{
	{"none", func(int, int) bool { return false }, func(int) string { return "" }},
	{"last rank", func(r, n int) bool { return r == n-1 }, func(n int) string {
		return fmt.Sprintf("rank %d: bad input on rank %d", n-1, n-1)
	}},
	{"all but rank 0", func(r, n int) bool { return r > 0 }, func(n int) string {
		if n == 1 {
			return ""
		}
		return "rank 1: bad input on rank 1"
	}},
	{"every rank", func(int, int) bool { return true }, func(int) string { return "bad input on rank 0" }},
}

// checkAgree runs AgreeError with tc's failing ranks and returns the message
// this rank ended with ("" for none).
func checkAgree(t *testing.T, c Comm, tc agreeCase) string {
	t.Helper()
	var err error
	failing := tc.failing(c.Rank(), c.Size())
	if failing {
		err = &errBad{c.Rank()}
	}
	got := AgreeError(c, err)
	msg := ""
	if got != nil {
		msg = got.Error()
	}
	want := tc.want(c.Size())
	if c.Size() == 1 && failing {
		want = err.Error()
	}
	if msg != want {
		t.Errorf("%s: rank %d: AgreeError = %q, want %q", tc.name, c.Rank(), msg, want)
	}
	var bad *errBad
	if failing != errors.As(got, &bad) || failing && bad.rank != c.Rank() {
		t.Errorf("%s: rank %d: errors.As finds %v, want this rank's own error only where it failed", tc.name, c.Rank(), bad)
	}
	return msg
}

// checkBarrier checks that no rank leaves a barrier before every rank has
// entered it; count is shared by the ranks when they share memory, and nil
// otherwise.
func checkBarrier(t *testing.T, c Comm, count *atomic.Int64) {
	t.Helper()
	for round := range 3 {
		if count != nil {
			count.Add(1)
		}
		c.Barrier()
		if count != nil {
			if got, want := count.Load(), int64((round+1)*c.Size()); got < want {
				t.Errorf("rank %d left barrier %d with %d arrivals, want %d", c.Rank(), round, got, want)
			}
		}
		c.Barrier()
	}
}

// onRanks runs f on every rank of a Group of n, each in its own goroutine.
func onRanks(n int, f func(c Comm)) {
	var wg sync.WaitGroup
	for _, c := range Group(n) {
		wg.Go(func() { f(c) })
	}
	wg.Wait()
}

func TestGroupAllReduce(t *testing.T) {
	for n := 1; n <= 5; n++ {
		for _, l := range layouts {
			for _, integers := range []bool{false, true} {
				onRanks(n, func(c Comm) { checkAllReduce(t, c, l, integers) })
			}
		}
	}
}

// TestGroupSegments cuts the ring's messages into segments of 40 bytes (5
// float64 or 10 float32 values), each piece of the vector into several.
func TestGroupSegments(t *testing.T) {
	defer func(b int) { segmentBytes = b }(segmentBytes)
	segmentBytes = 40
	for n := 2; n <= 4; n++ {
		for _, l := range append(layouts, layout{"long", []int{1000, 7, 93}, []int{3, 61}}) {
			onRanks(n, func(c Comm) { checkAllReduce(t, c, l, false) })
		}
	}
}

// TestGroupBitIdentical checks that every rank gets the same bits, in
// repeated runs.
func TestGroupBitIdentical(t *testing.T) {
	for n := 2; n <= 4; n++ {
		var digests [2][]uint64
		for run := range digests {
			digests[run] = make([]uint64, n)
			onRanks(n, func(c Comm) { digests[run][c.Rank()] = reduceDigest(c, layouts[2]) })
		}
		for run, d := range digests {
			if slices.Min(d) != slices.Max(d) || d[0] != digests[0][0] {
				t.Errorf("%d ranks, run %d: digests %x, want all equal to run 0's %x", n, run, d, digests[0][0])
			}
		}
	}
}

func TestGroupBroadcast(t *testing.T) {
	for n := 1; n <= 4; n++ {
		onRanks(n, func(c Comm) { checkBroadcast(t, c) })
	}
}

func TestGroupBarrier(t *testing.T) {
	for n := 1; n <= 4; n++ {
		var count atomic.Int64
		onRanks(n, func(c Comm) { checkBarrier(t, c, &count) })
	}
}

func TestAgreeError(t *testing.T) {
	for n := 1; n <= 4; n++ {
		for _, tc := range agreeCases {
			onRanks(n, func(c Comm) { checkAgree(t, c, tc) })
		}
	}
}

func TestLocal(t *testing.T) {
	var c Comm = Local{}
	if c.Rank() != 0 || c.Size() != 1 {
		t.Fatalf("Local is rank %d of %d, want 0 of 1", c.Rank(), c.Size())
	}
	for _, l := range layouts {
		checkAllReduce(t, c, l, false)
	}
	checkBroadcast(t, c)
	checkBarrier(t, c, nil)
	for _, tc := range agreeCases {
		checkAgree(t, c, tc)
	}
	err := &errBad{0}
	if got := AgreeError(c, err); got != error(err) {
		t.Errorf("AgreeError on Local = %v, want the error itself", got)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

func TestSame(t *testing.T) {
	onRanks(3, func(c Comm) {
		if err := Same(c, "data", []byte("abc")); err != nil {
			t.Errorf("rank %d: equal bytes: %v", c.Rank(), err)
		}
		b := []byte("abc")
		if c.Rank() == 2 {
			b = []byte("abd")
		}
		err := Same(c, "data", b)
		if want := "rank 2: data differs from rank 0's"; err == nil || err.Error() != want {
			t.Errorf("rank %d: Same = %v, want %q", c.Rank(), err, want)
		}
	})
}

// Every rank of a failed program ends with the failing rank's line and exit
// status, chosen by the type of its error, which only that rank knows.
func TestAgreeExit(t *testing.T) {
	// exit is a command's choice: status 2 for an *errBad, 1 otherwise.
	exit := func(err error) (string, int) {
		if bad := (*errBad)(nil); errors.As(err, &bad) {
			return "usage: " + bad.Error(), 2
		}
		return err.Error(), 1
	}
	for n := 1; n <= 4; n++ {
		onRanks(n, func(c Comm) {
			var err error
			if c.Rank() == n-1 {
				err = &errBad{c.Rank()}
			}
			agreed := AgreeError(c, err)
			line, code := exit(agreed)
			line, code = AgreeExit(c, agreed, line, code)
			if want := fmt.Sprintf("usage: bad input on rank %d", n-1); line != want || code != 2 {
				t.Errorf("%d ranks: rank %d ends with %q, status %d; want %q, 2", n, c.Rank(), line, code, want)
			}
		})
	}
	// An error every rank met alike is left as it is.
	onRanks(2, func(c Comm) {
		line, code := AgreeExit(c, errors.New("alike"), "alike", 3)
		if line != "alike" || code != 3 {
			t.Errorf("rank %d: AgreeExit of a common error = %q, %d", c.Rank(), line, code)
		}
	})
}

func TestShare(t *testing.T) {
	for _, tc := range []struct{ k, size int }{{8, 1}, {8, 2}, {8, 3}, {2, 4}, {0, 2}, {7, 7}} {
		next := 0
		for r := range tc.size {
			lo, hi := Share(tc.k, r, tc.size)
			if lo != next || hi < lo || hi-lo > (tc.k+tc.size-1)/tc.size || hi-lo < tc.k/tc.size {
				t.Errorf("Share(%d, %d, %d) = [%d, %d), want contiguous, balanced parts from %d", tc.k, r, tc.size, lo, hi, next)
			}
			next = hi
		}
		if next != tc.k {
			t.Errorf("Share(%d, ·, %d) covers %d items", tc.k, tc.size, next)
		}
	}
}

func TestAllReduceBytesPanics(t *testing.T) {
	for _, c := range []Comm{Local{}, Group(2)[0]} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%T: AllReduce of bytes did not panic", c)
				}
			}()
			c.AllReduce(Bufs{Bytes: [][]byte{{1}}})
		}()
	}
}
