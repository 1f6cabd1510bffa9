// Package train runs training steps: forward, backward, per-sample norm
// collection, the estimator's clipping and the optimizer's update, with
// gradient accumulation over micro-batches.
//
// A Trainer is configured with a model (any nn.Layer), a loss, an estimator
// and an optimizer. Step takes one or more micro-batches and performs exactly
// one optimizer update:
//
//   - an estimator that works per sample (estimator.PerSample) runs the model's
//     backward pass in the nn per-sample mode: every sample's gradient norm is
//     collected during the ordinary backward pass, the estimator turns the
//     norms into weights, and the weighted (clipped) gradient is formed with
//     no second pass;
//   - any other estimator runs the plain backward pass on the micro-batch
//     mean;
//   - the estimator's batch-level Scale (Clip-SGD's clip, normalized SGD's
//     normalisation) is applied once to the accumulated gradient (Global), or
//     to every micro-batch's gradient before it is accumulated (MicroBatch:
//     MB-Clip).
//
// The direction handed to the optimizer is the average over micro-batches of
// the per-micro-batch directions, so a threshold means the same whatever the
// number of micro-batches: with K identical micro-batches every scope gives
// the same update as one large batch.
//
// Memory. Global and per-sample clipping accumulate in place in Param.Grad.
// MicroBatch keeps one running-sum buffer the size of the gradients: a
// micro-batch's gradient norm is known only once its gradient is complete,
// and once that gradient has been added in place to a running sum its own
// part can no longer be scaled, so clipping it needs either a second buffer
// or a second backward pass. psclip spends the buffer (the paper's
// implementation kept one too) and little time: per micro-batch, one pass
// takes the norm (kernels.SqNorm) and one adds the scaled gradient into the
// running sum while clearing it (kernels.AxpyZero), walking the spans
// backwards so that it starts on those the norm pass left in cache; the
// final move into Param.Grad replaces the paper's copy-back. On 917,504
// weights shaped like the small GPT's (BenchmarkMicroBatchPasses, 2 cores,
// load ≈ 5) the two passes take 0.62–0.77 ms a micro-batch, against
// 1.97–2.41 ms for the scalar loops they replaced.
package train

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"

	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/kernels"
	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/tensor"
)

// Loss computes each sample's loss from the model's output and the targets,
// and the gradient of Σ_i loss_i with respect to the output (so each sample's
// slice of dout is the gradient of its own loss). Targets that do not fit the
// output are an error.
type Loss func(out *tensor.Tensor, targets []int32) (losses []float32, dout *tensor.Tensor, err error)

// Optimizer updates the parameters from their gradients (Param.Grad).
type Optimizer interface {
	Step()
}

// Scope says where the estimator's batch-level Scale is applied when a step
// accumulates several micro-batches.
type Scope int

const (
	// Global scales the accumulated gradient once: the usual practice.
	Global Scope = iota
	// MicroBatch scales every micro-batch's gradient before accumulating it
	// (MB-Clip).
	MicroBatch
)

func (s Scope) String() string {
	switch s {
	case Global:
		return "global"
	case MicroBatch:
		return "micro-batch"
	}
	return fmt.Sprintf("Scope(%d)", int(s))
}

// Batch is one micro-batch: the model input and the targets of the loss.
type Batch struct {
	X *tensor.Tensor
	Y []int32
}

// Config configures a Trainer.
type Config struct {
	Model     nn.Layer
	Loss      Loss
	Estimator estimator.Estimator
	Optimizer Optimizer
	Scope     Scope
	// Rand drives training randomness inside the model (dropout). It may be
	// nil for models without dropout.
	Rand *rand.Rand
}

// Stats describes one training step.
type Stats struct {
	// Loss is the mean loss over the samples with a finite loss.
	Loss float64
	// Samples is the number of samples in the step, over all micro-batches.
	Samples int
	// Clipped and Dropped count samples whose gradient was clipped or left
	// out as non-finite by a per-sample estimator. MeanSampleNorm is the mean
	// per-sample gradient norm over finite samples (0 without per-sample
	// norms).
	Clipped, Dropped int
	MeanSampleNorm   float64
	// GradNorm is the norm the batch-level Scale saw: the accumulated
	// gradient's (Global) or the mean of the micro-batch gradients' norms
	// (MicroBatch). It is torch's clip_grad_norm_ return value.
	GradNorm float64
	// ClippedBatches counts the gradients the batch-level Scale shrank: 0 or
	// 1 with Global, up to the number of micro-batches with MicroBatch.
	ClippedBatches int
	// SkippedBatches counts micro-batches left out because their loss or
	// gradient was not finite.
	SkippedBatches int
	// Skipped reports that no update was made: every micro-batch was bad,
	// or the accumulated gradient was not finite.
	Skipped bool
}

