package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// convCases covers the model's layers and the awkward corners: padding wider
// than the kernel reach, strides that skip columns, 1×1 kernels, non-square.
var convCases = []struct{ c, h, w, kh, kw, stride, pad int }{
	{1, 1, 1, 1, 1, 1, 0},
	{3, 32, 32, 3, 3, 1, 1}, // AlexNet-CIFAR conv1
	{64, 16, 16, 5, 5, 1, 2},
	{192, 8, 8, 3, 3, 1, 1},
	{2, 7, 5, 3, 2, 2, 1},
	{3, 5, 9, 1, 1, 3, 0},
	{2, 4, 4, 3, 3, 1, 3},
	{1, 6, 6, 2, 2, 2, 0},
	{2, 9, 11, 4, 3, 3, 2},
	{1, 3, 3, 5, 5, 1, 2},
	{2, 5, 7, 3, 3, 1, 1},  // stride 1 and ow = w: Im2col's shifted copies
	{2, 6, 4, 5, 3, 1, 1},  // … with oh < h
	{1, 2, 3, 1, 5, 1, 2},  // … with shifts past the whole image
	{2, 5, 37, 3, 3, 1, 1}, // … with rows of two vectors and a tail
	{2, 4, 12, 3, 3, 1, 1}, // same size, 16·k positions: Im2col's masked vectors across rows
	{3, 2, 8, 5, 5, 1, 2},  // … with taps past whole rows
	{1, 4, 4, 1, 1, 1, 0},  // … a 1×1 kernel
}

func randSlice(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(r.NormFloat64())
	}
	return s
}

// pixel is x[ci,iy,ix] with zero padding outside the image.
func pixel(x []float32, h, w, ci, iy, ix int) float32 {
	if iy < 0 || iy >= h || ix < 0 || ix >= w {
		return 0
	}
	return x[(ci*h+iy)*w+ix]
}

func TestIm2colCol2im(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range convCases {
		t.Run(fmt.Sprint(tc), func(t *testing.T) {
			oh, ow := ConvOut(tc.h, tc.kh, tc.stride, tc.pad), ConvOut(tc.w, tc.kw, tc.stride, tc.pad)
			rows := tc.c * tc.kh * tc.kw
			x := randSlice(r, tc.c*tc.h*tc.w)
			cols := randSlice(r, rows*oh*ow) // stale contents must be overwritten
			Im2col(x, tc.c, tc.h, tc.w, tc.kh, tc.kw, tc.stride, tc.pad, cols)

			g := randSlice(r, rows*oh*ow)
			dx := randSlice(r, len(x))
			for i := 0; i < len(dx); i += 3 {
				dx[i] = float32(math.Copysign(0, -1)) // kept where no tap adds
			}
			want := append([]float32(nil), dx...)
			Col2im(g, tc.c, tc.h, tc.w, tc.kh, tc.kw, tc.stride, tc.pad, dx)

			for ci := 0; ci < tc.c; ci++ {
				for ki := 0; ki < tc.kh; ki++ {
					for kj := 0; kj < tc.kw; kj++ {
						row := (ci*tc.kh+ki)*tc.kw + kj
						for oy := 0; oy < oh; oy++ {
							for ox := 0; ox < ow; ox++ {
								iy, ix := oy*tc.stride-tc.pad+ki, ox*tc.stride-tc.pad+kj
								at := row*oh*ow + oy*ow + ox
								if got, w := cols[at], pixel(x, tc.h, tc.w, ci, iy, ix); got != w {
									t.Fatalf("cols[%d] (row %d, out %d,%d) = %v, want %v", at, row, oy, ox, got, w)
								}
								if iy >= 0 && iy < tc.h && ix >= 0 && ix < tc.w {
									want[(ci*tc.h+iy)*tc.w+ix] += g[at]
								}
							}
						}
					}
				}
			}
			// Every element adds its taps' values in this order on every
			// path: the same bits.
			for i := range dx {
				if math.Float32bits(dx[i]) != math.Float32bits(want[i]) {
					t.Fatalf("Col2im: dx[%d] = %v, want %v", i, dx[i], want[i])
				}
			}
		})
	}
}

func TestConvOut(t *testing.T) {
	for _, tc := range []struct{ in, k, stride, pad, want int }{
		{32, 3, 1, 1, 32}, {16, 5, 1, 2, 16}, {32, 2, 2, 0, 16}, {5, 2, 2, 0, 2}, {7, 3, 2, 1, 4}, {1, 1, 1, 0, 1},
	} {
		if got := ConvOut(tc.in, tc.k, tc.stride, tc.pad); got != tc.want {
			t.Errorf("ConvOut(%d,%d,%d,%d) = %d, want %d", tc.in, tc.k, tc.stride, tc.pad, got, tc.want)
		}
	}
}

func TestConvGeometryPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"kernel larger than padded input": func() { Im2col(make([]float32, 4), 1, 2, 2, 5, 5, 1, 0, make([]float32, 100)) },
		"short cols":                      func() { Im2col(make([]float32, 9), 1, 3, 3, 3, 3, 1, 1, make([]float32, 80)) },
		"zero stride":                     func() { Col2im(make([]float32, 9), 1, 3, 3, 1, 1, 0, 0, make([]float32, 9)) },
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
