// Package scatter computes the two-dimensional scattering transform of
// order 2 (Mallat 2012; Bruna & Mallat 2013), the fixed feature extractor
// of Tramèr & Boneh's private ScatterNet models (ICLR 2021), as kymatio's
// Scattering2D computes it: Morlet wavelets at J scales and L angles,
// complex modulus, and a Gaussian low-pass averaging subsampled by 2^J.
//
// For an image x of H×W pixels, reflect-padded to Hp×Wp (the next multiple
// of 2^J above H + 2^J, plus 2^J) and with ⋆ the circular convolution on the
// padded grid, the channels are
//
//	S₀ x            = x ⋆ φ                      1 channel
//	S₁ x[j₁,θ₁]     = |x ⋆ ψ_{j₁,θ₁}| ⋆ φ         J·L channels
//	S₂ x[j₁,θ₁,j₂,θ₂] = ||x ⋆ ψ_{j₁,θ₁}| ⋆ ψ_{j₂,θ₂}| ⋆ φ   L²·J(J−1)/2 channels, j₂ > j₁
//
// each sampled every 2^J pixels with the border sample of each side
// dropped: H/2^J × W/2^J values (7×7 for 28×28 at J = 2, with 1 + 16 + 64
// = 81 channels at L = 8). Channels come in kymatio's order: S₀, then S₁
// by j₁ then θ₁, then S₂ by (j₁, θ₁) then (j₂, θ₂). Every intermediate is
// subsampled as soon as its band allows (|x ⋆ ψ_{j}| every 2^j pixels), by
// periodising the spectrum, as kymatio does; the convolutions are products
// of discrete Fourier transforms (fft.go), in float64.
//
// The transform is fixed, so a training set's features are computed once
// (Apply over the images, in parallel, each image's result independent of
// the thread count) and only a model's head is trained on them.
package scatter

import (
	"fmt"
	"math"
	"runtime"
	"sync"
)

// Config is a transform's input size and filter bank.
type Config struct {
	Height, Width int // the input image, pixels
	J             int // scales: averaging and subsampling by 2^J
	L             int // angles in [0, π)
}

// Transform is a scattering transform of one Config, its filters built.
// It is safe for concurrent use.
type Transform struct {
	c          Config
	hp, wp     int                   // padded size
	top, left  int                   // padding before the image
	plansH     []*fftPlan            // column transforms at resolution res: length hp/2^res
	plansW     []*fftPlan            // row transforms
	psi        [][]map[int][]float64 // psi[j][θ][res]: ψ̂ at resolution res < max(1, j)
	phi        [][]float64           // phi[res]: φ̂ at resolution res < J
	channels   int
	outH, outW int
}

// New builds the transform of c. J ≥ 1, L ≥ 1, and each side at least 2^J.
func New(c Config) (*Transform, error) {
	switch {
	case c.J < 1 || c.J > 8:
		return nil, fmt.Errorf("scatter: J = %d, want 1 to 8", c.J)
	case c.L < 1 || c.L > 64:
		return nil, fmt.Errorf("scatter: L = %d, want 1 to 64", c.L)
	case c.Height < 1<<c.J || c.Width < 1<<c.J || c.Height > 4096 || c.Width > 4096:
		return nil, fmt.Errorf("scatter: %d×%d images at J = %d: each side must be from 2^J = %d to 4096", c.Height, c.Width, c.J, 1<<c.J)
	}
	k := 1 << c.J
	t := &Transform{c: c, hp: ((c.Height+k)/k + 1) * k, wp: ((c.Width+k)/k + 1) * k}
	t.top, t.left = (t.hp-c.Height)/2, (t.wp-c.Width)/2
	t.outH, t.outW = t.hp/k-2, t.wp/k-2
	t.channels = 1 + c.J*c.L + c.L*c.L*c.J*(c.J-1)/2
	for res := range c.J + 1 {
		t.plansH = append(t.plansH, newFFTPlan(t.hp>>res))
		t.plansW = append(t.plansW, newFFTPlan(t.wp>>res))
	}
	t.psi = make([][]map[int][]float64, c.J)
	for j := range c.J {
		for l := range c.L {
			// kymatio's int(L − L/2 − 1), a true division truncated
			theta := float64(int(float64(c.L)/2-1)-l) * math.Pi / float64(c.L)
			f := fourier(morlet(t.hp, t.wp, 0.8*math.Exp2(float64(j)), theta, 3*math.Pi/4/math.Exp2(float64(j)), 4/float64(c.L)), t.hp, t.wp)
			// ψ_j is needed at full resolution (order 1) and at every
			// j₁ < j (order 2).
			byRes := map[int][]float64{}
			for res := range max(1, j) {
				byRes[res] = periodise(f, t.hp, t.wp, res)
			}
			t.psi[j] = append(t.psi[j], byRes)
		}
	}
	f := fourier(gabor(t.hp, t.wp, 0.8*math.Exp2(float64(c.J-1)), 0, 0, 1), t.hp, t.wp)
	for res := range c.J {
		t.phi = append(t.phi, periodise(f, t.hp, t.wp, res))
	}
	return t, nil
}

// Shape is the shape of one image's output: channels, rows, columns.
func (t *Transform) Shape() (channels, height, width int) { return t.channels, t.outH, t.outW }

// Size is the number of values of one image's output.
func (t *Transform) Size() int { return t.channels * t.outH * t.outW }

