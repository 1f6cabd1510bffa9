package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func TestMaxPool2d(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct{ c, h, w, k, stride int }{
		{64, 32, 32, 2, 2}, {3, 5, 5, 2, 2}, {2, 7, 6, 3, 2}, {1, 4, 4, 3, 1}, {1, 1, 1, 1, 1}, {2, 6, 9, 2, 3},
	} {
		t.Run(fmt.Sprint(tc), func(t *testing.T) {
			x := randSlice(r, tc.c*tc.h*tc.w)
			// Quantise so that ties occur and the first-max rule is exercised.
			for i := range x {
				x[i] = float32(math.Round(float64(x[i])))
			}
			oh, ow := ConvOut(tc.h, tc.k, tc.stride, 0), ConvOut(tc.w, tc.k, tc.stride, 0)
			y, idx := make([]float32, tc.c*oh*ow), make([]int32, tc.c*oh*ow)
			MaxPool2d(x, tc.c, tc.h, tc.w, tc.k, tc.stride, y, idx)

			dy := randSlice(r, len(y))
			dx := randSlice(r, len(x))
			want := append([]float32(nil), dx...)
			MaxPool2dBackward(dy, idx, tc.c, tc.h, tc.w, oh, ow, dx)
			for ci := 0; ci < tc.c; ci++ {
				for oy := 0; oy < oh; oy++ {
					for ox := 0; ox < ow; ox++ {
						bestAt := -1
						for ky := 0; ky < tc.k; ky++ {
							for kx := 0; kx < tc.k; kx++ {
								at := (oy*tc.stride+ky)*tc.w + ox*tc.stride + kx
								if bestAt < 0 || x[ci*tc.h*tc.w+at] > x[ci*tc.h*tc.w+bestAt] {
									bestAt = at
								}
							}
						}
						o := (ci*oh+oy)*ow + ox
						if y[o] != x[ci*tc.h*tc.w+bestAt] || int(idx[o]) != bestAt {
							t.Fatalf("out %d: got (%v at %d), want (%v at %d)", o, y[o], idx[o], x[ci*tc.h*tc.w+bestAt], bestAt)
						}
						want[ci*tc.h*tc.w+bestAt] += dy[o]
					}
				}
			}
			for i := range dx {
				if math.Abs(float64(dx[i]-want[i])) > 1e-5*(1+math.Abs(float64(want[i]))) {
					t.Fatalf("dx[%d] = %v, want %v", i, dx[i], want[i])
				}
			}
		})
	}
}

func TestMaxPool2dNaN(t *testing.T) {
	nan := float32(math.NaN())
	x := []float32{1, nan, 5, nan}
	y, idx := make([]float32, 1), make([]int32, 1)
	MaxPool2d(x, 1, 2, 2, 2, 2, y, idx)
	if y[0] == y[0] || idx[0] != 1 {
		t.Errorf("got (%v at %d), want (NaN at 1)", y[0], idx[0])
	}
}

