package kernels

import "fmt"

// The vector passes: the sums and scaled adds that clipping makes over whole
// gradients. They are memory-bound, so the assembly versions aim at the
// speed of the caches, which a scalar loop with one dependency chain is far
// below.

// vecOps is one implementation of the vector passes. Arguments have equal
// lengths.
type vecOps struct {
	name     string
	sqNorm   func(x []float32) float64
	dot      func(x, y []float32) float64
	axpy     func(a float32, x, y []float32)
	axpyZero func(a float32, x, y []float32)
	scale    func(a float32, x []float32)
	// axpyMany adds c[k]·x[off[k]+j] into y[j] for every k in order, as
	// len(c) calls of axpy (at least one) would, in one pass over y.
	axpyMany func(y, x []float32, off []int, c []float32)
	// addRows adds src[r·lds+i] into dst[r·ldd+i] for r < rows, i < n
	// (Col2im's fold of one kernel tap).
	addRows func(dst []float32, ldd int, src []float32, lds, rows, n int)
}

// vecGo is the portable implementation.
var vecGo = &vecOps{name: "go", sqNorm: sqNormGo, dot: dotGo, axpy: axpyGo, axpyZero: axpyZeroGo, scale: scaleGo, axpyMany: axpyManyGo, addRows: addRowsGo}

// SqNorm returns Σ x_j², accumulated in float64. The order of the additions
// depends only on len(x), so the result is reproducible. A finite x cannot
// overflow (a float32 squared fits a float64); NaN or ±Inf in x give NaN or
// +Inf.
func SqNorm(x []float32) float64 { return vec.sqNorm(x) }

// Dot returns Σ x_j·y_j over the len(x) elements of x, accumulated in
// float64 like SqNorm. It panics if y is shorter than x.
func Dot(x, y []float32) float64 {
	if len(y) < len(x) {
		panic("kernels: Dot: y shorter than x")
	}
	return vec.dot(x, y[:len(x)])
}

// Axpy adds a·x into the first len(x) elements of y, each element as one
// fused multiply-add in the assembly versions (the Go version may round the
// product on its own).
// It panics if y is shorter than x.
func Axpy(a float32, x, y []float32) {
	if len(y) < len(x) {
		panic("kernels: Axpy: y shorter than x")
	}
	vec.axpy(a, x, y[:len(x)])
}

// AxpyZero adds a·x into the first len(x) elements of y, as Axpy, and sets
// x to zero: moving a scaled gradient into a running sum takes one pass
// instead of two. x and y must not overlap. It panics if y is shorter than x.
func AxpyZero(a float32, x, y []float32) {
	if len(y) < len(x) {
		panic("kernels: AxpyZero: y shorter than x")
	}
	vec.axpyZero(a, x, y[:len(x)])
}

// AxpyMany adds Σ_k c[k]·x[k·stride : k·stride+len(y)] into y: for each
// element the terms in the order of k, each as Axpy adds it, so y ends with
// the values of len(c) Axpy calls in order. Terms whose c[k] is 0 are left
// out, so that a NaN or an infinity in their x does not reach y. Where the
// assembly runs, y is loaded and stored once for every 16 terms while they
// stream past it: a weighted sum of vectors that do not fit the caches
// runs at about the speed of reading them. It panics if x is too short.
func AxpyMany(y, c, x []float32, stride int) {
	if len(c) > 0 && (stride < 0 || len(x) < (len(c)-1)*stride+len(y)) {
		panic(fmt.Sprintf("kernels: AxpyMany: %d vectors of %d, %d apart, in %d elements", len(c), len(y), stride, len(x)))
	}
	axpyMany(vec, y, c, x, stride)
}

// axpyMany is AxpyMany on ops, its arguments checked: the terms in groups
// of up to manyTerms, without the zero ones.
func axpyMany(ops *vecOps, y, c, x []float32, stride int) {
	if len(y) == 0 {
		return
	}
	var off [manyTerms]int
	var cs [manyTerms]float32
	n := 0
	for k, ck := range c {
		if ck == 0 {
			continue
		}
		off[n], cs[n] = k*stride, ck
		if n++; n == manyTerms {
			ops.axpyMany(y, x, off[:n], cs[:n])
			n = 0
		}
	}
	if n > 0 {
		ops.axpyMany(y, x, off[:n], cs[:n])
	}
}

// manyTerms is how many terms one axpyMany call takes: AxpyMany's lists of
// them stay on the stack.
const manyTerms = 16

// Scale multiplies x by a.
func Scale(a float32, x []float32) { vec.scale(a, x) }

// AddRows adds src[r·lds+i] into dst[r·ldd+i] for r < rows and i < n: a
// block of rows of one matrix into another (Col2im's fold of a kernel tap,
// a convolution's ghost norm adding a shifted block of a Gram matrix). It
// panics if a slice is too short for the block.
func AddRows(dst []float32, ldd int, src []float32, lds, rows, n int) {
	if rows < 0 || n < 0 || (rows > 0 && n > 0 && (len(dst) < (rows-1)*ldd+n || len(src) < (rows-1)*lds+n)) {
		panic(fmt.Sprintf("kernels: AddRows: %d rows of %d in %d (ld %d) and %d (ld %d) elements", rows, n, len(dst), ldd, len(src), lds))
	}
	vec.addRows(dst, ldd, src, lds, rows, n)
}

// sqNormGo and dotGo keep four interleaved partial sums: independent
// dependency chains run about three times faster than one.
func sqNormGo(x []float32) float64 {
	var s0, s1, s2, s3 float64
	n := len(x) &^ 3
	for j := 0; j < n; j += 4 {
		a, b, c, d := float64(x[j]), float64(x[j+1]), float64(x[j+2]), float64(x[j+3])
		s0 += a * a
		s1 += b * b
		s2 += c * c
		s3 += d * d
	}
	for _, v := range x[n:] {
		s0 += float64(v) * float64(v)
	}
	return (s0 + s1) + (s2 + s3)
}

func dotGo(x, y []float32) float64 {
	y = y[:len(x)]
	var s0, s1, s2, s3 float64
	n := len(x) &^ 3
	for j := 0; j < n; j += 4 {
		s0 += float64(x[j]) * float64(y[j])
		s1 += float64(x[j+1]) * float64(y[j+1])
		s2 += float64(x[j+2]) * float64(y[j+2])
		s3 += float64(x[j+3]) * float64(y[j+3])
	}
	for j := n; j < len(x); j++ {
		s0 += float64(x[j]) * float64(y[j])
	}
	return (s0 + s1) + (s2 + s3)
}

func axpyGo(a float32, x, y []float32) {
	y = y[:len(x)]
	for j, v := range x {
		y[j] += a * v
	}
}

func axpyManyGo(y, x []float32, off []int, c []float32) {
	for k, ck := range c {
		axpyGo(ck, x[off[k]:off[k]+len(y)], y)
	}
}

func axpyZeroGo(a float32, x, y []float32) {
	axpyGo(a, x, y)
	clear(x)
}

func scaleGo(a float32, x []float32) {
	for j := range x {
		x[j] *= a
	}
}

func addRowsGo(dst []float32, ldd int, src []float32, lds, rows, n int) {
	for r := range rows {
		d, s := dst[r*ldd:r*ldd+n], src[r*lds:r*lds+n]
		s = s[:len(d)] // no bounds checks in the loop
		for i, v := range s {
			d[i] += v
		}
	}
}
