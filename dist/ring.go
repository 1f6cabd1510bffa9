package dist

import (
	"unsafe"

	"github.com/psclip/psclip/kernels"
)

// transport moves bytes between the ranks of a job: all that the
// communicator's algorithms need from MPI or from memory.
type transport interface {
	rank() int
	size() int
	// run calls f where the transport may be used (MPI: on the OS thread
	// that initialised MPI) and returns once f has returned.
	run(f func())
	// sendRecv sends send to rank to while it receives exactly len(recv)
	// bytes from rank from. An empty message is not sent at all: both of
	// its ends know its length. Messages are at most segmentBytes long.
	sendRecv(to int, send []byte, from int, recv []byte)
	// bcast copies root's b over every other rank's b.
	bcast(root int, b []byte)
	barrier()
	abort(code int)
	close() error
}

// segmentBytes bounds the messages of the ring, and so its buffers: the
// all-reduce of a vector of any size needs two buffers of at most this
// size. It is a multiple of 8; tests lower it.
var segmentBytes = 4 << 20

// comm implements Comm over a transport. AllReduce is a ring all-reduce in
// Go, so that the order of the additions is the algorithm's, not the
// transport's (see the package documentation).
type comm struct {
	t          transport
	recv, send []float64 // the ring's message buffers, 8-byte aligned
}

func (c *comm) Rank() int { return c.t.rank() }
func (c *comm) Size() int { return c.t.size() }

func (c *comm) AllReduce(b Bufs) {
	checkSum(b)
	if c.t.size() == 1 {
		return
	}
	v := newVector(b, c.t.size())
	c.t.run(func() { c.ring(v) })
}

// ring runs the ring all-reduce on v's chunks: in step s of the
// reduce-scatter, rank r sends chunk r−s to rank r+1 and adds chunk r−s−1,
// received from rank r−1, into its own, so that after n−1 steps it holds
// the sum of chunk r+1, added in rank order starting from rank r+1; the
// all-gather then passes the finished chunks around the ring.
func (c *comm) ring(v *vector) {
	r, n := c.t.rank(), c.t.size()
	for s := range n - 1 {
		c.exchange(v, (r-s+n)%n, (r-s-1+2*n)%n, false)
	}
	for s := range n - 1 {
		c.exchange(v, (r-s+1+n)%n, (r-s+n)%n, true)
	}
}

// exchange sends chunk out to the next rank and receives chunk in from the
// previous one, segment by segment, adding each received segment into its
// own part of v, or, with gather, copying it there.
func (c *comm) exchange(v *vector, out, in int, gather bool) {
	r, n := c.t.rank(), c.t.size()
	c.recv = grow(c.recv, v.maxSegment())
	no, ni := v.segments(out), v.segments(in)
	for i := range max(no, ni) {
		var send, recv []byte
		if i < no {
			send = c.message(v.segment(out, i))
		}
		var sp span
		direct := false
		if i < ni {
			sp = v.segment(in, i)
			recv, direct = sp.view()
			direct = direct && gather
			if !direct {
				recv = asBytes(c.recv)[:sp.bytes()]
			}
		}
		c.t.sendRecv((r+1)%n, send, (r+n-1)%n, recv)
		switch {
		case i >= ni || direct:
		case gather:
			sp.unpack(recv)
		default:
			sp.add(recv)
		}
	}
}

// message returns sp as the bytes to send: its own memory when it lies in
// one slice, else a copy in c.send.
func (c *comm) message(sp span) []byte {
	if b, whole := sp.view(); whole {
		return b
	}
	c.send = grow(c.send, sp.v.maxSegment())
	b := asBytes(c.send)[:sp.bytes()]
	sp.pack(b)
	return b
}

func (c *comm) Broadcast(root int, b Bufs) {
	if root < 0 || root >= c.t.size() {
		panic("dist: Broadcast root out of range")
	}
	c.t.run(func() {
		for _, x := range b.F32 {
			c.t.bcast(root, asBytes(x))
		}
		for _, x := range b.F64 {
			c.t.bcast(root, asBytes(x))
		}
		for _, x := range b.Bytes {
			c.t.bcast(root, x)
		}
	})
}

func (c *comm) Barrier()       { c.t.run(c.t.barrier) }
func (c *comm) Abort(code int) { c.t.abort(code) }
func (c *comm) Close() error   { return c.t.close() }

// vector is the concatenation of a Bufs' float slices, cut into one chunk
// per rank: chunk k is elements [k·n/parts, (k+1)·n/parts) of the float64
// elements and the same fraction of the float32 ones. A chunk travels as
// segments of at most segmentBytes: its float64 elements, then its float32
// ones.
type vector struct {
	f32      [][]float32
	f64      [][]float64
	n32, n64 int
	parts    int
}

