package kernels

import "math"

// The optimizers' per-element updates (package optim evaluates PyTorch's
// float32 formulas in PyTorch's order). Each element is one fixed sequence
// of roundings, every product rounded before it is added (float32(a*b): an
// explicit conversion, which the Go spec forbids a compiler to fuse into a
// multiply-add, as GOAMD64=v3 and arm64 would otherwise), and the assembly
// versions repeat it, so they give the portable code's bits on every
// architecture and build, whichever elements fall to the Go tails.

// SGDMomentum takes one step of SGD with momentum mu and weight decay wd
// after the first (PyTorch's dampening 0, not Nesterov):
//
//	b = mu·b + (g + wd·w),  w = w − lr·b.
//
// The slices must have equal lengths.
func SGDMomentum(w, g, b []float32, lr, wd, mu float32) {
	checkLen("SGDMomentum", len(w), len(g), len(b))
	update.sgdMomentum(w, g, b, lr, wd, mu)
}

// AdamWConsts are the scalars of one AdamW step, each formed by the caller
// in float64 and rounded to float32 once, as torch does.
type AdamWConsts struct {
	Decay         float32 // 1 − lr·λ
	Lerp          float32 // 1 − β₁, the weight of g in m's lerp
	Beta2         float32 // β₂
	OneMinusBeta2 float32 // 1 − β₂
	BC2Sqrt       float32 // √(1 − β₂ᵗ)
	Eps           float32 // ε
	StepSize      float32 // lr/(1 − β₁ᵗ)
}

// AdamW takes one AdamW step (torch.optim.AdamW's single-tensor update):
//
//	w = w·Decay
//	m = lerp(m, g, Lerp)              (torch.lerp: from the nearer end)
//	v = Beta2·v + OneMinusBeta2·g·g
//	w = w − StepSize·(m / (√v/BC2Sqrt + Eps))
//
// with √v computed in float64 and rounded to float32. The slices must have
// equal lengths.
func AdamW(w, g, m, v []float32, c AdamWConsts) {
	checkLen("AdamW", len(w), len(g), len(m), len(v))
	update.adamW(w, g, m, v, c)
}

// updateOps is one implementation of the updates; arguments are checked.
type updateOps struct {
	sgdMomentum func(w, g, b []float32, lr, wd, mu float32)
	adamW       func(w, g, m, v []float32, c AdamWConsts)
}

var updateGo = &updateOps{sgdMomentum: sgdMomentumGo, adamW: adamWGo}

func sgdMomentumGo(w, g, b []float32, lr, wd, mu float32) {
	g, b = g[:len(w)], b[:len(w)]
	for j, x := range w {
		bj := float32(mu*b[j]) + (g[j] + float32(wd*x))
		b[j] = bj
		w[j] = x - float32(lr*bj)
	}
}

func adamWGo(w, g, m, v []float32, c AdamWConsts) {
	g, m, v = g[:len(w)], m[:len(w)], v[:len(w)]
	for j, x := range w {
		x = float32(x * c.Decay)
		gj := g[j]
		mj := lerp(m[j], gj, c.Lerp)
		vj := float32(c.Beta2*v[j]) + float32(c.OneMinusBeta2*gj*gj)
		m[j], v[j] = mj, vj
		denom := float32(math.Sqrt(float64(vj)))/c.BC2Sqrt + c.Eps
		w[j] = x - float32(c.StepSize*(mj/denom))
	}
}

// lerp is torch.lerp for float32: start + weight·(end − start), computed
// from the nearer end for accuracy.
func lerp(start, end, weight float32) float32 {
	if weight < 0.5 {
		return start + float32(weight*(end-start))
	}
	return end - float32((end-start)*(1-weight))
}
