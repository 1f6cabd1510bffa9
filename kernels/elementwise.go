package kernels

import "math"

// The elementwise passes of the layers (residual sums, activation and
// layer-norm gradients): each output element is one fixed sequence of
// roundings, every product rounded before it is added (an explicit
// conversion, which the Go spec forbids a compiler to fuse into a
// multiply-add, as GOAMD64=v3 and arm64 would otherwise), and the assembly
// versions repeat it, so they give the portable code's bits on every
// architecture and build.

// elemOps is one implementation of the elementwise passes; the arguments
// have been checked.
type elemOps struct {
	add, mul, addMul func(z, x, y []float32)
	reluGrad         func(dx, dy, y []float32)
	biasReLU         func(z, x []float32, b float32)
	normalize        func(y, h, x, w []float32, mean, rstd float64)
	normalizeGrad    func(dx, dy, h, w []float32, rstd, sg, sgx float32)
}

var elemGo = &elemOps{add: addGo, mul: mulGo, addMul: addMulGo, reluGrad: reluGradGo, biasReLU: biasReLUGo, normalize: normalizeGo, normalizeGrad: normalizeGradGo}

// Add sets z[i] = x[i] + y[i]. The slices must have equal lengths.
func Add(z, x, y []float32) {
	checkLen("Add", len(z), len(x), len(y))
	elem.add(z, x, y)
}

// Mul sets z[i] = x[i]·y[i]. The slices must have equal lengths.
func Mul(z, x, y []float32) {
	checkLen("Mul", len(z), len(x), len(y))
	elem.mul(z, x, y)
}

// AddMul adds x[i]·y[i] into z[i], the product rounded before the sum (not
// one fused multiply-add) on every architecture. The slices must have equal
// lengths.
func AddMul(z, x, y []float32) {
	checkLen("AddMul", len(z), len(x), len(y))
	elem.addMul(z, x, y)
}

// ReLUGrad is a ReLU's input gradient: dx[i] = dy[i] where the ReLU's
// output y[i] is positive, +0 elsewhere (and where y[i] is NaN). The slices
// must have equal lengths.
func ReLUGrad(dx, dy, y []float32) {
	checkLen("ReLUGrad", len(dx), len(dy), len(y))
	elem.reluGrad(dx, dy, y)
}

// BiasReLU adds b and applies a ReLU: z[i] = u where u = x[i] + b is not
// negative (−0 and NaN included) and +0 where it is. The slices must have
// equal lengths; z and x may be the same.
func BiasReLU(z, x []float32, b float32) {
	checkLen("BiasReLU", len(z), len(x))
	elem.biasReLU(z, x, b)
}

// Normalize computes one row of a layer norm from its input x, mean and
// 1/√(var+eps): h[i] = float32((float64(x[i]) − mean)·rstd), in float64,
// and y[i] = h[i]·w[i]. The slices must have equal lengths.
func Normalize(y, h, x, w []float32, mean, rstd float64) {
	checkLen("Normalize", len(y), len(h), len(x), len(w))
	elem.normalize(y, h, x, w, mean, rstd)
}

// NormalizeGrad computes one row of a layer norm's input gradient from the
// output gradient dy, the normalised input h, the weight w and the row's
// sums: dx[i] = rstd·((dy[i]·w[i] − sg) − h[i]·sgx). The slices must have
// equal lengths.
func NormalizeGrad(dx, dy, h, w []float32, rstd, sg, sgx float32) {
	checkLen("NormalizeGrad", len(dx), len(dy), len(h), len(w))
	elem.normalizeGrad(dx, dy, h, w, rstd, sg, sgx)
}

func checkLen(name string, n int, others ...int) {
	for _, m := range others {
		if m != n {
			panic("kernels: " + name + ": slices of different lengths")
		}
	}
}

func addGo(z, x, y []float32) {
	x, y = x[:len(z)], y[:len(z)]
	for i := range z {
		z[i] = x[i] + y[i]
	}
}

func mulGo(z, x, y []float32) {
	x, y = x[:len(z)], y[:len(z)]
	for i := range z {
		z[i] = x[i] * y[i]
	}
}

func addMulGo(z, x, y []float32) {
	x, y = x[:len(z)], y[:len(z)]
	for i := range z {
		z[i] += float32(x[i] * y[i])
	}
}

func reluGradGo(dx, dy, y []float32) {
	dy, y = dy[:len(dx)], y[:len(dx)]
	for i, g := range dy {
		dx[i] = KeepIf(g, y[i] > 0)
	}
}

func biasReLUGo(z, x []float32, b float32) {
	x = x[:len(z)]
	for i, v := range x {
		u := v + b
		z[i] = KeepIf(u, !(u < 0))
	}
}

// KeepIf is v if keep and +0 otherwise, by masking v's bits: the compiler
// turns the integer choice into a conditional move, while a branch on the
// sign of an activation, as unpredictable as a coin, costs a misprediction
// every other element.
func KeepIf(v float32, keep bool) float32 {
	var m uint32
	if keep {
		m = ^uint32(0)
	}
	return math.Float32frombits(math.Float32bits(v) & m)
}

func normalizeGo(y, h, x, w []float32, mean, rstd float64) {
	h, x, w = h[:len(y)], x[:len(y)], w[:len(y)]
	for i, v := range x {
		hi := float32((float64(v) - mean) * rstd)
		h[i] = hi
		y[i] = hi * w[i]
	}
}

func normalizeGradGo(dx, dy, h, w []float32, rstd, sg, sgx float32) {
	dy, h, w = dy[:len(dx)], h[:len(dx)], w[:len(dx)]
	for i, g := range dy {
		dx[i] = rstd * (float32(g*w[i]) - sg - float32(h[i]*sgx))
	}
}
