package train_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/models"
	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/optim"
	"github.com/psclip/psclip/setting"
	"github.com/psclip/psclip/tensor"
	"github.com/psclip/psclip/train"
)

// headGrads computes, in float64 from the definitions, every sample's
// gradient of its cross-entropy with respect to the last layer of mlp
// (weight [3,7] then bias [3]): with a the hidden activations and
// d = softmax(logits) − onehot(y), it is (d·aᵀ, d).
func headGrads(m []nn.Layer, b train.Batch) [][]float64 {
	l1, l2 := m[0].(*nn.Linear), m[2].(*nn.Linear)
	n := b.X.Dim(0)
	var gs [][]float64
	for i := range n {
		x := b.X.Data[i*5 : (i+1)*5]
		a := make([]float64, 7)
		for h := range a {
			s := float64(l1.Bias.Value.Data[h])
			for k, v := range x {
				s += float64(l1.Weight.Value.Data[h*5+k]) * float64(v)
			}
			a[h] = math.Max(s, 0)
		}
		logits := make([]float64, 3)
		var z float64
		for c := range logits {
			s := float64(l2.Bias.Value.Data[c])
			for h, v := range a {
				s += float64(l2.Weight.Value.Data[c*7+h]) * v
			}
			logits[c] = s
		}
		top := slices.Max(logits)
		for c := range logits {
			logits[c] = math.Exp(logits[c] - top)
			z += logits[c]
		}
		g := make([]float64, 3*7+3)
		for c := range 3 {
			d := logits[c] / z
			if c == int(b.Y[i]) {
				d--
			}
			for h, v := range a {
				g[c*7+h] = d * v
			}
			g[21+c] = d
		}
		gs = append(gs, g)
	}
	return gs
}

// With the first layer frozen, every clipping norm is over the parameters
// trained: each sample's (per-sample estimators), the step's gradient's
// (Clip-SGD, Global) and each micro-batch's share's (MicroBatch), against
// the last layer's gradients computed from the definitions. The frozen
// layer is neither changed nor given a gradient. (On main the norms
// counted the first layer too: 0.891 against 0.705 in the case.)
func TestFrozenNorms(t *testing.T) {
	model := mlp(3)
	nn.Freeze(model[0])
	rng := rand.New(rand.NewPCG(4, 5))
	b1, b2 := batch(rng, 6), batch(rng, 4)
	g1, g2 := headGrads(model, b1), headGrads(model, b2)
	frozen := slices.Clone(model[0].(*nn.Linear).Weight.Value.Data)
	model[0].(*nn.Linear).Weight.Grad.Data[0] = 42 // untouched by every step

	ps, err := estimator.Spec{Estimator: "ps-clip-sgd", Clip: 1e6}.New()
	if err != nil {
		t.Fatal(err)
	}
	opt := &captureOpt{params: nn.Trainable(model.Params())}
	tr, err := train.New(train.Config{Model: model, Loss: nn.CrossEntropy, Estimator: ps, Optimizer: opt, KeepNorms: true})
	if err != nil {
		t.Fatal(err)
	}
	st, err := tr.Step(b1, b2)
	if err != nil {
		t.Fatal(err)
	}
	for i, g := range append(g1, g2...) {
		if want := norm(g); math.Abs(st.Norms[i]-want) > 1e-4*want {
			t.Errorf("sample %d: norm %.7g, want %.7g over the trained layer", i, st.Norms[i], want)
		}
	}

	clip, _ := estimator.NewClipSGD(1e6)
	for _, scope := range []train.Scope{train.Global, train.MicroBatch} {
		tr, err := train.New(train.Config{Model: model, Loss: nn.CrossEntropy, Estimator: clip, Optimizer: opt, Scope: scope})
		if err != nil {
			t.Fatal(err)
		}
		st, err := tr.Step(b1, b2)
		if err != nil {
			t.Fatal(err)
		}
		// share sums the samples' gradients over the step's N = 10.
		share := func(gs ...[][]float64) []float64 {
			s := make([]float64, 24)
			for _, g := range gs {
				for _, gi := range g {
					for k, v := range gi {
						s[k] += v / 10
					}
				}
			}
			return s
		}
		want := norm(share(g1, g2))
		if scope == train.MicroBatch {
			want = (norm(share(g1)) + norm(share(g2))) / 2
		}
		if math.Abs(st.GradNorm-want) > 1e-4*want {
			t.Errorf("Clip-SGD, scope %v: gradient norm %.7g, want %.7g over the trained layer", scope, st.GradNorm, want)
		}
	}
	l0 := model[0].(*nn.Linear)
	if !slices.Equal(l0.Weight.Value.Data, frozen) || l0.Weight.Grad.Data[0] != 42 {
		t.Error("the frozen layer changed, or its gradient was written")
	}
}