// Trainer runs training steps. It is not safe for concurrent use.
type Trainer struct {
	cfg     Config
	params  []*nn.Param
	ctx     nn.Context
	acc     [][]float32 // MicroBatch only: the running sum of scaled micro-batch gradients
	spans   []span      // the gradients cut into chunks for the passes over them
	partial []float64   // gradNorm: one partial sum per span
	norms   []float64
	weights []float64
	factors []float32
}

// New validates cfg and returns a Trainer.
func New(cfg Config) (*Trainer, error) {
	switch {
	case cfg.Model == nil:
		return nil, errors.New("train: no model")
	case cfg.Loss == nil:
		return nil, errors.New("train: no loss")
	case cfg.Estimator == nil:
		return nil, errors.New("train: no estimator")
	case cfg.Optimizer == nil:
		return nil, errors.New("train: no optimizer")
	case cfg.Scope != Global && cfg.Scope != MicroBatch:
		return nil, fmt.Errorf("train: unknown scope %v", cfg.Scope)
	}
	// A tied parameter (GPT's wte and lm_head) is listed by both its users;
	// it must be zeroed, measured and scaled once.
	t := &Trainer{cfg: cfg, params: uniqueParams(cfg.Model.Params())}
	if len(t.params) == 0 {
		return nil, errors.New("train: the model has no parameters")
	}
	if cfg.Scope == MicroBatch {
		t.acc = make([][]float32, len(t.params))
		for i, p := range t.params {
			t.acc[i] = make([]float32, p.Grad.Len())
		}
	}
	for i, p := range t.params {
		for lo := 0; lo < p.Grad.Len(); lo += spanLen {
			t.spans = append(t.spans, span{i, lo, min(lo+spanLen, p.Grad.Len())})
		}
	}
	t.partial = make([]float64, len(t.spans))
	return t, nil
}

// Params returns the model's parameters, in the model's order, each once.
func (t *Trainer) Params() []*nn.Param { return t.params }

// Step performs one optimizer update from the given micro-batches. An error
// means bad input (no batches, targets that do not fit); the parameters are
// then unchanged. A non-finite loss or gradient is not an error: it is
// reported in Stats and kept out of the update.
func (t *Trainer) Step(batches ...Batch) (Stats, error) {
	var st Stats
	if len(batches) == 0 {
		return st, errors.New("train: Step needs at least one micro-batch")
	}
	t.zeroGrads()
	t.ctx.Train, t.ctx.Rand = true, t.cfg.Rand
	k := len(batches)
	var lossSum, normSum, scaleNormSum float64
	var finiteSamples, normSamples, used int
	for _, b := range batches {
		out := t.cfg.Model.Forward(&t.ctx, b.X)
		losses, dout, err := t.cfg.Loss(out, b.Y)
		if err != nil {
			t.zeroGrads()
			return Stats{}, err
		}
		m := len(losses)
		st.Samples += m
		good := 0
		for _, l := range losses {
			if isFinite(float64(l)) {
				lossSum += float64(l)
				good++
			}
		}
		finiteSamples += good
		if t.cfg.Estimator.PerSample() {
			es := t.perSampleBackward(dout, m, 1/float32(k))
			st.Clipped += es.Clipped
			st.Dropped += es.Dropped
			normSum += es.MeanNorm * float64(es.N-es.Dropped)
			normSamples += es.N - es.Dropped
			if es.Dropped == es.N {
				st.SkippedBatches++
				continue
			}
		} else {
			if good < m {
				// A plain backward pass cannot keep one sample's NaN out
				// of the others' gradient: leave the micro-batch out.
				st.SkippedBatches++
				continue
			}
			kernels.Scale(1/float32(m*k), dout.Data)
			t.cfg.Model.Backward(&t.ctx, dout)
		}
		if t.cfg.Scope == MicroBatch {
			n := t.gradNorm()
			if !isFinite(n) {
				st.SkippedBatches++
				t.zeroGrads()
				continue
			}
			// The micro-batch's direction was formed with weight 1/k so
			// that the accumulated sum is an average; Scale sees the
			// micro-batch's own gradient norm.
			s := t.cfg.Estimator.Scale(n * float64(k))
			if s < 1 {
				st.ClippedBatches++
			}
			scaleNormSum += n * float64(k)
			t.accumulate(float32(s))
		}
		used++
	}
	if finiteSamples > 0 {
		st.Loss = lossSum / float64(finiteSamples)
	} else {
		st.Loss = math.NaN()
	}
	if normSamples > 0 {
		st.MeanSampleNorm = normSum / float64(normSamples)
	}
	if used == 0 {
		st.Skipped = true
		st.GradNorm = math.NaN() // no gradient was formed
		t.zeroGrads()
		return st, nil
	}
	if t.cfg.Scope == MicroBatch {
		t.takeAccumulated(float32(k) / float32(used))
		st.GradNorm = scaleNormSum / float64(used)
	} else {
		if used < k {
			t.scaleGrads(float32(k) / float32(used))
		}
		n := t.gradNorm()
		st.GradNorm = n
		if !isFinite(n) {
			st.Skipped = true
			t.zeroGrads()
			return st, nil
		}
		if s := t.cfg.Estimator.Scale(n); s != 1 {
			if s < 1 {
				st.ClippedBatches = 1
			}
			t.scaleGrads(float32(s))
		}
	}
	t.cfg.Optimizer.Step()
	return st, nil
}

