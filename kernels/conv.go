package kernels

import (
	"fmt"
	"sync"
)

// ConvOut is the output size of a convolution or pooling window of size k
// sliding over in elements with the given stride and zero padding on both
// sides: (in+2·pad-k)/stride+1.
func ConvOut(in, k, stride, pad int) int { return (in+2*pad-k)/stride + 1 }

// Im2col unfolds one image x of shape [c,h,w] into cols, a row-major
// [c·kh·kw, oh·ow] matrix whose row (ci·kh+ki)·kw+kj holds, for every output
// position, the input pixel that kernel tap (ci,ki,kj) sees there, or 0 where
// the tap falls into the padding. A convolution is then the GEMM
// weight[cout, c·kh·kw] × cols.
func Im2col(x []float32, c, h, w, kh, kw, stride, pad int, cols []float32) {
	oh, ow := checkConv(len(x), c, h, w, kh, kw, stride, pad)
	if len(cols) < c*kh*kw*oh*ow {
		panic(fmt.Sprintf("kernels: Im2col: cols has %d elements, need %d", len(cols), c*kh*kw*oh*ow))
	}
	if stride == 1 && oh == h && ow == w && h*w%16 == 0 && im2colAsm != nil && c > 0 {
		im2colMasked(x, c, h, w, kh, kw, pad, cols)
		return
	}
	row := 0
	for ci := 0; ci < c; ci++ {
		plane := x[ci*h*w : (ci+1)*h*w]
		for ki := 0; ki < kh; ki++ {
			for kj := 0; kj < kw; kj++ {
				dst := cols[row*oh*ow : (row+1)*oh*ow]
				row++
				lo, hi := ValidRange(ow, w, kj, stride, pad)
				if stride == 1 && ow == w {
					shiftedPlane(plane, h, w, oh, ki-pad, kj-pad, lo, hi, dst)
					continue
				}
				for oy := 0; oy < oh; oy++ {
					d := dst[oy*ow : (oy+1)*ow]
					iy := oy*stride - pad + ki
					if iy < 0 || iy >= h {
						clear(d)
						continue
					}
					src := plane[iy*w : (iy+1)*w]
					clear(d[:lo])
					if stride == 1 {
						copy(d[lo:hi], src[lo-pad+kj:])
					} else {
						for ox := lo; ox < hi; ox++ {
							d[ox] = src[ox*stride-pad+kj]
						}
					}
					clear(d[hi:])
				}
			}
		}
	}
}

// im2colMasked is Im2col for stride-1 convolutions whose output has the
// input's size ("same" padding) and a multiple of 16 positions, where
// im2colAsm runs: output position j of tap (ki, kj) reads the plane at
// j + (ki−pad)·w + (kj−pad), so each tap's row is 16-float vectors loaded
// from the plane at one offset, under masks that zero the positions whose
// tap falls outside the image. Channel by channel, every row is written
// once, in order.
func im2colMasked(x []float32, c, h, w, kh, kw, pad int, cols []float32) {
	t := im2colTable(h, w, kh, kw, pad)
	_, _ = x[c*h*w-1], cols[c*kh*kw*h*w-1] // the extent the assembly touches
	im2colAsm(&x[0], h*w, c, &t.offs[0], kh*kw, &t.masks[0], h*w/16, &cols[0])
}

// col2imMasked is Col2im for the convolutions of im2colMasked, a 16-float
// vector of a plane at a time: the vector is loaded once, the taps' rows
// add the values that land there in Col2im's order (tap t's row read at
// the vector's position less its offset, under masks of the positions
// whose source lies inside the row's image), and it is stored once. Every
// element receives the same additions in the same order as Col2im's loop.
func col2imMasked(cols []float32, c, h, w, kh, kw, pad int, x []float32) {
	t := im2colTable(h, w, kh, kw, pad)
	_, _ = x[c*h*w-1], cols[c*kh*kw*h*w-1] // the extent the assembly touches
	col2imAsm(&cols[0], &x[0], h*w, c, &t.back[0], kh*kw, &t.rmasks[0], h*w/16)
}

// im2colTab is im2colMasked's offsets (one a tap) and masks (h·w/16 a tap,
// bit l of mask v for position 16v+l), and col2imMasked's: back[t] is
// where tap t's row holds the value for position 0, in bytes from the
// start of the channel's first row, and rmasks[v·taps+t] marks the
// positions of vector v that receive a value from tap t.
type im2colTab struct {
	offs   []int
	masks  []uint16
	back   []int
	rmasks []uint16
}

type im2colKey struct{ h, w, kh, kw, pad int }

// im2colTabs caches the tables by geometry: a model has a few.
var im2colTabs sync.Map // im2colKey → *im2colTab

// im2colTable returns the tables of a geometry, made on its first use.
func im2colTable(h, w, kh, kw, pad int) *im2colTab {
	key := im2colKey{h, w, kh, kw, pad}
	if t, ok := im2colTabs.Load(key); ok {
		return t.(*im2colTab)
	}
	n, taps := h*w/16, kh*kw
	// The masks keep 2 bytes after the last: the AVX2 loops read 4 at a time.
	t := &im2colTab{offs: make([]int, taps), masks: make([]uint16, taps*n, taps*n+2), back: make([]int, taps), rmasks: make([]uint16, taps*n, taps*n+2)}
	for ki := range kh {
		for kj := range kw {
			tap, dy, dx := ki*kw+kj, ki-pad, kj-pad
			t.offs[tap] = dy*w + dx
			t.back[tap] = 4 * (tap*h*w - (dy*w + dx))
			for j := range h * w {
				if iy, ix := j/w+dy, j%w+dx; iy >= 0 && iy < h && ix >= 0 && ix < w {
					t.masks[tap*n+j/16] |= 1 << (j % 16)
				}
				// Position j receives tap's value from position j − offs.
				if iy, ix := j/w-dy, j%w-dx; iy >= 0 && iy < h && ix >= 0 && ix < w {
					t.rmasks[j/16*taps+tap] |= 1 << (j % 16)
				}
			}
		}
	}
	actual, _ := im2colTabs.LoadOrStore(key, t)
	return actual.(*im2colTab)
}

