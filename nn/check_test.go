package nn

// The layer checks of every layer's tests (finite differences, per-sample
// brute force, clipped aggregate) are package nntest's, the public harness
// that a user runs on a layer of their own. nntest imports nn, so these
// internal tests reach it through Harness, which harness_test.go (package
// nn_test, which may import it) fills in before any test runs:
//
//	checkGrad(t, l, x, gradOpt{NoInput, Tol, Step})   nntest.CheckGradients
//	checkPerSample(t, model, x, y, loss, rule)         nntest.CheckPerSample
//	randTensor, squareLoss, ids, medianClip            nntest.RandTensor, SquareLoss, IDs, MedianClip
//
// A loss's own checks (MSE's) are here too: checkLossGrad compares its
// output gradient with finite differences of Σ_i loss_i, and fixedTargets
// makes one a lossFunc over sample ids for checkPerSample's brute force.

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/psclip/psclip/tensor"
)

// lossFunc is the shape of a loss: per-sample losses and the gradient of
// their sum with respect to the model output (train.Loss).
type lossFunc = func(out *tensor.Tensor, y []int32) ([]float32, *tensor.Tensor, error)

// clipRule turns per-sample gradient norms into clip factors.
type clipRule = func(norms []float64) []float32

// gradOpt is nntest.Options.
type gradOpt struct {
	NoInput bool    // do not check the input gradient
	Tol     float64 // relative tolerance; 0 means 1e-2
	Step    float64 // finite-difference step; 0 means 1e-2
}

// Harness holds package nntest's checks (see the top of this file).
var Harness struct {
	CheckGrad      func(t *testing.T, l Layer, x *tensor.Tensor, noInput bool, tol, step float64)
	CheckPerSample func(t *testing.T, model Layer, x *tensor.Tensor, y []int32, loss lossFunc, rule clipRule)
	RandTensor     func(rng *rand.Rand, shape ...int) *tensor.Tensor
	SquareLoss     func(r *tensor.Tensor) lossFunc
	IDs            func(n int) []int32
	MedianClip     clipRule
}

func checkGrad(t *testing.T, l Layer, x *tensor.Tensor, opt gradOpt) {
	t.Helper()
	Harness.CheckGrad(t, l, x, opt.NoInput, opt.Tol, opt.Step)
}

func checkPerSample(t *testing.T, model Layer, x *tensor.Tensor, y []int32, loss lossFunc, rule clipRule) {
	t.Helper()
	Harness.CheckPerSample(t, model, x, y, loss, rule)
}

func randTensor(rng *rand.Rand, shape ...int) *tensor.Tensor {
	return Harness.RandTensor(rng, shape...)
}
func squareLoss(r *tensor.Tensor) lossFunc { return Harness.SquareLoss(r) }
func ids(n int) []int32                    { return Harness.IDs(n) }
func medianClip(norms []float64) []float32 { return Harness.MedianClip(norms) }

// floatLoss is the shape of a loss of float targets (MSE, Huber, BCE).
type floatLoss = func(out *tensor.Tensor, targets []float32) ([]float32, *tensor.Tensor, error)

// checkLossGrad checks a float-target loss's output gradient against
// central finite differences (step h, in float64) of Σ_i loss_i, and that
// each sample's loss depends only on that sample's outputs (its slice of
// dout is the gradient of its own loss: the per-sample rule).
func checkLossGrad(t *testing.T, loss floatLoss, out *tensor.Tensor, targets []float32) {
	t.Helper()
	_, d, err := loss(out, targets)
	if err != nil {
		t.Fatal(err)
	}
	b := out.Dim(0)
	per := out.Len() / b
	const h = 1e-2
	for j := range out.Data {
		old := out.Data[j]
		out.Data[j] = old + h
		up, _, _ := loss(out, targets)
		out.Data[j] = old - h
		down, _, _ := loss(out, targets)
		out.Data[j] = old
		for i := range b {
			num := (float64(up[i]) - float64(down[i])) / (2 * h)
			want := 0.0 // sample i's loss does not move with another sample's outputs
			if j/per == i {
				want = float64(d.Data[j])
			}
			if math.Abs(num-want) > 1e-3*(1+math.Abs(want)) {
				t.Errorf("d loss_%d / d out[%d]: finite differences %.6g, want %.6g", i, j, num, want)
			}
		}
	}
}

// fixedTargets is loss against fixed targets, per values per sample id:
// the lossFunc checkPerSample needs, y = ids(B) making a batch of one find
// its own targets.
func fixedTargets(loss floatLoss, r []float32, per int) lossFunc {
	return func(out *tensor.Tensor, y []int32) ([]float32, *tensor.Tensor, error) {
		targets := make([]float32, 0, len(y)*per)
		for _, id := range y {
			targets = append(targets, r[int(id)*per:(int(id)+1)*per]...)
		}
		return loss(out, targets)
	}
}

// randomize fills every parameter of l with N(0, scale²) entries.
func randomize(rng *rand.Rand, l Layer, scale float64) {
	for _, p := range l.Params() {
		for i := range p.Value.Data {
			p.Value.Data[i] = float32(scale * rng.NormFloat64())
		}
	}
}

// ForceRule sets the per-sample rule of every Linear and Conv2d in a
// Sequential model: ghost norms if ghost, materialised gradients otherwise.
func ForceRule(m Sequential, ghost bool) {
	r := ruleMaterialise
	if ghost {
		r = ruleGhost
	}
	for _, l := range m {
		switch l := l.(type) {
		case *Linear:
			l.rule = r
		case *Conv2d:
			l.rule = r
		}
	}
}
