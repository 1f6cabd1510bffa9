package scatter

import (
	"math"
	"math/cmplx"
)

// fftPlan transforms complex sequences of one length n, any n ≥ 1, by a
// mixed-radix Cooley–Tukey recursion over n's prime factors (36 = 2·2·3·3,
// the padded side of a 28-pixel image at J = 2). The convention is numpy's:
// X_k = Σ_j x_j e^{−2πijk/n}, and the inverse divides by n. The roots come
// from exact angles (math.Sincos of 2πk/n), never by recurrence.
type fftPlan struct {
	n       int
	factors []int        // n's prime factors, ascending
	w       []complex128 // e^{−2πik/n}, k < n
}

func newFFTPlan(n int) *fftPlan {
	p := &fftPlan{n: n, w: make([]complex128, n)}
	for m, f := n, 2; m > 1; {
		if f*f > m {
			f = m
		}
		if m%f == 0 {
			p.factors = append(p.factors, f)
			m /= f
			continue
		}
		f++
	}
	for k := range p.w {
		s, c := math.Sincos(-2 * math.Pi * float64(k) / float64(n))
		p.w[k] = complex(c, s)
	}
	return p
}

// transform writes the transform of x (length n, read with stride 1) to
// out (length n); inverse transforms back, dividing by n. x and out must
// not overlap; tmp is scratch of length n.
func (p *fftPlan) transform(out, x, tmp []complex128, inverse bool) {
	if inverse {
		for i, v := range x {
			tmp[i] = cmplx.Conj(v)
		}
		p.rec(out, tmp, 1, p.n, p.factors)
		inv := 1 / float64(p.n)
		for i, v := range out {
			out[i] = complex(real(v)*inv, -imag(v)*inv)
		}
		return
	}
	p.rec(out, x, 1, p.n, p.factors)
}

// rec writes to out (length n) the transform of x[0], x[s], …, x[(n−1)s]:
// the transforms of the f decimated subsequences x[r·s + f·s·i], one after
// another in out, combined with the twiddles e^{−2πi·r·k/n}.
func (p *fftPlan) rec(out, x []complex128, s, n int, factors []int) {
	if n == 1 {
		out[0] = x[0]
		return
	}
	f := factors[0]
	m := n / f
	for r := range f {
		p.rec(out[r*m:(r+1)*m], x[r*s:], s*f, m, factors[1:])
	}
	step := p.n / n // e^{−2πie/n} = w[e·step mod N]
	var buf [8]complex128
	sub := buf[:0]
	if f > len(buf) {
		sub = make([]complex128, f)
	} else {
		sub = buf[:f]
	}
	for k := range m {
		for r := range f {
			sub[r] = out[r*m+k]
		}
		for q := range f {
			kk := k + q*m
			// e = r·kk·step mod N, stepped by d without a division
			d, e := (kk*step)%p.n, 0
			var sum complex128
			for r := range f {
				sum += p.w[e] * sub[r]
				if e += d; e >= p.n {
					e -= p.n
				}
			}
			out[kk] = sum
		}
	}
}

// fft2 is the two-dimensional transform of the h×w array a (row major),
// in place: every row, then every column; inverse as transform's.
func fft2(a []complex128, h, w int, rows, cols *fftPlan, inverse bool) {
	tmp := make([]complex128, 3*max(h, w))
	in, out, scratch := tmp[:max(h, w)], tmp[max(h, w):2*max(h, w)], tmp[2*max(h, w):]
	for y := range h {
		row := a[y*w : (y+1)*w]
		copy(in, row)
		rows.transform(row, in[:w], scratch[:w], inverse)
	}
	for x := range w {
		for y := range h {
			in[y] = a[y*w+x]
		}
		cols.transform(out[:h], in[:h], scratch[:h], inverse)
		for y := range h {
			a[y*w+x] = out[y]
		}
	}
}
