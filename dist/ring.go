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
	// bytes from rank from.
	sendRecv(to int, send []byte, from int, recv []byte)
	// bcast copies root's b over every other rank's b.
	bcast(root int, b []byte)
	barrier()
	abort(code int)
	close() error
}

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
	right, left := (r+1)%n, (r+n-1)%n
	c.recv = grow(c.recv, v.maxBytes)
	recv := asBytes(c.recv)
	for s := range n - 1 {
		in := (r - s - 1 + 2*n) % n
		c.t.sendRecv(right, c.message((r-s+n)%n, v), left, recv[:v.bytes(in)])
		v.add(in, recv)
	}
	for s := range n - 1 {
		in := (r - s + n) % n
		dst, whole := v.view(in)
		if !whole {
			dst = recv[:v.bytes(in)]
		}
		c.t.sendRecv(right, c.message((r-s+1+n)%n, v), left, dst)
		if !whole {
			v.unpack(in, dst)
		}
	}
}

// message returns chunk k of v as the bytes to send: its own memory when it
// lies in one slice, else a copy in c.send.
func (c *comm) message(k int, v *vector) []byte {
	if b, whole := v.view(k); whole {
		return b
	}
	c.send = grow(c.send, v.maxBytes)
	b := asBytes(c.send)[:v.bytes(k)]
	v.pack(k, b)
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
// one message, its float64 elements first so that both parts are aligned.
type vector struct {
	f32      [][]float32
	f64      [][]float64
	n32, n64 int
	parts    int
	maxBytes int
}

func newVector(b Bufs, parts int) *vector {
	v := &vector{f32: b.F32, f64: b.F64, parts: parts}
	for _, x := range b.F32 {
		v.n32 += len(x)
	}
	for _, x := range b.F64 {
		v.n64 += len(x)
	}
	for k := range parts {
		v.maxBytes = max(v.maxBytes, v.bytes(k))
	}
	return v
}

func (v *vector) range32(k int) (lo, hi int) { return k * v.n32 / v.parts, (k + 1) * v.n32 / v.parts }
func (v *vector) range64(k int) (lo, hi int) { return k * v.n64 / v.parts, (k + 1) * v.n64 / v.parts }

// bytes is the length of chunk k's message.
func (v *vector) bytes(k int) int {
	lo32, hi32 := v.range32(k)
	lo64, hi64 := v.range64(k)
	return 4*(hi32-lo32) + 8*(hi64-lo64)
}

// view returns chunk k's memory when the chunk lies in one slice (or is
// empty), and false when it must be packed.
func (v *vector) view(k int) ([]byte, bool) {
	lo32, hi32 := v.range32(k)
	lo64, hi64 := v.range64(k)
	var parts [][]byte
	pieces(v.f64, lo64, hi64, func(p []float64) { parts = append(parts, asBytes(p)) })
	pieces(v.f32, lo32, hi32, func(p []float32) { parts = append(parts, asBytes(p)) })
	switch len(parts) {
	case 0:
		return nil, true
	case 1:
		return parts[0], true
	}
	return nil, false
}

// pack copies chunk k into msg.
func (v *vector) pack(k int, msg []byte) {
	v.each(k, msg, func(p, m []float64) { copy(m, p) }, func(p, m []float32) { copy(m, p) })
}

// unpack copies msg into chunk k.
func (v *vector) unpack(k int, msg []byte) {
	v.each(k, msg, func(p, m []float64) { copy(p, m) }, func(p, m []float32) { copy(p, m) })
}

// add adds msg into chunk k, element by element.
func (v *vector) add(k int, msg []byte) {
	v.each(k, msg, func(p, m []float64) {
		for i, x := range m {
			p[i] += x
		}
	}, func(p, m []float32) {
		// 1·x is exact, so each element is the rounded sum p[i] + m[i].
		kernels.Axpy(1, m, p)
	})
}

// each calls f64 and f32 on the pieces of chunk k with the matching parts
// of its message msg.
func (v *vector) each(k int, msg []byte, f64 func(p, m []float64), f32 func(p, m []float32)) {
	lo32, hi32 := v.range32(k)
	lo64, hi64 := v.range64(k)
	off := 0
	pieces(v.f64, lo64, hi64, func(p []float64) {
		f64(p, unsafe.Slice((*float64)(unsafe.Pointer(&msg[off])), len(p)))
		off += 8 * len(p)
	})
	pieces(v.f32, lo32, hi32, func(p []float32) {
		f32(p, unsafe.Slice((*float32)(unsafe.Pointer(&msg[off])), len(p)))
		off += 4 * len(p)
	})
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

// grow returns buf with room for n bytes.
func grow(buf []float64, n int) []float64 {
	if 8*len(buf) < n {
		return make([]float64, (n+7)/8)
	}
	return buf
}
