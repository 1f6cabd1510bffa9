//go:build !purego

package kernels

// update is the implementation of the optimizers' updates in use: AVX-512
// or AVX2 (update_amd64.s) on the whole multiples of 16 elements and the
// portable code on the rest, or the portable code alone where neither runs
// or PSCLIP_KERNEL picks the portable kernel.
var update = func() *updateOps {
	switch vec {
	case vecAVX512:
		return updateWith(sgdMomentumAVX512, adamWAVX512)
	case vecAVX2:
		return updateWith(sgdMomentumAVX2, adamWAVX2)
	}
	return updateGo
}()

// updateWith returns the updates that run the given assembly on the whole
// multiples of 16 elements and the portable code on the rest.
func updateWith(sgd func(w, g, b *float32, n int, lr, wd, mu float32),
	adam func(w, g, m, v *float32, n int, c *AdamWConsts, near bool)) *updateOps {
	return &updateOps{
		sgdMomentum: func(w, g, b []float32, lr, wd, mu float32) {
			n := len(w) &^ 15
			if n > 0 {
				sgd(&w[0], &g[0], &b[0], n, lr, wd, mu)
			}
			sgdMomentumGo(w[n:], g[n:], b[n:], lr, wd, mu)
		},
		adamW: func(w, g, m, v []float32, c AdamWConsts) {
			n := len(w) &^ 15
			if n > 0 {
				adam(&w[0], &g[0], &m[0], &v[0], n, &c, c.Lerp < 0.5)
			}
			adamWGo(w[n:], g[n:], m[n:], v[n:], c)
		},
	}
}

//go:noescape
func sgdMomentumAVX512(w, grad, b *float32, n int, lr, wd, mu float32)

//go:noescape
func adamWAVX512(w, grad, m, v *float32, n int, c *AdamWConsts, near bool)

//go:noescape
func sgdMomentumAVX2(w, grad, b *float32, n int, lr, wd, mu float32)

//go:noescape
func adamWAVX2(w, grad, m, v *float32, n int, c *AdamWConsts, near bool)
