package gpt

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/models"
	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/tensor"
	"github.com/psclip/psclip/train"
)

// captureOpt records the gradients handed to the optimizer and leaves the
// weights alone, so that every step sees the same model.
type captureOpt struct {
	params []*nn.Param
	grad   []float64 // all gradients, concatenated in parameter order
}

func (o *captureOpt) Params() []*nn.Param { return o.params }

func (o *captureOpt) Step() {
	o.grad = o.grad[:0]
	for _, p := range o.params {
		for _, g := range p.Grad.Data {
			o.grad = append(o.grad, float64(g))
		}
	}
}

// tinyGPT is a model small enough for brute force, with vocabulary 11.
func tinyGPT(t *testing.T) *models.GPT {
	t.Helper()
	m, err := models.NewGPT(models.GPTConfig{NLayer: 1, NHead: 2, NEmbd: 16, BlockSize: 8, VocabSize: 11}, 5)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// randomBatch draws m sequences of length 8 and their targets.
func randomBatch(rng *rand.Rand, m int) train.Batch {
	b := train.Batch{X: tensor.New(m, 8), Y: make([]int32, m*8)}
	for i := range b.X.Data {
		b.X.Data[i] = float32(rng.IntN(11))
		b.Y[i] = int32(rng.IntN(11))
	}
	return b
}

// stepGrad returns the gradient a Trainer with estimator e and scope hands to
// the optimizer after one step over batches.
func stepGrad(t *testing.T, m *models.GPT, e estimator.Estimator, scope train.Scope, batches ...train.Batch) []float64 {
	t.Helper()
	opt := &captureOpt{params: m.Params()}
	tr, err := train.New(train.Config{Model: m, Loss: nn.CrossEntropy, Estimator: e, Optimizer: opt, Scope: scope})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Step(batches...); err != nil {
		t.Fatal(err)
	}
	return slices.Clone(opt.grad)
}

func norm(g []float64) float64 {
	var s float64
	for _, x := range g {
		s += x * x
	}
	return math.Sqrt(s)
}

// addScaled sets dst += a·g.
func addScaled(dst []float64, a float64, g []float64) {
	for i, x := range g {
		dst[i] += a * x
	}
}

// diff returns a − b.
func diff(a, b []float64) []float64 {
	d := make([]float64, len(a))
	for i := range a {
		d[i] = a[i] - b[i]
	}
	return d
}

func clipFactor(n, gamma float64) float64 { return min(1, gamma/n) }

func assertClose(t *testing.T, what string, got, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d gradient entries, want %d", what, len(got), len(want))
	}
	if e := norm(diff(got, want)) / norm(want); !(e < 2e-6) {
		t.Errorf("%s: relative error %.3g between the step's gradient and the independent computation", what, e)
	}
}

