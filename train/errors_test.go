package train_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/optim"
	"github.com/psclip/psclip/tensor"
	"github.com/psclip/psclip/train"
)

// A zero Trainer (not made by New) returns ErrNotBuilt from every method
// that would need one, instead of panicking.
func TestZeroTrainer(t *testing.T) {
	var zero train.Trainer
	b := batch(rand.New(rand.NewPCG(1, 1)), 2)
	if _, err := zero.Step(b); !errors.Is(err, train.ErrNotBuilt) {
		t.Errorf("Step: %v, want ErrNotBuilt", err)
	}
	if _, err := zero.State(); !errors.Is(err, train.ErrNotBuilt) {
		t.Errorf("State: %v, want ErrNotBuilt", err)
	}
	if err := zero.SetState(train.State{}); !errors.Is(err, train.ErrNotBuilt) {
		t.Errorf("SetState: %v, want ErrNotBuilt", err)
	}
	var nilTrainer *train.Trainer
	if _, err := nilTrainer.Step(b); !errors.Is(err, train.ErrNotBuilt) {
		t.Errorf("Step on nil: %v, want ErrNotBuilt", err)
	}
}

// opaque is a layer of one's own that is not an nn.Shaper: it checks its
// input only when it runs, panicking on one it cannot take, as nn's layers
// do.
type opaque struct{ l *nn.Linear }

func (o *opaque) Forward(ctx *nn.Context, x *tensor.Tensor) *tensor.Tensor {
	if x.Dim(-1) != 5 {
		panic(fmt.Sprintf("opaque: input %v, want [B,5]", x))
	}
	return o.l.Forward(ctx, x)
}

func (o *opaque) Backward(ctx *nn.Context, dy *tensor.Tensor) *tensor.Tensor {
	return o.l.Backward(ctx, dy)
}

func (o *opaque) Params() []*nn.Param { return o.l.Params() }

var _ nn.Layer = (*opaque)(nil)

// A model with a layer that is not an nn.Shaper cannot be checked before
// it runs: Step and Evaluate then return a *BatchError wrapping an
// *nn.InputError for an input its forward pass refuses, and the Trainer
// takes the next good step.
func TestNoShaperBadInput(t *testing.T) {
	if _, ok := any(&opaque{}).(nn.Shaper); ok {
		t.Fatal("opaque is an nn.Shaper")
	}
	for _, est := range []estimator.Estimator{estimator.SGD{}, estimator.NewPSClip(must(estimator.Constant(1)))} {
		model := nn.Sequential{&opaque{nn.NewLinear("0", 5, 7, true)}, &nn.ReLU{}, nn.NewLinear("2", 7, 3, true)}
		opt, _ := optim.NewSGD(model.Params(), optim.SGDConfig{LR: 0.1})
		tr, err := train.New(train.Config{Model: model, Loss: nn.CrossEntropy, Estimator: est, Optimizer: opt})
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(2, 2))
		good := batch(rng, 4)
		bad := train.Batch{X: tensor.New(4, 6), Y: []int32{0, 1, 2, 0}}
		var be *train.BatchError
		var ie *nn.InputError
		if _, err := tr.Step(bad); !errors.As(err, &be) || be.Batch != 0 || !errors.As(err, &ie) {
			t.Errorf("%s: Step with a bad micro-batch: %v, want a *BatchError wrapping an *nn.InputError", est.Name(), err)
		}
		if _, err := train.Evaluate(model, nn.CrossEntropy, bad); !errors.As(err, &ie) {
			t.Errorf("Evaluate with a bad batch: %v, want an *nn.InputError", err)
		}
		if _, err := tr.Step(good); err != nil {
			t.Errorf("%s: a good step after the refused one: %v", est.Name(), err)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
