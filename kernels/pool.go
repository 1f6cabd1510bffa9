package kernels

import "fmt"

// MaxPool2d takes the maximum over every k×k window (stride apart, no
// padding) of each channel of x [c,h,w] into y [c,oh,ow], oh = (h-k)/stride+1,
// and records in idx [c,oh,ow] the offset iy·w+ix of the winner within its
// channel's [h,w] plane. The first maximum in row-major window order wins; a
// NaN wins over any number, so NaN propagates as in PyTorch.
func MaxPool2d(x []float32, c, h, w, k, stride int, y []float32, idx []int32) {
	if k <= 0 || stride <= 0 || h < k || w < k || len(x) < c*h*w {
		panic(fmt.Sprintf("kernels: MaxPool2d: bad geometry c=%d h=%d w=%d k=%d stride=%d len(x)=%d", c, h, w, k, stride, len(x)))
	}
	oh, ow := ConvOut(h, k, stride, 0), ConvOut(w, k, stride, 0)
	if len(y) < c*oh*ow || len(idx) < c*oh*ow {
		panic(fmt.Sprintf("kernels: MaxPool2d: y or idx shorter than %d", c*oh*ow))
	}
	if k == 2 && stride == 2 && maxPool2x2Asm != nil && h == 2*oh && w == 2*ow && 16%ow == 0 && oh*ow%16 == 0 {
		maxPool2x2Blocks(x[:c*h*w], c, h, w, y[:c*oh*ow], idx[:c*oh*ow])
		return
	}
	if k == 2 && stride == 2 && maxPool2x2Rows != nil && h == 2*oh && w == 2*ow && ow%8 == 0 {
		_, _, _ = x[c*h*w-1], y[c*oh*ow-1], idx[c*oh*ow-1] // the extent the assembly touches
		for ci := range c {
			maxPool2x2Rows(&x[ci*h*w], &y[ci*oh*ow], &idx[ci*oh*ow], oh, w)
		}
		return
	}
	for ci := 0; ci < c; ci++ {
		plane := x[ci*h*w : (ci+1)*h*w]
		yo, io := y[ci*oh*ow:(ci+1)*oh*ow], idx[ci*oh*ow:(ci+1)*oh*ow]
		if k == 2 && stride == 2 {
			maxPool2x2(plane, w, oh, ow, yo, io)
			continue
		}
		for oy := 0; oy < oh; oy++ {
			for ox := 0; ox < ow; ox++ {
				at := oy*stride*w + ox*stride
				best := plane[at]
				for ky := 0; ky < k; ky++ {
					row := (oy*stride+ky)*w + ox*stride
					for kx, v := range plane[row : row+k] {
						if v > best || (v != v && best == best) {
							best, at = v, row+kx
						}
					}
				}
				yo[oy*ow+ox], io[oy*ow+ox] = best, int32(at)
			}
		}
	}
}

// maxPool2x2 is MaxPool2d's common case, 2×2 windows with stride 2, for one
// channel. Which element of a window wins is data-dependent and so
// unpredictable for a branch predictor; taking the maximum first and then
// choosing the index with conditional moves avoids the mispredictions, which
// cost several times the arithmetic.
func maxPool2x2(plane []float32, w, oh, ow int, y []float32, idx []int32) {
	for oy := range oh {
		r0 := plane[2*oy*w : 2*oy*w+2*ow]
		r1 := plane[(2*oy+1)*w : (2*oy+1)*w+2*ow]
		yr, ir := y[oy*ow:oy*ow+ow], idx[oy*ow:oy*ow+ow]
		for ox := range yr {
			a0, a1, b0, b1 := r0[2*ox], r0[2*ox+1], r1[2*ox], r1[2*ox+1]
			best := max(a0, a1, b0, b1) // NaN if any is NaN
			// The first element equal to best wins, or the first NaN.
			// x == best and x != x (NaN) exclude each other, so their
			// inequality is their or, one flag the compiler turns into a
			// conditional move where || would be two branches.
			at := 2*oy*w + 2*ox + w + 1
			if (b0 == best) != (b0 != b0) {
				at = 2*oy*w + 2*ox + w
			}
			if (a1 == best) != (a1 != a1) {
				at = 2*oy*w + 2*ox + 1
			}
			if (a0 == best) != (a0 != a0) {
				at = 2*oy*w + 2*ox
			}
			yr[ox], ir[ox] = best, int32(at)
		}
	}
}