// shiftedPlane is one row of Im2col for stride 1 when the output is as wide
// as the input (padding (k-1)/2 on each side, AlexNet's convolutions): the
// row is then the plane shifted by dy rows and dx columns, so it is copied
// in one piece and the columns [0,lo) and [hi,w) of each output row, which
// the shift wrapped around from the neighbouring row, and the rows outside
// the image are cleared. One long copy is several times faster than one
// copy per output row, which for 8 to 32 columns costs more in calls than
// in moving data.
func shiftedPlane(plane []float32, h, w, oh, dy, dx, lo, hi int, dst []float32) {
	y0, y1 := max(0, -dy), min(oh, h-dy) // output rows inside the image
	if y0 >= y1 {
		clear(dst)
		return
	}
	clear(dst[:y0*w])
	clear(dst[y1*w:])
	s := dy*w + dx // dst[j] = plane[j+s]
	j0, j1 := max(y0*w, -s), min(y1*w, h*w-s)
	clear(dst[y0*w : j0])
	copy(dst[j0:j1], plane[j0+s:j1+s])
	clear(dst[j1 : y1*w])
	for oy := y0; oy < y1; oy++ {
		r := dst[oy*w : (oy+1)*w]
		for j := range lo {
			r[j] = 0
		}
		for j := hi; j < w; j++ {
			r[j] = 0
		}
	}
}

// Col2im is the adjoint of Im2col: it folds cols, a [c·kh·kw, oh·ow] matrix
// (typically the gradient with respect to Im2col's output), back onto the
// image and ADDS the result into x of shape [c,h,w]. Entries that fall into
// the padding are dropped.
func Col2im(cols []float32, c, h, w, kh, kw, stride, pad int, x []float32) {
	oh, ow := checkConv(len(x), c, h, w, kh, kw, stride, pad)
	if len(cols) < c*kh*kw*oh*ow {
		panic(fmt.Sprintf("kernels: Col2im: cols has %d elements, need %d", len(cols), c*kh*kw*oh*ow))
	}
	if stride == 1 && oh == h && ow == w && h*w%16 == 0 && col2imAsm != nil && c > 0 {
		col2imMasked(cols, c, h, w, kh, kw, pad, x)
		return
	}
	row := 0
	for ci := 0; ci < c; ci++ {
		plane := x[ci*h*w : (ci+1)*h*w]
		for ki := 0; ki < kh; ki++ {
			for kj := 0; kj < kw; kj++ {
				src := cols[row*oh*ow : (row+1)*oh*ow]
				row++
				lo, hi := ValidRange(ow, w, kj, stride, pad)
				if stride == 1 {
					// Output rows y0..y1-1 fall inside the image, each
					// adding its columns [lo,hi) shifted by (ki-pad,
					// kj-pad): one call for the whole tap.
					y0, y1 := max(0, pad-ki), min(oh, h+pad-ki)
					if y0 < y1 && lo < hi {
						vec.addRows(plane[(y0-pad+ki)*w+lo-pad+kj:], w, src[y0*ow+lo:], ow, y1-y0, hi-lo)
					}
					continue
				}
				for oy := 0; oy < oh; oy++ {
					iy := oy*stride - pad + ki
					if iy < 0 || iy >= h {
						continue
					}
					s := src[oy*ow : (oy+1)*ow]
					d := plane[iy*w : (iy+1)*w]
					for ox := lo; ox < hi; ox++ {
						d[ox*stride-pad+kj] += s[ox]
					}
				}
			}
		}
	}
}

// ValidRange returns the output columns [lo,hi) whose input column
// ox·stride-pad+kj lies inside [0,w).
func ValidRange(ow, w, kj, stride, pad int) (lo, hi int) {
	// ox·stride ≥ pad-kj  ⇒  ox ≥ ceil((pad-kj)/stride)
	if d := pad - kj; d > 0 {
		lo = (d + stride - 1) / stride
	}
	// ox·stride ≤ w-1+pad-kj  ⇒  ox ≤ floor((w-1+pad-kj)/stride)
	if d := w - 1 + pad - kj; d >= 0 {
		hi = d/stride + 1
	}
	hi = min(hi, ow)
	lo = min(lo, hi)
	return lo, hi
}

// checkConv panics on inconsistent convolution geometry (a programmer error)
// and returns the output size.
func checkConv(n, c, h, w, kh, kw, stride, pad int) (oh, ow int) {
	if c < 0 || h <= 0 || w <= 0 || kh <= 0 || kw <= 0 || stride <= 0 || pad < 0 {
		panic(fmt.Sprintf("kernels: bad convolution geometry c=%d h=%d w=%d k=%dx%d stride=%d pad=%d", c, h, w, kh, kw, stride, pad))
	}
	oh, ow = ConvOut(h, kh, stride, pad), ConvOut(w, kw, stride, pad)
	if oh <= 0 || ow <= 0 {
		panic(fmt.Sprintf("kernels: %dx%d kernel does not fit %dx%d input with pad %d", kh, kw, h, w, pad))
	}
	if n < c*h*w {
		panic(fmt.Sprintf("kernels: image has %d elements, need %d", n, c*h*w))
	}
	return oh, ow
}
