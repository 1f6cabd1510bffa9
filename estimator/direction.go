package estimator

import (
	"fmt"
	"math"
)

// Direction computes the update direction of e for a batch of explicit
// per-sample gradients and returns e's statistics with PreClipNorm and
// BatchClipped filled in. grads holds the n samples' gradients row by row
// (n×d, row-major) and d = len(dir); len(grads) must be a multiple of d.
//
// A sample whose gradient norm is NaN or ±Inf (any non-finite component)
// gets weight 0 and is counted in Stats.Dropped; the others are averaged as
// if it were not there. If every sample is non-finite, or the batch is
// empty, dir is zero.
//
// Direction allocates scratch space on every call; use a Workspace in loops.
func Direction(e Estimator, grads, dir []float64) Stats {
	var ws Workspace
	return ws.Direction(e, grads, dir)
}

// A Workspace holds the scratch space of Direction, so that repeated calls
// with batches of the same size do not allocate. The zero value is ready to
// use; a Workspace must not be used by two goroutines at once.
type Workspace struct {
	norms, w []float64
}

// Direction is the package-level Direction using ws's scratch space.
func (ws *Workspace) Direction(e Estimator, grads, dir []float64) Stats {
	d := len(dir)
	if d == 0 || len(grads)%d != 0 {
		panic(fmt.Sprintf("estimator: %d gradient values do not form rows of length %d", len(grads), d))
	}
	n := len(grads) / d
	ws.norms = grow(ws.norms, n)
	ws.w = grow(ws.w, n)
	for i := range n {
		ws.norms[i] = norm(grads[i*d : (i+1)*d])
	}
	st := e.Weights(ws.norms, ws.w)
	clear(dir)
	for i, w := range ws.w {
		// Skipping zero weights keeps a dropped sample's NaN out: 0·NaN is NaN.
		if w == 0 {
			continue
		}
		g := grads[i*d : (i+1)*d]
		for j := range dir {
			dir[j] += w * g[j]
		}
	}
	st.PreClipNorm = norm(dir)
	if s := e.Scale(st.PreClipNorm); s != 1 {
		st.BatchClipped = s < 1 && st.PreClipNorm > 0
		for j := range dir {
			dir[j] *= s
		}
	}
	return st
}

// norm returns the Euclidean norm of x: NaN if any component is NaN, +Inf if
// any is infinite (or the sum of squares overflows).
func norm(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v * v
	}
	return math.Sqrt(s)
}

func grow(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}
