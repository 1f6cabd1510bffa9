package scatter

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
)

// readF32 reads a little-endian float32 file of testdata.
func readF32(t *testing.T, name string) []float32 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// TestMatchesReference compares the transform with the independent numpy
// implementation of testdata/reference.py on the images it wrote: 28×28
// and 32×32 at J = 2, L = 8 (Tramèr & Boneh's configuration), and 32×24 at
// J = 3, L = 4, where second-order paths use the wavelets at a coarser
// resolution. Both compute in float64, so the stored float32 values agree
// up to their rounding (a change of kymatio's constant 3.1415 to π moves
// them by 3e-5 and fails).
func TestMatchesReference(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "cases.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var name string
		var h, w, j, l, n, ch, oh, ow int
		if _, err := fmt.Sscan(sc.Text(), &name, &h, &w, &j, &l, &n, &ch, &oh, &ow); err != nil {
			t.Fatal(err)
		}
		tr, err := New(Config{Height: h, Width: w, J: j, L: l})
		if err != nil {
			t.Fatal(err)
		}
		if c, a, b := tr.Shape(); c != ch || a != oh || b != ow {
			t.Fatalf("%s: shape %d×%d×%d, want %d×%d×%d", name, c, a, b, ch, oh, ow)
		}
		in, want := readF32(t, name+".in.f32"), readF32(t, name+".out.f32")
		got := make([]float32, n*tr.Size())
		if err := tr.Apply(got, in); err != nil {
			t.Fatal(err)
		}
		var worst float64
		for i := range want {
			// relative to the channel's scale: order 2's values are small
			scale := 1e-3 + math.Abs(float64(want[i]))
			worst = max(worst, math.Abs(float64(got[i]-want[i]))/scale)
		}
		if worst > 1e-6 {
			t.Errorf("%s: largest relative difference to the reference %.3g, want below 1e-6", name, worst)
		}
		t.Logf("%s: largest relative difference %.2g", name, worst)
	}
}

// TestShapes checks the output sizes the paper's models assume: 81
// channels of 7×7 for 28×28 images at J = 2, L = 8; 8×8 for 32×32.
func TestShapes(t *testing.T) {
	for _, tc := range []struct{ h, w, j, l, ch, oh, ow int }{
		{28, 28, 2, 8, 81, 7, 7},
		{32, 32, 2, 8, 81, 8, 8},
		{32, 32, 3, 8, 1 + 24 + 64*3, 4, 4},
		{28, 28, 1, 6, 7, 14, 14},
	} {
		tr, err := New(Config{Height: tc.h, Width: tc.w, J: tc.j, L: tc.l})
		if err != nil {
			t.Fatal(err)
		}
		if c, a, b := tr.Shape(); c != tc.ch || a != tc.oh || b != tc.ow || tr.Size() != c*a*b {
			t.Errorf("%+v: shape %d×%d×%d", tc, c, a, b)
		}
	}
	for _, c := range []Config{{28, 28, 0, 8}, {28, 28, 2, 0}, {3, 28, 2, 8}, {28, 28, 5, 8}} {
		if _, err := New(c); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
}

// TestLittlewoodPaley checks the filter bank's Littlewood–Paley sum
// A(ω) = |φ̂(ω)|² + ½ Σ_{j,θ} (|ψ̂_{j,θ}(ω)|² + |ψ̂_{j,θ}(−ω)|²) on the
// padded grid: bounded above by 1 (no frequency amplified: the wavelet
// transform is contractive; kymatio's normalisation by 2·3.1415·σ² rather
// than 2πσ² lifts φ̂(0)² to 1.00006), and above a floor over the band the
// filters cover, |ω| up to 3π/4 along every direction (no frequency lost
// there; the Morlet bank at L = 8 reaches 0.59 between its wavelets).
func TestLittlewoodPaley(t *testing.T) {
	tr, err := New(Config{Height: 28, Width: 28, J: 2, L: 8})
	if err != nil {
		t.Fatal(err)
	}
	h, w := tr.hp, tr.wp
	lo, hi := math.Inf(1), 0.0
	for a := range h {
		for b := range w {
			neg := ((h-a)%h)*w + (w-b)%w
			s := tr.phi[0][a*w+b] * tr.phi[0][a*w+b]
			for j := range tr.psi {
				for _, p := range tr.psi[j] {
					s += (p[0][a*w+b]*p[0][a*w+b] + p[0][neg]*p[0][neg]) / 2
				}
			}
			hi = max(hi, s)
			// ω in radians per pixel, folded into [−π, π)
			wy, wx := 2*math.Pi*float64((a+h/2)%h-h/2)/float64(h), 2*math.Pi*float64((b+w/2)%w-w/2)/float64(w)
			if math.Hypot(wy, wx) <= 3*math.Pi/4 {
				lo = min(lo, s)
			}
		}
	}
	t.Logf("Littlewood–Paley sum: at most %.4f; at least %.4f for |ω| ≤ 3π/4", hi, lo)
	if hi > 1.0001 || lo < 0.5 {
		t.Errorf("Littlewood–Paley sum from %.4f to %.4f, want at most 1, at least 0.3 in the band", lo, hi)
	}
}

// images draws n smooth test images of h×w pixels: a few Gaussian blobs
// on a dark background, away from the border (so that shifts and padding
// do not meet).
func images(rng *rand.Rand, n, h, w int) []float32 {
	out := make([]float32, n*h*w)
	for i := range n {
		img := out[i*h*w : (i+1)*h*w]
		for range 3 {
			cy, cx := float64(h)/4+rng.Float64()*float64(h)/2, float64(w)/4+rng.Float64()*float64(w)/2
			s := 1.5 + 2*rng.Float64()
			for y := range h {
				for x := range w {
					d := (float64(y)-cy)*(float64(y)-cy) + (float64(x)-cx)*(float64(x)-cx)
					img[y*w+x] += float32(math.Exp(-d / (2 * s * s)))
				}
			}
		}
	}
	return out
}

func energy(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return s
}

// TestEnergy checks that orders 0 to 2 keep most of an image's energy and
// never more: Σ ‖S_m x‖² · 4^J (each coefficient stands for a 2^J × 2^J
// block) against ‖x‖², on images whose energy is away from the border.
func TestEnergy(t *testing.T) {
	tr, err := New(Config{Height: 28, Width: 28, J: 2, L: 8})
	if err != nil {
		t.Fatal(err)
	}
	x := images(rand.New(rand.NewPCG(3, 3)), 4, 28, 28)
	s := make([]float32, 4*tr.Size())
	if err := tr.Apply(s, x); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		in := energy(x[i*784 : (i+1)*784])
		out := energy(s[i*tr.Size():(i+1)*tr.Size()]) * 16
		t.Logf("image %d: ‖Sx‖²/‖x‖² = %.3f", i, out/in)
		if r := out / in; r < 0.85 || r > 1.01 {
			t.Errorf("image %d: ‖Sx‖²/‖x‖² = %.3f, want 0.85 to 1", i, r)
		}
	}
}