// New trains exactly the parameters that are not frozen: an optimizer
// that leaves one out, or updates a frozen one, is refused with a
// *setting.Error for Optimizer; a model with every parameter frozen too.
func TestNewFrozen(t *testing.T) {
	model := mlp(10)
	est := estimator.SGD{}
	head, _ := optim.NewSGD(model[2].Params(), optim.SGDConfig{LR: 0.1})
	all, _ := optim.NewSGD(model.Params(), optim.SGDConfig{LR: 0.1})
	cfg := train.Config{Model: model, Loss: nn.CrossEntropy, Estimator: est, Optimizer: head}
	var se *setting.Error
	if _, err := train.New(cfg); !errors.As(err, &se) || se.Field != "Optimizer" {
		t.Errorf("an optimizer over the head of a model not frozen: %v, want a *setting.Error for Optimizer", err)
	}
	nn.Freeze(model[0])
	tr, err := train.New(cfg)
	if err != nil {
		t.Fatalf("an optimizer over the head of a model with the rest frozen: %v", err)
	}
	if got := tr.Params(); len(got) != 4 {
		t.Errorf("Params lists %d parameters, want the model's 4, frozen ones included (a checkpoint saves them)", len(got))
	}
	cfg.Optimizer = all
	if _, err := train.New(cfg); !errors.As(err, &se) || se.Field != "Optimizer" {
		t.Errorf("an optimizer over a frozen parameter: %v, want a *setting.Error for Optimizer", err)
	}
	cfg.Optimizer = head
	cfg.Groups = [][]*nn.Param{model[0].Params()}
	if _, err := train.New(cfg); !errors.As(err, &se) || se.Field != "Groups[0]" {
		t.Errorf("a group of frozen parameters: %v, want a *setting.Error for Groups[0]", err)
	}
	cfg.Groups = nil
	nn.Freeze(model)
	if _, err := train.New(cfg); !errors.As(err, &se) || se.Field != "Model" {
		t.Errorf("a model with every parameter frozen: %v, want a *setting.Error for Model", err)
	}
}

// BenchmarkFrozen times PS-Clip-SGD steps of a model trained whole against
// the same model with all but its last layers frozen, interleaved so that
// both see the same load: AlexNet-CIFAR at width/4 (batch 32) with only
// the classifier trained, and the 4-block GPT of width 128 (8 sequences
// of 64) with only its last block and ln_f trained. It reports the median
// step of each and their ratio.
func BenchmarkFrozen(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	alex := func() (nn.Layer, train.Batch, func()) {
		m, err := models.NewAlexNet(models.AlexNetConfig{Classes: 10, WidthDiv: 4}, 1)
		if err != nil {
			b.Fatal(err)
		}
		x := tensor.New(32, 3, 32, 32)
		for i := range x.Data {
			x.Data[i] = float32(rng.NormFloat64())
		}
		y := make([]int32, 32)
		for i := range y {
			y[i] = int32(rng.IntN(10))
		}
		return m, train.Batch{X: x, Y: y}, func() { nn.Freeze(m[:len(m)-1]) }
	}
	gpt := func() (nn.Layer, train.Batch, func()) {
		m, err := models.NewGPT(models.GPTConfig{NLayer: 4, NHead: 4, NEmbd: 128, BlockSize: 64, VocabSize: 96}, 1)
		if err != nil {
			b.Fatal(err)
		}
		x := tensor.New(8, 64)
		y := make([]int32, 8*64)
		for i := range x.Data {
			x.Data[i] = float32(rng.IntN(96))
			y[i] = int32(rng.IntN(96))
		}
		return m, train.Batch{X: x, Y: y}, func() {
			for _, p := range m.Params() {
				p.Frozen = !strings.HasPrefix(p.Name, "transformer.h.3.") && !strings.HasPrefix(p.Name, "transformer.ln_f.")
			}
		}
	}
	for _, tc := range []struct {
		name  string
		build func() (nn.Layer, train.Batch, func())
	}{{"alexnet", alex}, {"gpt", gpt}} {
		b.Run(tc.name, func(b *testing.B) {
			var steps [2]func()
			for k := range steps {
				m, batch, freeze := tc.build()
				if k == 1 {
					freeze()
				}
				est, _ := estimator.Spec{Estimator: "ps-clip-sgd", Clip: 1}.New()
				opt, err := optim.NewSGD(nn.Trainable(m.Params()), optim.SGDConfig{LR: 1e-4})
				if err != nil {
					b.Fatal(err)
				}
				tr, err := train.New(train.Config{Model: m, Loss: nn.CrossEntropy, Estimator: est, Optimizer: opt})
				if err != nil {
					b.Fatal(err)
				}
				steps[k] = func() {
					if _, err := tr.Step(batch); err != nil {
						b.Fatal(err)
					}
				}
			}
			var times [2][]float64
			for b.Loop() {
				for k, step := range steps {
					start := time.Now()
					step()
					times[k] = append(times[k], time.Since(start).Seconds())
				}
			}
			all, frozen := median(times[0]), median(times[1])
			b.ReportMetric(all*1e3, "trained-ms")
			b.ReportMetric(frozen*1e3, "frozen-ms")
			b.ReportMetric(frozen/all, "ratio")
		})
	}
}

func median(x []float64) float64 {
	s := slices.Sorted(slices.Values(x))
	return s[len(s)/2]
}