// maxPool2x2Blocks is maxPool2x2 for every channel of x [c,h,w] when the
// windows tile the planes exactly (h, w even) and the outputs of a plane
// come in blocks of 16 whole output rows (ow divides 16, 16 divides oh·ow):
// the 16 outputs of a block then pool 64 consecutive inputs in the same
// pattern, whose offsets maxPool2x2Asm takes from a table.
func maxPool2x2Blocks(x []float32, c, h, w int, y []float32, idx []int32) {
	ow := w / 2
	var tab [4][16]int32 // offsets of a0, a1, b0, b1 in a block
	for l := range 16 {
		at := int32(2*(l/ow)*w + 2*(l%ow))
		tab[0][l], tab[1][l], tab[2][l], tab[3][l] = at, at+1, at+int32(w), at+int32(w)+1
	}
	n := h * w / 4 // outputs a plane
	for ci := range c {
		maxPool2x2Asm(&x[ci*h*w], &y[ci*n], &idx[ci*n], n/16, &tab[0][0])
	}
}

// MaxPool2dBackward routes the output gradient dy [c,oh,ow] back to the
// winners MaxPool2d recorded in idx and ADDS it into dx [c,h,w].
func MaxPool2dBackward(dy []float32, idx []int32, c, h, w, oh, ow int, dx []float32) {
	n := oh * ow
	if len(dy) < c*n || len(idx) < c*n || len(dx) < c*h*w {
		panic(fmt.Sprintf("kernels: MaxPool2dBackward: buffers too short for c=%d %dx%d -> %dx%d", c, h, w, oh, ow))
	}
	for ci := 0; ci < c; ci++ {
		plane := dx[ci*h*w : (ci+1)*h*w]
		for i, g := range dy[ci*n : (ci+1)*n] {
			plane[idx[ci*n+i]] += g
		}
	}
}

// AdaptiveAvgPool2d averages each channel of x [c,h,w] down to y [c,oh,ow]
// with PyTorch's adaptive windows: output row i covers input rows
// [floor(i·h/oh), ceil((i+1)·h/oh)), and likewise for columns. Windows may
// overlap, and oh > h replicates rows.
func AdaptiveAvgPool2d(x []float32, c, h, w, oh, ow int, y []float32) {
	checkAdaptive(len(x), len(y), c, h, w, oh, ow)
	var rb, cb [2 * 16]int
	rows, cols := adaptiveWindows(rb[:0], h, oh), adaptiveWindows(cb[:0], w, ow)
	// A channel at a time, its plane in cache; the windows' bounds
	// (divisions) worked out once per call.
	for ci := range c {
		plane, out := x[ci*h*w:(ci+1)*h*w], y[ci*oh*ow:(ci+1)*oh*ow]
		for oy := range oh {
			y0, y1 := rows[2*oy], rows[2*oy+1]
			for ox := range ow {
				x0, x1 := cols[2*ox], cols[2*ox+1]
				var s float32
				for iy := y0; iy < y1; iy++ {
					for _, v := range plane[iy*w+x0 : iy*w+x1] {
						s += v
					}
				}
				out[oy*ow+ox] = s / float32((y1-y0)*(x1-x0))
			}
		}
	}
}

// AdaptiveAvgPool2dBackward spreads each output gradient of dy [c,oh,ow]
// evenly over its AdaptiveAvgPool2d window and ADDS it into dx [c,h,w].
// Where windows overlap, an element receives its shares in window order.
func AdaptiveAvgPool2dBackward(dy []float32, c, h, w, oh, ow int, dx []float32) {
	checkAdaptive(len(dx), len(dy), c, h, w, oh, ow)
	var rb, cb [2 * 16]int
	rows, cols := adaptiveWindows(rb[:0], h, oh), adaptiveWindows(cb[:0], w, ow)
	for ci := range c {
		plane, g := dx[ci*h*w:(ci+1)*h*w], dy[ci*oh*ow:(ci+1)*oh*ow]
		for oy := range oh {
			y0, y1 := rows[2*oy], rows[2*oy+1]
			for ox := range ow {
				x0, x1 := cols[2*ox], cols[2*ox+1]
				share := g[oy*ow+ox] / float32((y1-y0)*(x1-x0))
				for iy := y0; iy < y1; iy++ {
					row := plane[iy*w+x0 : iy*w+x1]
					for j := range row {
						row[j] += share
					}
				}
			}
		}
	}
}

// adaptiveWindows appends the bounds of the out windows over in values
// (adaptiveWindow), start and end of each, to b.
func adaptiveWindows(b []int, in, out int) []int {
	for i := range out {
		start, end := adaptiveWindow(i, in, out)
		b = append(b, start, end)
	}
	return b
}

// adaptiveWindow is PyTorch's window [floor(i·in/out), ceil((i+1)·in/out)).
func adaptiveWindow(i, in, out int) (start, end int) {
	return i * in / out, ((i+1)*in + out - 1) / out
}

func checkAdaptive(nx, ny, c, h, w, oh, ow int) {
	if c < 0 || h <= 0 || w <= 0 || oh <= 0 || ow <= 0 || nx < c*h*w || ny < c*oh*ow {
		panic(fmt.Sprintf("kernels: adaptive avg pool: bad geometry c=%d %dx%d -> %dx%d (buffers %d, %d)", c, h, w, oh, ow, nx, ny))
	}
}
