package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/psclip/psclip/tensor"
)

// MSE by hand: out [[1,2],[3,5]] against [[0,2],[3,3]] gives the losses
// ((1)² + 0)/2 = 0.5 and (0 + (2)²)/2 = 2, and dout = 2(out − t)/2.
func TestMSE(t *testing.T) {
	out := tensor.From([]float32{1, 2, 3, 5}, 2, 2)
	losses, d, err := MSE(out, []float32{0, 2, 3, 3})
	if err != nil {
		t.Fatal(err)
	}
	if losses[0] != 0.5 || losses[1] != 2 {
		t.Errorf("losses %v, want [0.5 2]", losses)
	}
	for j, want := range []float32{1, 0, 0, 2} {
		if d.Data[j] != want {
			t.Errorf("dout %v, want [1 0 0 2]", d.Data)
			break
		}
	}
}

// floatLosses are the losses of float targets, each with targets it
// accepts drawn from rng.
var floatLosses = []struct {
	name    string
	loss    floatLoss
	targets func(rng *rand.Rand, n int) []float32
}{
	{"MSE", MSE, normals},
	{"Huber(0.3)", Huber(0.3), normals}, // both branches at N(0,1) errors
	{"BCEWithLogits", BCEWithLogits, uniforms},
}

func normals(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

func uniforms(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = rng.Float32()
	}
	return v
}

// Each loss's gradient is the finite differences of its losses, sample by
// sample, for [B,P] and [B,T,P] outputs.
func TestFloatLossGrad(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for _, l := range floatLosses {
		for _, shape := range [][]int{{5, 3}, {3, 4, 2}} {
			out := randTensor(rng, shape...)
			checkLossGrad(t, l.loss, out, l.targets(rng, out.Len()))
		}
	}
}

// Huber and binary cross-entropy by hand. Huber with delta 1: errors 0.5
// and −3 give 0.125 and 1·(3 − 0.5) = 2.5, gradients 0.5 and −1.
// BCE: logit 0 against 1 gives log 2, logit 2 against 0 gives log(1 + e²),
// logit −40 against 1 gives 40 (no overflow); gradients σ(x) − t.
func TestHuberAndBCE(t *testing.T) {
	for _, tc := range []struct {
		name         string
		loss         floatLoss
		out, targets []float32
		losses, grad []float64
	}{
		{"Huber", Huber(1), []float32{0.5, -3}, []float32{0, 0}, []float64{0.125, 2.5}, []float64{0.5, -1}},
		{"BCE", BCEWithLogits, []float32{0, 2, -40}, []float32{1, 0, 1},
			[]float64{math.Ln2, math.Log1p(math.Exp(2)), 40}, []float64{-0.5, 1 / (1 + math.Exp(-2)), 1/(1+math.Exp(40)) - 1}},
	} {
		losses, d, err := tc.loss(tensor.From(tc.out, len(tc.out), 1), tc.targets)
		if err != nil {
			t.Fatal(err)
		}
		for i := range tc.losses {
			if math.Abs(float64(losses[i])-tc.losses[i]) > 1e-6*(1+tc.losses[i]) || math.Abs(float64(d.Data[i])-tc.grad[i]) > 1e-6 {
				t.Errorf("%s sample %d: loss %v, gradient %v; want %v, %v", tc.name, i, losses[i], d.Data[i], tc.losses[i], tc.grad[i])
			}
		}
	}
}

// The per-sample mode with each float loss matches the brute force (every
// sample's gradient from a batch of one): a regressor on vectors, and on
// sequences through MeanPool.
func TestFloatLossPerSample(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for _, l := range floatLosses {
		reg := Sequential{NewLinear("0", 4, 6, true), &GELU{}, NewLinear("2", 6, 2, true)}
		randomize(rng, reg, 0.5)
		checkPerSample(t, reg, randTensor(rng, 6, 4), ids(6), fixedTargets(l.loss, l.targets(rng, 12), 2), medianClip)
		seq := Sequential{NewLinear("0", 4, 6, true), &GELU{}, &MeanPool{}, NewLinear("3", 6, 2, true)}
		randomize(rng, seq, 0.5)
		checkPerSample(t, seq, randTensor(rng, 5, 3, 4), ids(5), fixedTargets(l.loss, l.targets(rng, 10), 2), medianClip)
	}
}

// The float losses refuse, with an error rather than a panic, what they
// cannot score.
func TestFloatLossBadInput(t *testing.T) {
	out := tensor.New(2, 3)
	for _, l := range floatLosses {
		for _, tc := range []struct {
			name    string
			out     *tensor.Tensor
			targets []float32
		}{
			{"nil output", nil, nil},
			{"no sample dimension", tensor.New(3), make([]float32, 3)},
			{"too few targets", out, make([]float32, 5)},
			{"NaN target", out, []float32{0, 0, float32(math.NaN()), 0, 0, 0}},
			{"infinite target", out, []float32{0, 0, 0, 0, 0, float32(math.Inf(-1))}},
		} {
			if _, _, err := l.loss(tc.out, tc.targets); err == nil {
				t.Errorf("%s, %s: no error", l.name, tc.name)
			}
		}
	}
	for _, delta := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		if _, _, err := Huber(delta)(out, make([]float32, 6)); err == nil {
			t.Errorf("Huber(%v): no error", delta)
		}
	}
	if _, _, err := BCEWithLogits(out, []float32{0, 1, 0.5, 1.5, 0, 0}); err == nil {
		t.Error("BCEWithLogits with a target of 1.5: no error")
	}
}
