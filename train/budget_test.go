package train_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/models"
	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/optim"
	"github.com/psclip/psclip/tensor"
	"github.com/psclip/psclip/train"
)

// TestPerSampleMemory trains a small GPT whose Linear layers see T = 32
// positions under per-sample memory budgets: the bytes the step
// materialised stay within each budget, and the update is the layer
// rule's up to the order of float32 additions.
func TestPerSampleMemory(t *testing.T) {
	cfg := models.GPTConfig{NLayer: 1, NHead: 2, NEmbd: 8, BlockSize: 32, VocabSize: 7}
	const b = 3
	rng := rand.New(rand.NewPCG(1, 2))
	x := tensor.New(b, cfg.BlockSize)
	y := make([]int32, b*cfg.BlockSize)
	for i := range y {
		x.Data[i], y[i] = float32(rng.IntN(cfg.VocabSize)), int32(rng.IntN(cfg.VocabSize))
	}
	step := func(budget int64) ([]float32, int64) {
		m, err := models.NewGPT(cfg, 1)
		if err != nil {
			t.Fatal(err)
		}
		opt, err := optim.NewSGD(m.Params(), optim.SGDConfig{LR: 0.1})
		if err != nil {
			t.Fatal(err)
		}
		ps, err := estimator.Spec{Estimator: "ps-clip-sgd", Clip: 0.5}.New()
		if err != nil {
			t.Fatal(err)
		}
		tr, err := train.New(train.Config{Model: m, Loss: nn.CrossEntropy, Estimator: ps, Optimizer: opt, PerSampleMemory: budget})
		if err != nil {
			t.Fatal(err)
		}
		st, err := tr.Step(train.Batch{X: x, Y: y})
		if err != nil {
			t.Fatal(err)
		}
		var w []float32
		for _, p := range m.Params() {
			w = append(w, p.Value.Data...)
		}
		return w, st.PerSampleBytes
	}
	want, _ := step(0)
	_, all := step(math.MaxInt64)
	if all == 0 {
		t.Fatal("an unbounded budget materialised nothing: the test's shapes do not exercise the plan")
	}
	for _, budget := range []int64{nn.NoMaterialise, all / 3, all / 2, all, math.MaxInt64} {
		w, spent := step(budget)
		if spent < 0 || (budget > 0 && spent > budget) || (budget < 0 && spent != 0) {
			t.Errorf("budget %d: %d bytes materialised", budget, spent)
		}
		for i := range w {
			if d := math.Abs(float64(w[i] - want[i])); d > 1e-6*(1+math.Abs(float64(want[i]))) {
				t.Errorf("budget %d: weight %d is %v, the layer rule's %v", budget, i, w[i], want[i])
				break
			}
		}
	}
}