// perSampleBackward runs the backward pass in the per-sample mode and adds
// weight·Σ_i w_i g_i into the gradients, where w are the estimator's weights.
func (t *Trainer) perSampleBackward(dout *tensor.Tensor, m int, weight float32) estimator.Stats {
	t.ctx.BeginPerSample(m)
	defer t.ctx.EndPerSample()
	t.cfg.Model.Backward(&t.ctx, dout)
	t.norms = resize(t.norms, m)
	t.weights = resize(t.weights, m)
	for i, sq := range t.ctx.SqNorms() {
		t.norms[i] = math.Sqrt(sq)
	}
	es := t.cfg.Estimator.Weights(t.norms, t.weights)
	t.factors = resize(t.factors, m)
	for i, w := range t.weights {
		t.factors[i] = float32(w) * weight
	}
	t.ctx.Finish(t.factors)
	return es
}

func (t *Trainer) zeroGrads() {
	for _, p := range t.params {
		p.Grad.Zero()
	}
}

func (t *Trainer) scaleGrads(s float32) {
	t.each(false, func(_ int, sp span) { kernels.Scale(s, t.params[sp.param].Grad.Data[sp.lo:sp.hi]) })
}

// gradNorm is the Euclidean norm of all gradients: a partial sum per span,
// added in span order, so the rounding does not depend on GOMAXPROCS.
func (t *Trainer) gradNorm() float64 {
	t.each(false, func(j int, sp span) { t.partial[j] = kernels.SqNorm(t.params[sp.param].Grad.Data[sp.lo:sp.hi]) })
	var s float64
	for _, v := range t.partial {
		s += v
	}
	return math.Sqrt(s)
}

// accumulate adds s·grad into the running sum and clears the gradients for
// the next micro-batch, in one pass. It follows gradNorm and walks the spans
// backwards, so that it starts on the spans gradNorm left in cache.
func (t *Trainer) accumulate(s float32) {
	t.each(true, func(_ int, sp span) {
		kernels.AxpyZero(s, t.params[sp.param].Grad.Data[sp.lo:sp.hi], t.acc[sp.param][sp.lo:sp.hi])
	})
}

// takeAccumulated moves s·(running sum) into the gradients and clears the sum.
func (t *Trainer) takeAccumulated(s float32) {
	t.each(false, func(_ int, sp span) {
		acc := t.acc[sp.param][sp.lo:sp.hi]
		g := t.params[sp.param].Grad.Data[sp.lo:sp.hi]
		copy(g, acc)
		kernels.Scale(s, g)
		clear(acc)
	})
}

// spanLen is the length of the chunks the passes over all gradients work
// on: large enough to amortise a goroutine's share, small enough to balance
// the work of models with one huge parameter.
const spanLen = 1 << 15

// span is elements [lo,hi) of the gradient of parameter param.
type span struct{ param, lo, hi int }

// each runs f on every span, the spans split evenly among up to GOMAXPROCS
// goroutines, each goroutine's share in order or, with reverse, backwards.
// Every span is one fixed piece of work whichever goroutine runs it, so
// results do not depend on GOMAXPROCS.
func (t *Trainer) each(reverse bool, f func(j int, sp span)) {
	n := len(t.spans)
	nw := max(1, min(n, runtime.GOMAXPROCS(0)))
	run := func(w int) {
		lo, hi := w*n/nw, (w+1)*n/nw
		for k := lo; k < hi; k++ {
			j := k
			if reverse {
				j = lo + hi - 1 - k
			}
			f(j, t.spans[j])
		}
	}
	if nw == 1 {
		run(0)
		return
	}
	var wg sync.WaitGroup
	for w := 1; w < nw; w++ {
		wg.Go(func() { run(w) })
	}
	run(0)
	wg.Wait()
}

func uniqueParams(ps []*nn.Param) []*nn.Param {
	seen := make(map[*nn.Param]bool, len(ps))
	var out []*nn.Param
	for _, p := range ps {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

func isFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
