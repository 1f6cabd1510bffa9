package checkpoint_test

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/psclip/psclip/checkpoint"
	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/optim"
	"github.com/psclip/psclip/train"
)

// methodTrainer builds a trainer of a small MLP with the estimator of spec.
func methodTrainer(t *testing.T, spec estimator.Spec) *train.Trainer {
	t.Helper()
	est, err := spec.New()
	if err != nil {
		t.Fatal(err)
	}
	return methodTrainerOf(t, est)
}

func methodTrainerOf(t *testing.T, est estimator.Estimator) *train.Trainer {
	t.Helper()
	model := nn.Sequential{nn.NewLinear("0", 4, 8, true), &nn.ReLU{}, nn.NewLinear("2", 8, 3, true)}
	opt, err := optim.NewSGD(model.Params(), optim.SGDConfig{LR: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	cfg := train.Config{Model: model, Loss: nn.CrossEntropy, Estimator: est, Optimizer: opt}
	if estimator.NoisyOf(est) != nil {
		cfg.ExpectedBatch = 32
	}
	tr, err := train.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// A checkpoint restores only into the method and settings that saved it:
// another estimator, threshold, γ, σ or rate is refused with an
// *estimator.MismatchError and leaves the trainer as it was; the same
// method restores.
func TestRestoreIntoAnotherMethod(t *testing.T) {
	quantile := estimator.Spec{Estimator: "ps-clip-quantile", Clip: 1}
	increasing := estimator.Spec{Estimator: "ps-clip-sgd", Alpha: 1, Beta: 2}
	constant := estimator.Spec{Estimator: "ps-clip-sgd", Clip: 1}
	dp := estimator.Spec{Estimator: "dp-sgd", Clip: 1, NoiseMultiplier: 1, NoiseSeed: 7}
	clip := estimator.Spec{Estimator: "clip-sgd", Clip: 1}
	ps1, _ := estimator.Constant(1)
	for _, tc := range []struct {
		name       string
		saved, new estimator.Spec
		into       estimator.Estimator // instead of new
	}{
		{name: "quantile into NewPSClip(Constant(1))", saved: quantile, into: estimator.NewPSClip(ps1)},
		{name: "quantile into another rate", saved: quantile, new: estimator.Spec{Estimator: "ps-clip-quantile", Clip: 1, QuantileRate: 0.5}},
		{name: "increasing into constant", saved: increasing, new: constant},
		{name: "constant into increasing", saved: constant, new: increasing},
		{name: "another γ", saved: constant, new: estimator.Spec{Estimator: "ps-clip-sgd", Clip: 2}},
		{name: "another σ", saved: dp, new: estimator.Spec{Estimator: "dp-sgd", Clip: 1, NoiseMultiplier: 2, NoiseSeed: 7}},
		{name: "another C", saved: dp, new: estimator.Spec{Estimator: "dp-sgd", Clip: 2, NoiseMultiplier: 1, NoiseSeed: 7}},
		{name: "dp-sgd into ps-clip-sgd", saved: dp, new: constant},
		{name: "clip-sgd into another γ", saved: clip, new: estimator.Spec{Estimator: "clip-sgd", Clip: 3}},
		{name: "clip-sgd into sgd", saved: clip, new: estimator.Spec{Estimator: "sgd"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "ckpt")
			saver := methodTrainer(t, tc.saved)
			run(t, saver, steps(2))
			if err := checkpoint.SaveTrainer(path, checkpoint.Meta{}, saver); err != nil {
				t.Fatal(err)
			}
			l, err := checkpoint.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			var into *train.Trainer
			if tc.into != nil {
				into = methodTrainerOf(t, tc.into)
			} else {
				into = methodTrainer(t, tc.new)
			}
			before := weightBits(into)
			var me *estimator.MismatchError
			if err := l.RestoreTrainer(into); !errors.As(err, &me) {
				t.Fatalf("restored: %v, want an *estimator.MismatchError", err)
			}
			if !slices.Equal(weightBits(into), before) {
				t.Error("a refused restore changed the weights")
			}
			if err := l.RestoreTrainer(methodTrainer(t, tc.saved)); err != nil {
				t.Errorf("into the method that saved it: %v", err)
			}
		})
	}
}

// A state saved without its method (by an earlier psclip) is still
// refused by a stateless estimator when it holds an adaptive one's state.
func TestRestoreAdaptiveStateIntoStateless(t *testing.T) {
	saver := methodTrainer(t, estimator.Spec{Estimator: "ps-clip-quantile", Clip: 1})
	run(t, saver, steps(1))
	st, err := saver.State()
	if err != nil {
		t.Fatal(err)
	}
	st.Method = ""
	var me *estimator.MismatchError
	if err := methodTrainer(t, estimator.Spec{Estimator: "ps-clip-sgd", Clip: 1}).SetState(st); !errors.As(err, &me) {
		t.Errorf("an adaptive state into ps-clip-sgd: %v, want an *estimator.MismatchError", err)
	}
}
