package privacy

import (
	"math"
	"math/bits"
)

// fftPlan holds what the transforms of one power-of-two length n need:
// the n/2 + 1 roots e^{−2πik/n}, computed from exact angles (math.Sincos
// of 2πk/n, never by recurrence), so that the transforms are accurate to
// a few ulps times log n. It serves the real transforms of length n (rfft,
// irfft, as numpy's) and, through them, complex transforms of length n/2.
// The sign convention is numpy's: X_k = Σ x_j e^{−2πijk/n}; the inverse
// divides by n.
type fftPlan struct {
	n     int
	roots []complex128 // e^{−2πik/n}, k = 0 … n/2
	// stage holds, for the complex transform of length n/2, the twiddles
	// of each radix-2 stage one after another: the stage that joins
	// halves of length h uses e^{−2πij/(2h)}, j < h, at stage[h−1:2h−1].
	stage []complex128
}

// newFFTPlan returns the plan for length n, a power of two ≥ 4.
func newFFTPlan(n int) *fftPlan {
	p := &fftPlan{n: n, roots: make([]complex128, n/2+1)}
	for k := range p.roots {
		s, c := math.Sincos(2 * math.Pi * float64(k) / float64(n))
		p.roots[k] = complex(c, -s)
	}
	half := n / 2
	p.stage = make([]complex128, 0, half)
	for h := 1; h < half; h <<= 1 {
		step := n / (2 * h) // e^{−2πij/(2h)} = e^{−2πi(j·step)/n}
		for j := range h {
			p.stage = append(p.stage, p.roots[j*step])
		}
	}
	return p
}

// fft transforms a (length n/2) in place; inverse flips the sign of the
// exponent (without the 1/(n/2)), as the conjugate of the forward transform
// of the conjugate. Radix 2, decimation in time.
func (p *fftPlan) fft(a []complex128, inverse bool) {
	if inverse {
		for i, v := range a {
			a[i] = conj(v)
		}
		defer func() {
			for i, v := range a {
				a[i] = conj(v)
			}
		}()
	}
	m := len(a)
	shift := 64 - bits.TrailingZeros(uint(m))
	for i := range a {
		if j := int(bits.Reverse64(uint64(i)) >> shift); i < j {
			a[i], a[j] = a[j], a[i]
		}
	}
	for h := 1; h < m; h <<= 1 {
		tw := p.stage[h-1 : 2*h-1]
		for start := 0; start < m; start += 2 * h {
			lo, hi := a[start:start+h], a[start+h:start+2*h]
			for j, w := range tw {
				u, v := lo[j], hi[j]*w
				lo[j], hi[j] = u+v, u-v
			}
		}
	}
}

func conj(z complex128) complex128 { return complex(real(z), -imag(z)) }

// rfft is numpy.fft.rfft of x (length n): the n/2 + 1 coefficients
// X_0 … X_{n/2} of the real sequence, by one complex transform of length
// n/2 of z_j = x_{2j} + i·x_{2j+1}, written to out (length n/2 + 1). X_0
// and X_{n/2} are real, as they are for real input.
func (p *fftPlan) rfft(x []float64, out []complex128) {
	h := p.n / 2
	z := out[:h]
	for j := range z {
		z[j] = complex(x[2*j], x[2*j+1])
	}
	p.fft(z, false)
	// X_k and X_{h−k} both come from z_k and z_{h−k}: each pair is read
	// before it is overwritten. z_0 pairs with itself and gives X_0, X_h.
	x0 := z[0]
	out[0], out[h] = complex(real(x0)+imag(x0), 0), complex(real(x0)-imag(x0), 0)
	for k := 1; k <= h/2; k++ {
		zk, zr := z[k], z[h-k]
		out[k] = p.rfftCoef(k, zk, conj(zr))
		out[h-k] = p.rfftCoef(h-k, zr, conj(zk))
	}
}

// rfftCoef is X_k = E_k + e^{−2πik/n}·O_k from z_k and conj(z_{h−k}): the
// transforms of the even and the odd samples are E_k = (z_k + z̄_{h−k})/2
// and O_k = (z_k − z̄_{h−k})/(2i).
func (p *fftPlan) rfftCoef(k int, zk, zr complex128) complex128 {
	even := (zk + zr) / 2
	odd := (zk - zr) * complex(0, -0.5)
	return even + p.roots[k]*odd
}

// irfft is numpy.fft.irfft of the n/2 + 1 coefficients x: the real
// sequence of length n whose rfft is x, written to out (length n), with
// the imaginary parts of x_0 and x_{n/2} ignored as numpy does. x is
// overwritten.
func (p *fftPlan) irfft(x []complex128, out []float64) {
	h := p.n / 2
	// Z_k = E_k + i·O_k with 2E_k = X_k + X̄_{h−k} and
	// 2O_k = (X_k − X̄_{h−k})·e^{2πik/n}; pairs k, h − k as in rfft.
	x0, xh := real(x[0]), real(x[h])
	x[0] = complex((x0+xh)/2, (x0-xh)/2)
	for k := 1; k <= h/2; k++ {
		xk, xr := x[k], x[h-k]
		x[k] = p.irfftCoef(k, xk, conj(xr))
		x[h-k] = p.irfftCoef(h-k, xr, conj(xk))
	}
	z := x[:h]
	p.fft(z, true)
	for j, v := range z {
		out[2*j], out[2*j+1] = real(v)/float64(h), imag(v)/float64(h)
	}
}

// irfftCoef is Z_k = E_k + i·O_k from X_k and conj(X_{h−k}).
func (p *fftPlan) irfftCoef(k int, xk, xr complex128) complex128 {
	even := xk + xr                     // 2·E_k
	odd := (xk - xr) * conj(p.roots[k]) // 2·O_k
	return (even + odd*complex(0, 1)) / 2
}