// TestMaxPool2x2Bits checks that MaxPool2d's 2×2, stride-2 paths (the
// assembly where it runs) give the portable loop's bits, NaN payloads and
// signs of zero included, on every block geometry and on the shapes that
// fall back to the loop.
func TestMaxPool2x2Bits(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	special := []float32{
		0, float32(math.Copysign(0, -1)), 1, -1,
		float32(math.Inf(1)), float32(math.Inf(-1)),
		math.Float32frombits(0x7fc00001), math.Float32frombits(0xffc00002),
		math.Float32frombits(0x7f800003), // signalling NaN
		math.SmallestNonzeroFloat32, math.MaxFloat32,
	}
	for _, tc := range []struct{ c, h, w int }{
		{3, 32, 32}, {5, 16, 16}, {4, 8, 8}, {2, 16, 8}, {3, 32, 4}, {2, 64, 2}, {2, 32, 2}, {1, 8, 4}, // blocks
		{2, 4, 4}, {1, 6, 6}, {2, 9, 8}, {2, 8, 9}, {1, 4, 64}, {3, 2, 32}, // the loop
	} {
		t.Run(fmt.Sprint(tc), func(t *testing.T) {
			x := make([]float32, tc.c*tc.h*tc.w)
			for i := range x {
				switch r.IntN(3) {
				case 0:
					x[i] = special[r.IntN(len(special))]
				case 1:
					x[i] = float32(r.IntN(3) - 1) // ties
				default:
					x[i] = float32(r.NormFloat64())
				}
			}
			oh, ow := tc.h/2, tc.w/2
			y, idx := make([]float32, tc.c*oh*ow), make([]int32, tc.c*oh*ow)
			MaxPool2d(x, tc.c, tc.h, tc.w, 2, 2, y, idx)
			wy, widx := make([]float32, len(y)), make([]int32, len(idx))
			for ci := range tc.c {
				n := oh * ow
				maxPool2x2(x[ci*tc.h*tc.w:(ci+1)*tc.h*tc.w], tc.w, oh, ow, wy[ci*n:(ci+1)*n], widx[ci*n:(ci+1)*n])
			}
			for i := range y {
				if math.Float32bits(y[i]) != math.Float32bits(wy[i]) || idx[i] != widx[i] {
					t.Fatalf("out %d: got (%#x at %d), want (%#x at %d)", i, math.Float32bits(y[i]), idx[i], math.Float32bits(wy[i]), widx[i])
				}
			}
		})
	}
}

func TestAdaptiveAvgPool2d(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct{ c, h, w, oh, ow int }{
		{256, 2, 2, 6, 6}, // AlexNet-CIFAR: 2×2 replicated up to 6×6
		{3, 13, 13, 6, 6}, // AlexNet-ImageNet: overlapping windows
		{2, 7, 5, 3, 2}, {1, 1, 1, 1, 1}, {2, 4, 6, 4, 6}, {1, 5, 3, 1, 1},
	} {
		t.Run(fmt.Sprint(tc), func(t *testing.T) {
			x := randSlice(r, tc.c*tc.h*tc.w)
			y := randSlice(r, tc.c*tc.oh*tc.ow)
			AdaptiveAvgPool2d(x, tc.c, tc.h, tc.w, tc.oh, tc.ow, y)
			dy := randSlice(r, len(y))
			dx := randSlice(r, len(x))
			want := make([]float64, len(dx))
			for i, v := range dx {
				want[i] = float64(v)
			}
			AdaptiveAvgPool2dBackward(dy, tc.c, tc.h, tc.w, tc.oh, tc.ow, dx)
			for ci := 0; ci < tc.c; ci++ {
				for oy := 0; oy < tc.oh; oy++ {
					y0 := int(math.Floor(float64(oy*tc.h) / float64(tc.oh)))
					y1 := int(math.Ceil(float64((oy+1)*tc.h) / float64(tc.oh)))
					for ox := 0; ox < tc.ow; ox++ {
						x0 := int(math.Floor(float64(ox*tc.w) / float64(tc.ow)))
						x1 := int(math.Ceil(float64((ox+1)*tc.w) / float64(tc.ow)))
						var s float64
						n := float64((y1 - y0) * (x1 - x0))
						o := (ci*tc.oh+oy)*tc.ow + ox
						for iy := y0; iy < y1; iy++ {
							for ix := x0; ix < x1; ix++ {
								s += float64(x[(ci*tc.h+iy)*tc.w+ix])
								want[(ci*tc.h+iy)*tc.w+ix] += float64(dy[o]) / n
							}
						}
						if math.Abs(float64(y[o])-s/n) > 1e-5 {
							t.Fatalf("y[%d] = %v, want %v", o, y[o], s/n)
						}
					}
				}
			}
			for i := range dx {
				if math.Abs(float64(dx[i])-want[i]) > 1e-5*(1+math.Abs(want[i])) {
					t.Fatalf("dx[%d] = %v, want %v", i, dx[i], want[i])
				}
			}
		})
	}
}
