package train_test

import (
	"slices"
	"testing"

	"github.com/psclip/psclip/data/dataset"
	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/train"
)

// Config.Progress travels in State: a sampler restored from a State
// continues where the saved one stood; a State without progress, or with
// one the sampler refuses, is refused by a Trainer with Progress (and a
// State with progress by one without), leaving the sampler as it was.
func TestStateProgress(t *testing.T) {
	withProgress := func(s *dataset.Shuffle) *train.Trainer {
		model := mlp(5)
		tr, err := train.New(train.Config{Model: model, Loss: nn.CrossEntropy, Estimator: estimator.SGD{},
			Optimizer: &captureOpt{params: model.Params()}, Progress: s})
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	a, _ := dataset.NewShuffle(20, 3, false, 4)
	for range 9 {
		a.Next()
	}
	st, err := withProgress(a).State()
	if err != nil || st.Progress == nil {
		t.Fatalf("State: %+v, %v; want the sampler's position", st, err)
	}
	b, _ := dataset.NewShuffle(20, 3, false, 4)
	if err := withProgress(b).SetState(st); err != nil {
		t.Fatal(err)
	}
	if got, want := b.Next(), a.Next(); !slices.Equal(got, want) {
		t.Errorf("restored sampler draws %v, the saved one %v", got, want)
	}
	c, _ := dataset.NewShuffle(20, 3, false, 4)
	before, _ := c.MarshalBinary()
	for _, bad := range []train.State{{Rand: st.Rand}, {Rand: st.Rand, Progress: []byte("poisson1........")}} {
		if err := withProgress(c).SetState(bad); err == nil {
			t.Errorf("SetState(%q): no error", bad.Progress)
		}
		if now, _ := c.MarshalBinary(); !slices.Equal(now, before) {
			t.Error("a refused State moved the sampler")
		}
	}
	plain, _ := newTrainer(t, mlp(5), estimator.SGD{}, train.Global)
	if err := plain.SetState(st); err == nil {
		t.Error("a State with progress restored into a Trainer without Progress")
	}
}