func newVector(b Bufs, parts int) *vector {
	v := &vector{f32: b.F32, f64: b.F64, parts: parts}
	for _, x := range b.F32 {
		v.n32 += len(x)
	}
	for _, x := range b.F64 {
		v.n64 += len(x)
	}
	return v
}

func (v *vector) range32(k int) (lo, hi int) { return k * v.n32 / v.parts, (k + 1) * v.n32 / v.parts }
func (v *vector) range64(k int) (lo, hi int) { return k * v.n64 / v.parts, (k + 1) * v.n64 / v.parts }

// segments is the number of segments of chunk k.
func (v *vector) segments(k int) int {
	lo32, hi32 := v.range32(k)
	lo64, hi64 := v.range64(k)
	return ceilDiv(hi64-lo64, segmentBytes/8) + ceilDiv(hi32-lo32, segmentBytes/4)
}

// maxSegment is the length of v's longest segment, the buffer size the
// ring needs.
func (v *vector) maxSegment() int {
	return min(segmentBytes, max(8*ceilDiv(v.n64, v.parts), 4*ceilDiv(v.n32, v.parts)))
}

// segment returns segment i of chunk k.
func (v *vector) segment(k, i int) span {
	lo64, hi64 := v.range64(k)
	per := segmentBytes / 8
	if n := ceilDiv(hi64-lo64, per); i < n {
		lo := lo64 + i*per
		return span{v: v, wide: true, lo: lo, hi: min(lo+per, hi64)}
	}
	i -= ceilDiv(hi64-lo64, per)
	lo32, hi32 := v.range32(k)
	per = segmentBytes / 4
	lo := lo32 + i*per
	return span{v: v, lo: lo, hi: min(lo+per, hi32)}
}

// span is elements [lo, hi) of the float64 part of v (wide) or of its
// float32 part: one message.
type span struct {
	v      *vector
	wide   bool
	lo, hi int
}

func (s span) bytes() int {
	if s.wide {
		return 8 * (s.hi - s.lo)
	}
	return 4 * (s.hi - s.lo)
}

// view returns the span's memory when it lies in one slice, and false when
// it must be packed.
func (s span) view() ([]byte, bool) {
	var b []byte
	n := 0
	s.each(nil, func(p []float64, _ []byte) { b = asBytes(p); n++ }, func(p []float32, _ []byte) { b = asBytes(p); n++ })
	return b, n == 1
}

// pack copies the span into msg.
func (s span) pack(msg []byte) {
	s.each(msg, func(p []float64, m []byte) { copy(asFloats[float64](m), p) }, func(p []float32, m []byte) { copy(asFloats[float32](m), p) })
}

// unpack copies msg into the span.
func (s span) unpack(msg []byte) {
	s.each(msg, func(p []float64, m []byte) { copy(p, asFloats[float64](m)) }, func(p []float32, m []byte) { copy(p, asFloats[float32](m)) })
}

// add adds msg into the span, element by element.
func (s span) add(msg []byte) {
	s.each(msg, func(p []float64, m []byte) {
		for i, x := range asFloats[float64](m) {
			p[i] += x
		}
	}, func(p []float32, m []byte) {
		// 1·x is exact, so each element is the rounded sum p[i] + m[i].
		kernels.Axpy(1, asFloats[float32](m), p)
	})
}

// each calls f64 or f32 on the pieces of the span that lie in one slice,
// with the matching parts of msg (nil if msg is).
func (s span) each(msg []byte, f64 func(p []float64, m []byte), f32 func(p []float32, m []byte)) {
	off := 0
	part := func(n int) []byte {
		if msg == nil {
			return nil
		}
		off += n
		return msg[off-n : off]
	}
	if s.wide {
		pieces(s.v.f64, s.lo, s.hi, func(p []float64) { f64(p, part(8*len(p))) })
	} else {
		pieces(s.v.f32, s.lo, s.hi, func(p []float32) { f32(p, part(4*len(p))) })
	}
}

// pieces calls f on the non-empty parts of the slices in xs that elements
// [lo, hi) of their concatenation cover, in order.
func pieces[T any](xs [][]T, lo, hi int, f func([]T)) {
	start := 0
	for _, x := range xs {
		end := start + len(x)
		if a, b := max(lo, start), min(hi, end); a < b {
			f(x[a-start : b-start])
		}
		if end >= hi {
			return
		}
		start = end
	}
}

// asBytes returns the memory of x as bytes.
func asBytes[T float32 | float64 | byte](x []T) []byte {
	if len(x) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&x[0])), len(x)*int(unsafe.Sizeof(x[0])))
}

// asFloats returns b, which must be aligned for T, as Ts.
func asFloats[T float32 | float64](b []byte) []T {
	if len(b) == 0 {
		return nil
	}
	var x T
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), len(b)/int(unsafe.Sizeof(x)))
}

// grow returns buf with room for n bytes.
func grow(buf []float64, n int) []float64 {
	if 8*len(buf) < n {
		return make([]float64, (n+7)/8)
	}
	return buf
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
