package train

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/tensor"
)

// nopOpt is an optimizer that does nothing.
type nopOpt struct{ params []*nn.Param }

func (nopOpt) Step()                 {}
func (o nopOpt) Params() []*nn.Param { return o.params }

// BenchmarkMicroBatchPasses times what MB-Clip adds per micro-batch (the
// gradient norm and the scaled add into the running sum, clearing the
// gradients) on passesTrainer's weights, beside a copy of the gradients
// into the running sum: the passes move five times the gradients' bytes
// (read; read both, write both), the copy two, so passes ≈ 2.5 copies is
// memory speed.
func BenchmarkMicroBatchPasses(b *testing.B) {
	t := passesTrainer(b)
	fillGrads(t, rand.New(rand.NewPCG(1, 1)))
	var n int
	for _, p := range t.params {
		n += p.Grad.Len()
	}
	for _, bc := range []struct {
		name string
		f    func()
	}{
		{"passes", func() { t.gradNorm(); t.accumulate(0.5) }},
		{"copy", func() {
			t.each(false, func(_ int, sp span) {
				copy(t.acc[sp.param][sp.lo:sp.hi], t.params[sp.param].Grad.Data[sp.lo:sp.hi])
			})
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(4 * n))
			for b.Loop() {
				bc.f()
			}
		})
	}
}

// passesTrainer returns an MB-Clip Trainer of 917,504 weights shaped like
// the small GPT's four blocks (attention 128→384 and 384→128, MLP 128→512
// and 512→128): 28 spans.
func passesTrainer(tb testing.TB) *Trainer {
	var model nn.Sequential
	for range 4 {
		for _, d := range [][2]int{{128, 384}, {384, 128}, {128, 512}, {512, 128}} {
			model = append(model, nn.NewLinear("", d[0], d[1], false))
		}
	}
	e, err := estimator.Spec{Estimator: "clip-sgd", Clip: 1}.New()
	if err != nil {
		tb.Fatal(err)
	}
	t, err := New(Config{Model: model, Loss: func(*tensor.Tensor, []int32) ([]float32, *tensor.Tensor, error) { return nil, nil, nil },
		Estimator: e, Optimizer: nopOpt{model.Params()}, Scope: MicroBatch})
	if err != nil {
		tb.Fatal(err)
	}
	return t
}

func fillGrads(t *Trainer, rng *rand.Rand) {
	for _, p := range t.params {
		for i := range p.Grad.Data {
			p.Grad.Data[i] = float32(rng.NormFloat64())
		}
	}
}

// TestPassesIgnoreGOMAXPROCS checks that the norm and the running sum of
// MB-Clip come out bit-identical whatever the number of goroutines sharing
// the spans.
func TestPassesIgnoreGOMAXPROCS(t *testing.T) {
	var norms []float64
	var sums [][]float32
	for _, procs := range []int{1, 2, 3, 5} {
		func() {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			tr := passesTrainer(t)
			rng := rand.New(rand.NewPCG(2, 2))
			var norm float64
			for k := range 3 {
				fillGrads(tr, rng)
				norm += tr.gradNorm()
				tr.accumulate(float32(k) + 0.5)
			}
			tr.takeAccumulated(0.25)
			var sum []float32
			for _, p := range tr.params {
				sum = append(sum, p.Grad.Data...)
			}
			norms, sums = append(norms, norm), append(sums, sum)
		}()
	}
	for i := 1; i < len(norms); i++ {
		if norms[i] != norms[0] || !slices.Equal(sums[i], sums[0]) {
			t.Fatalf("run %d differs from run 0 (norms %v and %v)", i, norms[i], norms[0])
		}
	}
}