// TestClipModesOnGPT checks each clip mode's accumulated gradient against
// its definition, with the reference gradients computed independently: every
// micro-batch (or sequence) alone through an unclipped one-batch step.
// Thresholds are set between the gradient norms so that some gradients are
// clipped and some are not.
func TestClipModesOnGPT(t *testing.T) {
	const k, m = 4, 3
	rng := rand.New(rand.NewPCG(1, 2))
	model := tinyGPT(t)
	batches := make([]train.Batch, k)
	for j := range batches {
		batches[j] = randomBatch(rng, m)
	}
	// g[j]: micro-batch j's mean gradient, alone.
	g := make([][]float64, k)
	norms := make([]float64, k)
	for j, b := range batches {
		g[j] = stepGrad(t, model, estimator.SGD{}, train.Global, b)
		norms[j] = norm(g[j])
	}
	n := len(g[0])

	// micro-batch mode is tested through Config, in both conventions, each
	// against its own definition: nanoGPT's loop backpropagates loss/K, so
	// its micro-batch gradients are g_j/K; it clips each of those to γ and
	// sums them. The mean convention clips each g_j to γ and averages.
	for _, tc := range []struct {
		conv ClipConvention
		// share is the gradient of micro-batch j that γ bounds.
		share func(j int) []float64
	}{
		{ConventionNanoGPT, func(j int) []float64 { d := make([]float64, n); addScaled(d, 1.0/k, g[j]); return d }},
		{ConventionMean, func(j int) []float64 { return g[j] }},
	} {
		t.Run("micro-batch/"+string(tc.conv), func(t *testing.T) {
			shares := make([][]float64, k)
			sn := make([]float64, k)
			for j := range shares {
				shares[j] = tc.share(j)
				sn[j] = norm(shares[j])
			}
			gamma := median(sn)
			want := make([]float64, n)
			clipped := 0
			for j, h := range shares {
				f := clipFactor(sn[j], gamma)
				if f < 1 {
					clipped++
				}
				addScaled(want, f, h)
			}
			if tc.conv == ConventionMean {
				for i := range want {
					want[i] /= k
				}
			}
			if clipped == 0 || clipped == k {
				t.Fatalf("γ = %v clips %d of %d micro-batches; the test needs some of each", gamma, clipped, k)
			}
			c := Config{ClipMode: ClipMicroBatch, Spec: estimator.Spec{Clip: gamma}, ClipConvention: tc.conv, Accum: k}
			e, scope, err := c.estimator()
			if err != nil {
				t.Fatal(err)
			}
			got := stepGrad(t, model, e, scope, batches...)
			assertClose(t, "micro-batch", got, want)

			// The other convention at the same γ clips by another
			// factor K and so gives another gradient.
			c.ClipConvention = map[ClipConvention]ClipConvention{ConventionNanoGPT: ConventionMean, ConventionMean: ConventionNanoGPT}[tc.conv]
			e, scope, _ = c.estimator()
			if d := diff(stepGrad(t, model, e, scope, batches...), got); norm(d) < 1e-3*norm(got) {
				t.Errorf("conventions %s and %s gave the same gradient", tc.conv, c.ClipConvention)
			}
		})
	}

	t.Run("global", func(t *testing.T) {
		mean := make([]float64, n)
		for j := range g {
			addScaled(mean, 1.0/k, g[j])
		}
		gamma := norm(mean) / 2
		want := make([]float64, n)
		addScaled(want, clipFactor(norm(mean), gamma), mean)
		// Clipping the sum of nanoGPT's g_j/K is clipping ḡ: the
		// conventions agree.
		for _, conv := range ClipConventions {
			c := Config{ClipMode: ClipGlobal, Spec: estimator.Spec{Clip: gamma}, ClipConvention: conv, Accum: k}
			e, scope, err := c.estimator()
			if err != nil {
				t.Fatal(err)
			}
			assertClose(t, "global/"+string(conv), stepGrad(t, model, e, scope, batches...), want)
		}
		// It is not MB-Clip: clipping each micro-batch to the same γ
		// gives another direction.
		mb, mbScope, _ := ClipMicroBatch.Estimator(gamma)
		if d := diff(stepGrad(t, model, mb, mbScope, batches...), want); norm(d) < 1e-3*norm(want) {
			t.Error("global and micro-batch clipping gave the same gradient")
		}
	})

	t.Run("per-sample", func(t *testing.T) {
		var gs [][]float64
		var sn []float64
		for _, b := range batches {
			for i := range m {
				one := train.Batch{X: tensor.From(slices.Clone(b.X.Data[i*8:(i+1)*8]), 1, 8), Y: b.Y[i*8 : (i+1)*8]}
				gi := stepGrad(t, model, estimator.SGD{}, train.Global, one)
				gs = append(gs, gi)
				sn = append(sn, norm(gi))
			}
		}
		gamma := median(sn)
		e, scope, err := ClipPerSample.Estimator(gamma)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]float64, n)
		for i, gi := range gs {
			addScaled(want, clipFactor(sn[i], gamma)/float64(len(gs)), gi)
		}
		assertClose(t, "per-sample", stepGrad(t, model, e, scope, batches...), want)
	})

	t.Run("none", func(t *testing.T) {
		e, scope, err := ClipNone.Estimator(0)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]float64, n)
		for j := range g {
			addScaled(want, 1.0/k, g[j])
		}
		assertClose(t, "none", stepGrad(t, model, e, scope, batches...), want)
	})
}

func median(x []float64) float64 {
	s := slices.Sorted(slices.Values(x))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
