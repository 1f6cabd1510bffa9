package kernels

import (
	"math"
	"testing"
)

// TestTanh compares Tanh with math.Tanh rounded to float32 over a sweep of
// [−10, 10] and of every magnitude: the float64 results differ by an ulp
// or two (Exp against math.Exp, rounded products), which moves the float32
// rounding by at most one ulp and only rarely. Zeros, infinities and NaN
// are checked exactly.
func TestTanh(t *testing.T) {
	var xs []float32
	const n = 1 << 18
	for i := range n + 1 {
		xs = append(xs, float32(-10+20*float64(i)/n))
	}
	for b := uint32(0); b < 0x7f800000; b += 4099 {
		v := math.Float32frombits(b)
		xs = append(xs, v, -v)
	}
	xs = append(xs, 0.625, -0.625, math.Nextafter32(0.625, 1), 44, 400, -400)
	y := make([]float32, len(xs))
	Tanh(xs, y)
	differ := 0
	for i, x := range xs {
		want := float32(math.Tanh(float64(x)))
		if y[i] == want {
			continue
		}
		differ++
		if math.Nextafter32(want, y[i]) != y[i] {
			t.Fatalf("tanh(%v) = %v, math.Tanh %v: more than 1 ulp", x, y[i], want)
		}
	}
	if differ > len(xs)/1000 {
		t.Errorf("%d of %d values differ from math.Tanh by an ulp", differ, len(xs))
	}
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())}
	want := []float32{0, float32(math.Copysign(0, -1)), 1, -1, float32(math.NaN())}
	got := make([]float32, len(special))
	Tanh(special, got)
	for i := range special {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
			t.Errorf("tanh(%v) = %v, want %v", special[i], got[i], want[i])
		}
	}
}

// TestTanhGrad checks dy·(1 − y²) against the product in float64.
func TestTanhGrad(t *testing.T) {
	y := []float32{0, 0.5, -0.999, 1, 0.3}
	dy := []float32{1, -2, 3, 4, 0.7}
	dx := make([]float32, len(y))
	TanhGrad(dx, dy, y)
	for i := range y {
		want := float64(dy[i]) * (1 - float64(y[i])*float64(y[i]))
		if math.Abs(float64(dx[i])-want) > 1.2e-7*math.Abs(want) {
			t.Errorf("TanhGrad(dy %v, y %v) = %v, want %v", dy[i], y[i], dx[i], want)
		}
	}
}
