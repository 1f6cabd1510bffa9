package checkpoint_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/psclip/psclip/checkpoint"
	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/optim"
	"github.com/psclip/psclip/tensor"
	"github.com/psclip/psclip/train"
)

// resumable builds a trainer of a fixed dropout MLP with SGD and momentum,
// the adaptive ps-clip-auto estimator (its threshold estimated from a
// window of norms once it holds 256) and, unless rng is given, the
// Trainer's own dropout generator.
func resumable(t *testing.T, rng *rand.Rand) *train.Trainer {
	t.Helper()
	model := nn.Sequential{nn.NewLinear("0", 4, 8, true), &nn.ReLU{}, nn.NewDropout(0.3), nn.NewLinear("3", 8, 3, true)}
	init := rand.New(rand.NewPCG(5, 5))
	for _, p := range model.Params() {
		for i := range p.Value.Data {
			p.Value.Data[i] = float32(0.5 * init.NormFloat64())
		}
	}
	opt, err := optim.NewSGD(model.Params(), optim.SGDConfig{LR: 0.05, Momentum: 0.9})
	if err != nil {
		t.Fatal(err)
	}
	est, err := estimator.Spec{Estimator: "ps-clip-auto", Window: 256}.New()
	if err != nil {
		t.Fatal(err)
	}
	tr, err := train.New(train.Config{Model: model, Loss: nn.CrossEntropy, Estimator: est, Optimizer: opt, Rand: rng})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// steps returns n steps of 2 micro-batches of 16 samples.
func steps(n int) [][]train.Batch {
	rng := rand.New(rand.NewPCG(9, 9))
	out := make([][]train.Batch, n)
	for i := range out {
		for range 2 {
			x := tensor.New(16, 4)
			for j := range x.Data {
				x.Data[j] = float32(2 * rng.NormFloat64())
			}
			y := make([]int32, 16)
			for j := range y {
				y[j] = int32(rng.IntN(3))
			}
			out[i] = append(out[i], train.Batch{X: x, Y: y})
		}
	}
	return out
}

func run(t *testing.T, tr *train.Trainer, steps [][]train.Batch) {
	t.Helper()
	for i, mbs := range steps {
		_, err := tr.Step(mbs...)
		if errors.Is(err, train.ErrPrivateStep) { // dp-sgd: the micro-batches are one sample
			_, err = tr.PrivateStep(join(mbs), mbs[0].X.Dim(0))
		}
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
}

// join is the batch of the micro-batches mbs of [m, 4] inputs, in order.
func join(mbs []train.Batch) train.Batch {
	var b train.Batch
	var x []float32
	for _, mb := range mbs {
		x = append(x, mb.X.Data...)
		b.Y = append(b.Y, mb.Y...)
	}
	b.X = tensor.From(x, len(x)/4, 4)
	return b
}

func weightBits(tr *train.Trainer) []uint32 {
	var w []uint32
	for _, p := range tr.Params() {
		for _, v := range p.Value.Data {
			w = append(w, math.Float32bits(v))
		}
	}
	return w
}

// Train k steps, save with SaveTrainer, load into a fresh trainer with
// RestoreTrainer and continue: the weights are the uninterrupted run's bit
// for bit, with an adaptive estimator and dropout from the Trainer's own
// generator (Config.Rand nil). Restoring only the weights and the optimizer
// (Save and Restore, all main offered without base64-ing the estimator's
// state into Meta.Extra) gives other weights: the estimator's window and
// the dropout stream restart.
func TestResumeTrainerExactly(t *testing.T) {
	const k, total = 12, 24 // the window fills (256 norms) after 8 steps
	all := steps(total)
	whole := resumable(t, nil)
	run(t, whole, all)

	path := filepath.Join(t.TempDir(), "ckpt.safetensors")
	first := resumable(t, nil)
	run(t, first, all[:k])
	if err := checkpoint.SaveTrainer(path, checkpoint.Meta{Step: k}, first); err != nil {
		t.Fatal(err)
	}
	l, err := checkpoint.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	resumed := resumable(t, nil)
	if err := l.RestoreTrainer(resumed); err != nil {
		t.Fatal(err)
	}
	run(t, resumed, all[k:])
	if !slices.Equal(weightBits(resumed), weightBits(whole)) {
		t.Error("the resumed run's weights differ from the uninterrupted run's")
	}

	// What Restore alone resumes is another run.
	partial := resumable(t, nil)
	if err := l.Restore(partial.Params(), partial.Optimizer().(optim.Optimizer)); err != nil {
		t.Fatal(err)
	}
	run(t, partial, all[k:])
	if slices.Equal(weightBits(partial), weightBits(whole)) {
		t.Error("restoring weights and optimizer alone resumed exactly: the test shows nothing")
	}
}

// RestoreTrainer refuses what cannot resume exactly and changes nothing: a
// checkpoint written by Save (no trainer state), and a trainer whose
// Config.Rand is given where the saving one used its own generator.
func TestRestoreTrainerRefuses(t *testing.T) {
	dir := t.TempDir()
	all := steps(3)
	saved := resumable(t, nil)
	run(t, saved, all)
	withState, plain := filepath.Join(dir, "a.safetensors"), filepath.Join(dir, "b.safetensors")
	if err := checkpoint.SaveTrainer(withState, checkpoint.Meta{Step: 3}, saved); err != nil {
		t.Fatal(err)
	}
	if err := checkpoint.Save(plain, checkpoint.Meta{Step: 3}, saved.Params(), saved.Optimizer().(optim.Optimizer)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		path string
		tr   *train.Trainer
	}{
		{"a checkpoint without trainer state", plain, resumable(t, nil)},
		{"Config.Rand given, the checkpoint's own generator", withState, resumable(t, rand.New(rand.NewPCG(1, 1)))},
	} {
		l, err := checkpoint.Load(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		before := weightBits(tc.tr)
		stBefore, _ := tc.tr.State()
		if err := l.RestoreTrainer(tc.tr); err == nil {
			t.Errorf("%s: restored", tc.name)
		}
		stAfter, _ := tc.tr.State()
		if !slices.Equal(weightBits(tc.tr), before) || !slices.Equal(stAfter.Estimator, stBefore.Estimator) || !slices.Equal(stAfter.Rand, stBefore.Rand) {
			t.Errorf("%s: the refused restore changed the trainer", tc.name)
		}
	}
}
