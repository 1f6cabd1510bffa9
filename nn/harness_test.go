package nn_test

import (
	"testing"

	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/nn/nntest"
	"github.com/psclip/psclip/tensor"
)

// init hands package nntest's checks to nn's internal tests (check_test.go).
func init() {
	h := &nn.Harness
	h.CheckGrad = func(t *testing.T, l nn.Layer, x *tensor.Tensor, noInput bool, tol, step float64) {
		t.Helper()
		nntest.CheckGradients(t, l, x, nntest.Options{NoInput: noInput, Tol: tol, Step: step})
	}
	h.CheckPerSample = func(t *testing.T, model nn.Layer, x *tensor.Tensor, y []int32, loss func(*tensor.Tensor, []int32) ([]float32, *tensor.Tensor, error), rule func([]float64) []float32) {
		t.Helper()
		nntest.CheckPerSample(t, model, x, y, loss, rule)
	}
	h.RandTensor = nntest.RandTensor
	h.SquareLoss = func(r *tensor.Tensor) func(*tensor.Tensor, []int32) ([]float32, *tensor.Tensor, error) {
		return nntest.SquareLoss(r)
	}
	h.IDs = nntest.IDs
	h.MedianClip = nntest.MedianClip
}
