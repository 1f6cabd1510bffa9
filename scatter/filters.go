package scatter

import (
	"math"
	"math/cmplx"
)

// The filters, in the Fourier domain of the padded image, as kymatio's
// filter_bank builds them (Andreux et al. 2020, after Oyallon & Mallat):
//
//	ψ_{j,θ} = morlet(σ = 0.8·2^j, θ = (L/2 − 1 − l)·π/L, ξ = 3π/4 / 2^j, slant 4/L),  l < L
//	φ       = gabor(σ = 0.8·2^(J−1), θ = 0, ξ = 0, slant 1)
//
// with, over the periodised grid (5×5 copies of the M×N one, offsets
// −2M…2M and −2N…2N),
//
//	gabor(u) = Σ exp(−uᵀ·R·D·R⁻¹·u / (2σ²) + i·ξ·(u₀ cos θ + u₁ sin θ)) / (2·3.1415·σ²/slant)
//	morlet   = gabor − K·gabor|_{ξ=0},  K = Σ gabor / Σ gabor|_{ξ=0}  (zero mean)
//
// R the rotation by θ, D = diag(1, slant²) and 3.1415 kymatio's constant
// (sic: π to five digits). A filter's transform is the real part of its
// 2-D DFT (the imaginary part is zero up to rounding). At a coarser
// resolution res (an input subsampled by 2^res) a filter is cropped to its
// low frequencies and periodised: periodise.

// gabor returns the spatial Gabor filter on the m×n grid.
func gabor(m, n int, sigma, theta, xi, slant float64) []complex128 {
	g := make([]complex128, m*n)
	sin, cos := math.Sincos(theta)
	// curv = R·D·R⁻¹ / (2σ²)
	s2 := slant * slant
	c00 := (cos*cos + s2*sin*sin) / (2 * sigma * sigma)
	c01 := (cos*sin - s2*sin*cos) / (2 * sigma * sigma) // = c10
	c11 := (sin*sin + s2*cos*cos) / (2 * sigma * sigma)
	for ex := -2; ex <= 2; ex++ {
		for ey := -2; ey <= 2; ey++ {
			for a := range m {
				xx := float64(a + ex*m)
				for b := range n {
					yy := float64(b + ey*n)
					arg := complex(-(c00*xx*xx + 2*c01*xx*yy + c11*yy*yy), xx*xi*cos+yy*xi*sin)
					g[a*n+b] += cmplx.Exp(arg)
				}
			}
		}
	}
	norm := 2 * 3.1415 * sigma * sigma / slant
	for i := range g {
		g[i] /= complex(norm, 0)
	}
	return g
}

// morlet returns the spatial Morlet filter: the Gabor filter less the
// multiple of its envelope that gives it zero mean.
func morlet(m, n int, sigma, theta, xi, slant float64) []complex128 {
	wv := gabor(m, n, sigma, theta, xi, slant)
	env := gabor(m, n, sigma, theta, 0, slant)
	var sw, se complex128
	for i := range wv {
		sw += wv[i]
		se += env[i]
	}
	k := sw / se
	for i := range wv {
		wv[i] -= k * env[i]
	}
	return wv
}

// fourier returns the real part of the 2-D DFT of the m×n filter f.
func fourier(f []complex128, m, n int) []float64 {
	fft2(f, m, n, newFFTPlan(n), newFFTPlan(m), false)
	out := make([]float64, len(f))
	for i, v := range f {
		out[i] = real(v)
	}
	return out
}

// periodise returns the m×n filter f at resolution res, of size
// (m/2^res)×(n/2^res): its frequencies outside the central band of each
// axis's low half kept (rows [m·2^(−res−1), m·2^(−res−1) + m(1 − 2^−res))
// zeroed, likewise columns), then the 2^res × 2^res blocks summed.
func periodise(f []float64, m, n, res int) []float64 {
	k := 1 << res
	mr, nr := m/k, n/k
	lenX, startX := int(float64(m)*(1-1/float64(k))), int(float64(m)/float64(2*k))
	lenY, startY := int(float64(n)*(1-1/float64(k))), int(float64(n)/float64(2*k))
	out := make([]float64, mr*nr)
	for a := range m {
		if a >= startX && a < startX+lenX {
			continue
		}
		for b := range n {
			if b >= startY && b < startY+lenY {
				continue
			}
			out[(a%mr)*nr+b%nr] += f[a*n+b]
		}
	}
	return out
}
