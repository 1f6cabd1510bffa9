package train_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/optim"
	"github.com/psclip/psclip/tensor"
	"github.com/psclip/psclip/train"
)

// Regression: a Trainer with FloatLoss nn.MSE and per-sample clipping
// makes the step computed here in float64 from each sample's gradient of
// ℓ_i = (1/P)|W x_i + b − t_i|² (g_W = (2/P) r_i x_iᵀ, g_b = (2/P) r_i with
// r_i = W x_i + b − t_i), clipped to γ, averaged and taken with SGD; two
// micro-batches from Split give the same step; EvaluateFloat reports the
// mean loss.
func TestFloatTargets(t *testing.T) {
	const n, in, out, gamma, lr = 6, 3, 2, 2.5, 0.1
	rng := rand.New(rand.NewPCG(8, 8))
	x := tensor.New(n, in)
	targets := make([]float32, n*out)
	for i := range x.Data {
		x.Data[i] = float32(rng.NormFloat64())
	}
	for i := range targets {
		targets[i] = float32(2 * rng.NormFloat64())
	}
	newLin := func() *nn.Linear {
		l := nn.NewLinear("fc", in, out, true)
		r := rand.New(rand.NewPCG(1, 1))
		for _, p := range l.Params() {
			for i := range p.Value.Data {
				p.Value.Data[i] = float32(r.NormFloat64())
			}
		}
		return l
	}
	// The float64 reference step.
	lin := newLin()
	w, b := lin.Weight.Value.Data, lin.Bias.Value.Data
	gw, gb := make([]float64, len(w)), make([]float64, len(b))
	for i := range n {
		xi := x.Data[i*in : (i+1)*in]
		rs := make([]float64, out)
		var sq float64
		for o := range out {
			v := float64(b[o])
			for j := range in {
				v += float64(w[o*in+j]) * float64(xi[j])
			}
			rs[o] = 2 * (v - float64(targets[i*out+o])) / out
			sq += rs[o] * rs[o]
			for j := range in {
				sq += rs[o] * float64(xi[j]) * rs[o] * float64(xi[j])
			}
		}
		c := math.Min(1, gamma/math.Sqrt(sq)) / n
		for o := range out {
			gb[o] += c * rs[o]
			for j := range in {
				gw[o*in+j] += c * rs[o] * float64(xi[j])
			}
		}
	}
	want := make([]float64, 0, len(w)+len(b))
	for k, v := range w {
		want = append(want, float64(v)-lr*gw[k])
	}
	for k, v := range b {
		want = append(want, float64(v)-lr*gb[k])
	}
	batch := train.Batch{X: x, T: targets}
	halves, err := train.Split(batch, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, mbs := range [][]train.Batch{{batch}, halves} {
		l := newLin()
		opt, _ := optim.NewSGD(l.Params(), optim.SGDConfig{LR: lr})
		th, _ := estimator.Constant(gamma)
		tr, err := train.New(train.Config{Model: l, FloatLoss: nn.MSE, Estimator: estimator.NewPSClip(th), Optimizer: opt})
		if err != nil {
			t.Fatal(err)
		}
		st, err := tr.Step(mbs...)
		if err != nil {
			t.Fatal(err)
		}
		if st.Clipped == 0 || st.Clipped == n {
			t.Errorf("%d micro-batches: %d of %d samples clipped: γ tests nothing", len(mbs), st.Clipped, n)
		}
		got := append(append([]float32(nil), l.Weight.Value.Data...), l.Bias.Value.Data...)
		for k, g := range got {
			if math.Abs(float64(g)-want[k]) > 1e-5*(1+math.Abs(want[k])) {
				t.Errorf("%d micro-batches: parameter %d = %.7g, float64 reference %.7g", len(mbs), k, g, want[k])
			}
		}
	}
	ev, err := train.EvaluateFloat(lin, nn.MSE, batch)
	if err != nil {
		t.Fatal(err)
	}
	losses, _, _ := nn.MSE(lin.Forward(&nn.Context{}, x), targets)
	var mean float64
	for _, l := range losses {
		mean += float64(l) / n
	}
	if math.Abs(ev.Loss-mean) > 1e-6*mean || ev.Samples != n || ev.Targets != n*out || !math.IsNaN(ev.Accuracy) {
		t.Errorf("EvaluateFloat = %+v, want loss %v over %d samples and %d targets, accuracy NaN", ev, mean, n, n*out)
	}
}

// Targets that do not fit the loss are refused before anything runs, and
// New wants exactly one loss.
func TestFloatTargetsRefused(t *testing.T) {
	lin := nn.NewLinear("fc", 3, 2, true)
	opt, _ := optim.NewSGD(lin.Params(), optim.SGDConfig{LR: 0.1})
	tr, err := train.New(train.Config{Model: lin, FloatLoss: nn.MSE, Estimator: estimator.SGD{}, Optimizer: opt})
	if err != nil {
		t.Fatal(err)
	}
	x := tensor.New(2, 3)
	for _, tc := range []struct {
		name string
		b    train.Batch
	}{
		{"class targets", train.Batch{X: x, Y: []int32{0, 1}}},
		{"too few float targets", train.Batch{X: x, T: make([]float32, 3)}},
		{"no targets", train.Batch{X: x}},
		{"NaN target", train.Batch{X: x, T: []float32{0, 0, float32(math.NaN()), 0}}},
	} {
		var be *train.BatchError
		if _, err := tr.Step(tc.b); !errors.As(err, &be) {
			t.Errorf("%s: %v, want a *train.BatchError", tc.name, err)
		}
	}
	cls, _ := train.New(train.Config{Model: lin, Loss: nn.CrossEntropy, Estimator: estimator.SGD{}, Optimizer: opt})
	var be *train.BatchError
	if _, err := cls.Step(train.Batch{X: x, Y: []int32{0, 1}, T: make([]float32, 4)}); !errors.As(err, &be) {
		t.Errorf("float targets for a class Loss: %v, want a *train.BatchError", err)
	}
	for _, cfg := range []train.Config{
		{Model: lin, Estimator: estimator.SGD{}, Optimizer: opt},
		{Model: lin, Loss: nn.CrossEntropy, FloatLoss: nn.MSE, Estimator: estimator.SGD{}, Optimizer: opt},
	} {
		if _, err := train.New(cfg); err == nil {
			t.Error("New accepted a config without exactly one loss")
		}
	}
}
