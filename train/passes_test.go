package train

import (
	"math/rand/v2"
	"testing"

	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/tensor"
)

// nopOpt is an optimizer that does nothing.
type nopOpt struct{}

func (nopOpt) Step() {}

// BenchmarkMicroBatchPasses times what MB-Clip adds per micro-batch (the
// gradient norm and the scaled add into the running sum, clearing the
// gradients) on 917,504 weights shaped like the small GPT's four blocks
// (attention 128→384 and 384→128, MLP 128→512 and 512→128).
func BenchmarkMicroBatchPasses(b *testing.B) {
	var model nn.Sequential
	for range 4 {
		for _, d := range [][2]int{{128, 384}, {384, 128}, {128, 512}, {512, 128}} {
			model = append(model, nn.NewLinear("", d[0], d[1], false))
		}
	}
	e, err := estimator.New("clip-sgd", estimator.Params{Gamma: 1})
	if err != nil {
		b.Fatal(err)
	}
	t, err := New(Config{Model: model, Loss: func(*tensor.Tensor, []int32) ([]float32, *tensor.Tensor, error) { return nil, nil, nil },
		Estimator: e, Optimizer: nopOpt{}, Scope: MicroBatch})
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	var n int
	for _, p := range t.params {
		for i := range p.Grad.Data {
			p.Grad.Data[i] = float32(rng.NormFloat64())
		}
		n += p.Grad.Len()
	}
	b.SetBytes(int64(4 * n))
	for b.Loop() {
		t.gradNorm()
		t.accumulate(0.5)
	}
}
