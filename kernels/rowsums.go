package kernels

import (
	"fmt"
	"math"
)

// The sums over the rows of a layer norm's input and output gradient: each
// row summed in order, sixteen rows at a time (one row a lane) where the
// assembly runs, so that every row's sums are the portable code's. Which
// rows a call gives the assembly, the eight- or four-row loops and the
// one-row loop depends on how the caller splits the rows among
// goroutines, so all of them must give the same bits: the Go code rounds
// every product with an explicit conversion, which the Go spec forbids a
// compiler to fuse into a multiply-add (GOAMD64=v3 and arm64 fuse
// otherwise, and the assembly multiplies and adds apart).

// maxGatherStride is the longest row the assembly takes: the offsets of
// sixteen rows' values, 15·d floats, are gathered as int32 byte offsets.
const maxGatherStride = 1 << 25

// RowStats sets mean[r] to the mean of row r of x and rstd[r] to
// 1/√(var+eps), var the biased variance, for the len(mean) rows of d values
// in x (row r at x[r·d:]): a layer norm's statistics. Both sums run in
// float64 over the row in order. rstd must be as long as mean, and x must
// hold len(mean)·d values, d ≥ 1.
func RowStats(x []float32, d int, eps float64, mean, rstd []float64) {
	rows := len(mean)
	if d < 1 || len(rstd) != rows || len(x) < rows*d {
		panic(fmt.Sprintf("kernels: RowStats: %d rows of %d in %d values, %d rstd", rows, d, len(x), len(rstd)))
	}
	r := 0
	if rowStatsAsm != nil && d <= maxGatherStride {
		for ; r+16 <= rows; r += 16 {
			rowStatsAsm(&x[r*d], d, eps, &mean[r], &rstd[r])
		}
	}
	for ; r+8 <= rows; r += 8 {
		rowStats8(x[r*d:(r+8)*d], d, eps, mean[r:r+8], rstd[r:r+8])
	}
	for ; r < rows; r++ {
		mean[r], rstd[r] = rowStats(x[r*d:(r+1)*d], eps)
	}
}

// rowStats returns the mean of xr and 1/√(var+eps), summed in float64 in
// order.
func rowStats(xr []float32, eps float64) (mean, rstd float64) {
	var sum float64
	for _, v := range xr {
		sum += float64(v)
	}
	mean = sum / float64(len(xr))
	var ss float64
	for _, v := range xr {
		e := float64(v) - mean
		ss += float64(e * e)
	}
	return mean, 1 / math.Sqrt(ss/float64(len(xr))+eps)
}

// rowStats8 is rowStats of the eight rows of d values in x at once: each
// row's sums take the same steps in the same order, and the eight chains
// of dependent additions overlap.
func rowStats8(x []float32, d int, eps float64, mean, rstd []float64) {
	x0, x1, x2, x3 := x[:d], x[d:2*d], x[2*d:3*d], x[3*d:4*d]
	x4, x5, x6, x7 := x[4*d:5*d], x[5*d:6*d], x[6*d:7*d], x[7*d:8*d]
	var s0, s1, s2, s3, s4, s5, s6, s7 float64
	for j, v := range x0 {
		s0 += float64(v)
		s1 += float64(x1[j])
		s2 += float64(x2[j])
		s3 += float64(x3[j])
		s4 += float64(x4[j])
		s5 += float64(x5[j])
		s6 += float64(x6[j])
		s7 += float64(x7[j])
	}
	n := float64(d)
	m0, m1, m2, m3, m4, m5, m6, m7 := s0/n, s1/n, s2/n, s3/n, s4/n, s5/n, s6/n, s7/n
	var q0, q1, q2, q3, q4, q5, q6, q7 float64
	for j, v := range x0 {
		e0, e1, e2, e3 := float64(v)-m0, float64(x1[j])-m1, float64(x2[j])-m2, float64(x3[j])-m3
		e4, e5, e6, e7 := float64(x4[j])-m4, float64(x5[j])-m5, float64(x6[j])-m6, float64(x7[j])-m7
		q0 += float64(e0 * e0)
		q1 += float64(e1 * e1)
		q2 += float64(e2 * e2)
		q3 += float64(e3 * e3)
		q4 += float64(e4 * e4)
		q5 += float64(e5 * e5)
		q6 += float64(e6 * e6)
		q7 += float64(e7 * e7)
	}
	copy(mean[:8], []float64{m0, m1, m2, m3, m4, m5, m6, m7})
	for i, q := range [8]float64{q0, q1, q2, q3, q4, q5, q6, q7} {
		rstd[i] = 1 / math.Sqrt(q/n+eps)
	}
}

// GradSums sets sg[r] to the mean over j of ĝ = dy[r·d+j]·w[j] and sgx[r]
// to that of ĝ·h[r·d+j], for the len(sg) rows of d = len(w) values in dy
// and h: the sums of a layer norm's input gradient. Both sums run in
// float32 over the row in order. sgx must be as long as sg, and dy and h
// must hold len(sg)·d values, d ≥ 1.
func GradSums(dy, h, w []float32, sg, sgx []float32) {
	rows, d := len(sg), len(w)
	if d < 1 || len(sgx) != rows || len(dy) < rows*d || len(h) < rows*d {
		panic(fmt.Sprintf("kernels: GradSums: %d rows of %d in %d and %d values, %d sgx", rows, d, len(dy), len(h), len(sgx)))
	}
	r := 0
	if gradSumsAsm != nil && d <= maxGatherStride {
		for ; r+16 <= rows; r += 16 {
			gradSumsAsm(&dy[r*d], &h[r*d], &w[0], d, &sg[r], &sgx[r])
		}
	}
	for ; r+4 <= rows; r += 4 {
		gradSums4(dy[r*d:(r+4)*d], h[r*d:(r+4)*d], w, sg[r:r+4], sgx[r:r+4])
	}
	for ; r < rows; r++ {
		sg[r], sgx[r] = gradSums(dy[r*d:(r+1)*d], h[r*d:(r+1)*d], w)
	}
}

// gradSums returns GradSums's sums of one row.
func gradSums(dyr, h, w []float32) (sg, sgx float32) {
	h, w = h[:len(dyr)], w[:len(dyr)]
	for j, g := range dyr {
		gh := float32(g * w[j])
		sg += gh
		sgx += float32(gh * h[j])
	}
	return sg / float32(len(dyr)), sgx / float32(len(dyr))
}

// gradSums4 is gradSums of the four rows of len(w) values in dy and h at
// once, each summed as gradSums does, the four rows' chains of additions
// overlapping.
func gradSums4(dy, h, w []float32, sg, sgx []float32) {
	d := len(w)
	g0, g1, g2, g3 := dy[:d], dy[d:2*d], dy[2*d:3*d], dy[3*d:4*d]
	h0, h1, h2, h3 := h[:d], h[d:2*d], h[2*d:3*d], h[3*d:4*d]
	var a0, a1, a2, a3, b0, b1, b2, b3 float32
	for j, g := range g0 {
		wj := w[j]
		e0, e1, e2, e3 := float32(g*wj), float32(g1[j]*wj), float32(g2[j]*wj), float32(g3[j]*wj)
		a0 += e0
		b0 += float32(e0 * h0[j])
		a1 += e1
		b1 += float32(e1 * h1[j])
		a2 += e2
		b2 += float32(e2 * h2[j])
		a3 += e3
		b3 += float32(e3 * h3[j])
	}
	n := float32(d)
	copy(sg[:4], []float32{a0 / n, a1 / n, a2 / n, a3 / n})
	copy(sgx[:4], []float32{b0 / n, b1 / n, b2 / n, b3 / n})
}