// Apply writes the transform of each of the n = len(src)/(H·W) images of
// src (row major, one after another) to dst (n·Size() values, channel
// major per image), over up to GOMAXPROCS goroutines. A wrong length of
// src or dst is an error.
func (t *Transform) Apply(dst, src []float32) error {
	size := t.c.Height * t.c.Width
	if len(src)%size != 0 || len(dst) != len(src)/size*t.Size() {
		return fmt.Errorf("scatter: %d input values and %d output values, want n·%d and n·%d", len(src), len(dst), size, t.Size())
	}
	n := len(src) / size
	var wg sync.WaitGroup
	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	for range min(n, runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			w := t.newWork()
			for i := range next {
				t.one(dst[i*t.Size():(i+1)*t.Size()], src[i*size:(i+1)*size], w)
			}
		})
	}
	wg.Wait()
	return nil
}

// work is one goroutine's scratch.
type work struct {
	x0, u1, u2, s, acc []complex128
}

func (t *Transform) newWork() *work {
	n := t.hp * t.wp
	return &work{x0: make([]complex128, n), u1: make([]complex128, n), u2: make([]complex128, n), s: make([]complex128, n), acc: make([]complex128, n)}
}

// one transforms one image into out.
func (t *Transform) one(out []float32, img []float32, w *work) {
	c := t.c
	// Reflect padding (numpy's "reflect": the edge pixel not repeated).
	reflect := func(i, n int) int {
		for i < 0 || i >= n {
			if i < 0 {
				i = -i
			}
			if i >= n {
				i = 2*(n-1) - i
			}
		}
		return i
	}
	for a := range t.hp {
		ya := reflect(a-t.top, c.Height)
		for b := range t.wp {
			w.x0[a*t.wp+b] = complex(float64(img[ya*c.Width+reflect(b-t.left, c.Width)]), 0)
		}
	}
	t.fft(w.x0, 0, false)
	// S₀: φ at full resolution, subsampled by 2^J.
	t.lowpass(out, 0, w.x0, 0, w)
	ch1, ch2 := 1, 1+c.J*c.L
	for j1 := range c.J {
		for l1 := range c.L {
			// U₁ = |x ⋆ ψ_{j1}| at resolution j1, in Fourier.
			t.band(w.u1, w.x0, 0, t.psi[j1][l1][0], j1, w)
			t.lowpass(out, ch1, w.u1, j1, w)
			ch1++
			for j2 := j1 + 1; j2 < c.J; j2++ {
				for l2 := range c.L {
					t.band(w.u2, w.u1, j1, t.psi[j2][l2][j1], j2, w)
					t.lowpass(out, ch2, w.u2, j2, w)
					ch2++
				}
			}
		}
	}
}

// band sets dst to the spectrum of |u ⋆ ψ| at resolution to, from u's
// spectrum at resolution res (u's size hp/2^res × wp/2^res) and ψ̂ at res.
func (t *Transform) band(dst, u []complex128, res int, psi []float64, to int, w *work) {
	h, wd := t.hp>>res, t.wp>>res
	prod := dst[:h*wd]
	for i := range prod {
		prod[i] = u[i] * complex(psi[i], 0)
	}
	hs, ws := subsample(dst, prod, w.acc, h, wd, 1<<(to-res))
	t.fft(dst[:hs*ws], to, true)
	for i := range dst[:hs*ws] {
		dst[i] = complex(math.Hypot(real(dst[i]), imag(dst[i])), 0)
	}
	t.fft(dst[:hs*ws], to, false)
}

// lowpass writes channel ch of out: the spectrum u at resolution res
// times φ̂ at res, subsampled to resolution J, back in space, its border
// dropped.
func (t *Transform) lowpass(out []float32, ch int, u []complex128, res int, w *work) {
	h, wd := t.hp>>res, t.wp>>res
	prod := w.s[:h*wd]
	for i := range prod {
		prod[i] = u[i] * complex(t.phi[res][i], 0)
	}
	hs, ws := subsample(prod, prod, w.acc, h, wd, 1<<(t.c.J-res))
	t.fft(prod[:hs*ws], t.c.J, true)
	o := out[ch*t.outH*t.outW:]
	for a := range t.outH {
		for b := range t.outW {
			o[a*t.outW+b] = float32(real(prod[(a+1)*ws+b+1]))
		}
	}
}

// subsample writes to dst the h×w spectrum src periodised to (h/k)×(w/k),
// the mean of its k×k blocks: the spectrum of the signal subsampled by k.
// dst may be src; acc is scratch of (h/k)·(w/k) values.
func subsample(dst, src, acc []complex128, h, w, k int) (int, int) {
	if k == 1 {
		copy(dst, src[:h*w])
		return h, w
	}
	hs, ws := h/k, w/k
	acc = acc[:hs*ws]
	clear(acc)
	for a := range h {
		for b := range w {
			acc[(a%hs)*ws+b%ws] += src[a*w+b]
		}
	}
	inv := complex(1/float64(k*k), 0)
	for i, v := range acc {
		dst[i] = v * inv
	}
	return hs, ws
}

// fft transforms a (the padded grid at resolution res) in place.
func (t *Transform) fft(a []complex128, res int, inverse bool) {
	fft2(a, t.hp>>res, t.wp>>res, t.plansW[res], t.plansH[res], inverse)
}
