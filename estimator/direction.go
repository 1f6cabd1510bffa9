package estimator

import (
	"fmt"
	"math"
)

// Float is the element type of the gradients Direction works on: float32
// (PyTorch's and nn's default) or float64.
type Float interface{ ~float32 | ~float64 }

// Result is what Direction computed for one batch: e's statistics with
// PreClipNorm and BatchClipped filled in, every sample's gradient norm and
// its plain clip factor (Estimator.Factors: 1 kept whole, below 1 clipped,
// 0 dropped). The weight of sample i in the direction is Factors[i]/m, with
// m = N − Dropped, times Scale.
type Result struct {
	Stats
	Norms, Factors []float64
}

// Weights sets w[i] = c_i/m for one whole batch (k0 = 0): e's clip factors
// over the number m of samples with a finite norm, 0 for the others, so that
// Σ w_i g_i is the clipped mean. It then ends the step (Estimator.Update).
// If no norm is finite every weight is 0. A noisy estimator (DP-SGD) is a
// programming error that Weights panics on: weights carry no noise.
func Weights(e Estimator, norms, w []float64) Stats {
	if NoisyOf(e) != nil {
		panic("estimator: Weights with the noisy estimator " + e.Name() + ": its noise would be dropped")
	}
	if ps, ok := e.(*PSClip); ok {
		return ps.weights(norms, w)
	}
	st := e.Factors(0, norms, w)
	e.Update(norms)
	if m := st.N - st.Dropped; m > 0 {
		inv := 1 / float64(m)
		for i := range norms {
			w[i] *= inv
		}
	}
	return st
}

// Direction computes the update direction of e for a batch of explicit
// per-sample gradients. grads holds the n samples' gradients row by row
// (n×d, row-major) and d = len(dir) > 0; len(grads) must be a multiple of
// d, or Direction returns a *ShapeError. e must pass Validate (its error is
// returned). On error nothing is written and e is unchanged. The norms are
// computed and the direction accumulated in float64 whatever F is.
//
// A sample whose gradient norm is NaN or ±Inf (any non-finite component)
// gets weight 0 and is counted in Stats.Dropped; the others are averaged as
// if it were not there. If every sample is non-finite, or the batch is
// empty, dir is zero.
//
// A noisy estimator (DP-SGD, NoisyOf) is refused with a *NoisyError:
// its noise is added to a sum of clipped gradients divided by an expected
// batch size, which Direction's one batch does not have, and the noise-free
// clipped mean it would return is not private.
//
// Direction allocates on every call; use a Workspace in loops.
func Direction[F Float](e Estimator, grads, dir []F) (Result, error) {
	var ws Workspace[F]
	return ws.Direction(e, grads, dir)
}

// ShapeError is Direction's error for gradients that do not form rows of
// the direction's length.
type ShapeError struct {
	Grads, Dir int // len(grads), len(dir)
}

func (e *ShapeError) Error() string {
	return fmt.Sprintf("estimator: %d gradient values do not form rows of length %d (want len(dir) > 0 dividing len(grads))", e.Grads, e.Dir)
}

// NoisyError is Direction's error for a noisy estimator (DP-SGD): train
// it with package train (Trainer.PrivateStep, or Private), which adds the
// noise once a step.
type NoisyError struct {
	Estimator string // its name
}

func (e *NoisyError) Error() string {
	return fmt.Sprintf("estimator: Direction cannot add %s's noise (it has no expected batch size) and would return a clipped mean that is not private; train it with package train", e.Estimator)
}

// A Workspace holds the scratch space of Direction, so that repeated calls
// with batches of the same size do not allocate. The zero value is ready to
// use; a Workspace must not be used by two goroutines at once.
type Workspace[F Float] struct {
	norms, w, acc []float64
}

// Direction is the package-level Direction using ws's scratch space. The
// Result's Norms and Factors are ws's: they are valid until its next call.
func (ws *Workspace[F]) Direction(e Estimator, grads, dir []F) (Result, error) {
	d := len(dir)
	if d == 0 || len(grads)%d != 0 {
		return Result{}, &ShapeError{Grads: len(grads), Dir: d}
	}
	if err := Validate(e); err != nil {
		return Result{}, err
	}
	if NoisyOf(e) != nil {
		return Result{}, &NoisyError{Estimator: e.Name()}
	}
	n := len(grads) / d
	ws.norms = grow(ws.norms, n)
	ws.w = grow(ws.w, n)
	ws.acc = grow(ws.acc, d)
	for i := range n {
		ws.norms[i] = norm(grads[i*d : (i+1)*d])
	}
	st := e.Factors(0, ws.norms, ws.w)
	e.Update(ws.norms)
	acc := ws.acc
	clear(acc)
	if m := st.N - st.Dropped; m > 0 {
		inv := 1 / float64(m)
		for i, c := range ws.w {
			// Skipping zero factors keeps a dropped sample's NaN out: 0·NaN is NaN.
			if c == 0 {
				continue
			}
			w := c * inv
			for j, v := range grads[i*d : (i+1)*d] {
				acc[j] += float64(w * float64(v)) // rounded: see the package documentation
			}
		}
	}
	st.PreClipNorm = norm(acc)
	s := e.Scale(st.PreClipNorm)
	st.BatchClipped = s < 1 && st.PreClipNorm > 0
	for j, v := range acc {
		dir[j] = F(v * s)
	}
	return Result{Stats: st, Norms: ws.norms, Factors: ws.w}, nil
}

// norm returns the Euclidean norm of x: NaN if any component is NaN, +Inf if
// any is infinite (or the sum of squares overflows).
func norm[F Float](x []F) float64 {
	var s float64
	for _, v := range x {
		s += float64(float64(v) * float64(v)) // rounded: see the package documentation
	}
	return math.Sqrt(s)
}

func grow(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}