// shift returns the h×w images of x moved by (dy, dx) pixels, zero filled.
func shift(x []float32, n, h, w, dy, dx int) []float32 {
	out := make([]float32, len(x))
	for i := range n {
		for y := range h {
			for c := range w {
				if sy, sx := y-dy, c-dx; sy >= 0 && sy < h && sx >= 0 && sx < w {
					out[i*h*w+y*w+c] = x[i*h*w+sy*w+sx]
				}
			}
		}
	}
	return out
}

// TestTranslationInvariance: the coefficients move with a shift τ by about
// |τ|/2^J of their norm (the stability bound of Mallat 2012), less than the
// pixels move: a shift by one pixel, well below 2^J = 4, moves them by a
// small part of their norm and by under a third of what a shift by 2^J
// does.
func TestTranslationInvariance(t *testing.T) {
	tr, err := New(Config{Height: 28, Width: 28, J: 2, L: 8})
	if err != nil {
		t.Fatal(err)
	}
	const n = 4
	x := images(rand.New(rand.NewPCG(4, 4)), n, 28, 28)
	sx := make([]float32, n*tr.Size())
	if err := tr.Apply(sx, x); err != nil {
		t.Fatal(err)
	}
	rel := func(a, b []float32) float64 {
		var d, s float64
		for i := range a {
			d += float64(a[i]-b[i]) * float64(a[i]-b[i])
			s += float64(a[i]) * float64(a[i])
		}
		return math.Sqrt(d / s)
	}
	moved := func(dy, dx int) (pixels, coefs float64) {
		y := shift(x, n, 28, 28, dy, dx)
		sy := make([]float32, len(sx))
		if err := tr.Apply(sy, y); err != nil {
			t.Fatal(err)
		}
		return rel(x, y), rel(sx, sy)
	}
	p1, c1 := moved(1, 0)
	p4, c4 := moved(0, 4)
	t.Logf("shift by 1: pixels move %.3f, coefficients %.3f; by 4: %.3f, %.3f", p1, c1, p4, c4)
	if c1 > 0.25 || c1 > 0.8*p1 || c4 < 3*c1 {
		t.Errorf("shift by 1: coefficients move %.3f (pixels %.3f); by 4: %.3f", c1, p1, c4)
	}
}

// TestDeterministic: the same output on one thread and on several, bit for
// bit (each image is transformed by one goroutine, start to end).
func TestDeterministic(t *testing.T) {
	tr, err := New(Config{Height: 28, Width: 28, J: 2, L: 8})
	if err != nil {
		t.Fatal(err)
	}
	x := images(rand.New(rand.NewPCG(5, 5)), 6, 28, 28)
	one, many := make([]float32, 6*tr.Size()), make([]float32, 6*tr.Size())
	prev := runtime.GOMAXPROCS(1)
	err = tr.Apply(one, x)
	runtime.GOMAXPROCS(max(prev, 3))
	err2 := tr.Apply(many, x)
	runtime.GOMAXPROCS(prev)
	if err != nil || err2 != nil {
		t.Fatal(err, err2)
	}
	if !slices.Equal(one, many) {
		t.Error("the output depends on GOMAXPROCS")
	}
	if err := tr.Apply(one[:5], x); err == nil {
		t.Error("a short output: no error")
	}
}

// BenchmarkApply times the transform of Fashion-MNIST-sized images.
func BenchmarkApply(b *testing.B) {
	tr, err := New(Config{Height: 28, Width: 28, J: 2, L: 8})
	if err != nil {
		b.Fatal(err)
	}
	x := images(rand.New(rand.NewPCG(6, 6)), 64, 28, 28)
	out := make([]float32, 64*tr.Size())
	for b.Loop() {
		if err := tr.Apply(out, x); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*64), "µs/image")
}
