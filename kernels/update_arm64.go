//go:build !purego

package kernels

// update is the implementation of the optimizers' updates in use: NEON
// (update_arm64.s), or the portable code where PSCLIP_KERNEL picks the
// portable kernel.
var update = func() *updateOps {
	if vec == vecNEON {
		return updateNEON
	}
	return updateGo
}()

var updateNEON = &updateOps{
	sgdMomentum: sgdMomentumNEON,
	adamW: func(w, g, m, v []float32, c AdamWConsts) {
		if c.Lerp < 0.5 {
			adamWNearNEON(w, g, m, v, &c)
		} else {
			adamWFarNEON(w, g, m, v, &c)
		}
	},
}

// The assembly takes the length of the first slice; the others are at
// least as long (checked by the exported functions). adamWNearNEON takes
// lerp's branch for Lerp < 0.5, adamWFarNEON the other.

//go:noescape
func sgdMomentumNEON(w, g, b []float32, lr, wd, mu float32)

//go:noescape
func adamWNearNEON(w, g, m, v []float32, c *AdamWConsts)

//go:noescape
func adamWFarNEON(w, g, m, v []float32, c *AdamWConsts)
