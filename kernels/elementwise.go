package kernels

// The elementwise passes of the layers (residual sums, activation and
// layer-norm gradients): each output element is one fixed sequence of
// roundings, without fused multiply-adds, so the assembly versions give the
// portable code's bits.

// elemOps is one implementation of the elementwise passes; the arguments
// have been checked.
type elemOps struct {
	add, mul, addMul func(z, x, y []float32)
	normalize        func(y, h, x, w []float32, mean, rstd float64)
	normalizeGrad    func(dx, dy, h, w []float32, rstd, sg, sgx float32)
}

var elemGo = &elemOps{add: addGo, mul: mulGo, addMul: addMulGo, normalize: normalizeGo, normalizeGrad: normalizeGradGo}

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

// AddMul adds x[i]·y[i] into z[i], the product rounded before the sum (no
// fused multiply-add), as Go's z[i] += x[i]*y[i]. The slices must have
// equal lengths.
func AddMul(z, x, y []float32) {
	checkLen("AddMul", len(z), len(x), len(y))
	elem.addMul(z, x, y)
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
		z[i] += x[i] * y[i]
	}
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
		dx[i] = rstd * (g*w[i] - sg - h[i]*sgx)
	}
}
