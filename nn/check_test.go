package nn

// Shared test harness for every layer's tests (package nn, internal tests).
//
//	randTensor(rng *rand.Rand, shape ...int) *tensor.Tensor
//	    a tensor of N(0,1) entries.
//	checkGrad(t *testing.T, l Layer, x *tensor.Tensor, opt gradOpt)
//	    Backward against central finite differences of the probe
//	    L = Σ r⊙Forward(x) (r fixed, random) with respect to x and to every
//	    parameter. The forward passes run in training mode with the same
//	    dropout mask every time. opt.NoInput skips the input gradient
//	    (integer inputs, NoInputGrad); opt.Tol overrides the tolerance.
//	checkPerSample(t *testing.T, model Layer, x *tensor.Tensor, y []int32, loss lossFunc, rule clipRule)
//	    The brute force for the per-sample mode: every sample's gradient from
//	    a batch of one in the plain mode, its norm, the factors rule(norms),
//	    and Σ_i c_i·g_i; against the one-pass per-sample mode (BeginPerSample,
//	    Backward, factors from SqNorms, Finish) to relative error 1e-4, and
//	    the plain full-batch gradient against Σ_i g_i. Dropout is off.
//	    x's first dimension is the batch; y (may be nil) is split evenly
//	    among the samples.
//	squareLoss(r *tensor.Tensor) lossFunc, ids(n int) []int32
//	    loss_i = ½|out_i - r[y_i]|² for layers with no natural loss, with
//	    y = ids(B) the sample ids (so a batch of one finds its own row of r).
//	medianClip(norms []float64) []float32
//	    c_i = min(1, τ/|g_i|)/B with τ the median norm: half the samples clip.

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/psclip/psclip/tensor"
)

// lossFunc is the shape of a loss: per-sample losses and the gradient of
// their sum with respect to the model output (train.Loss).
type lossFunc func(out *tensor.Tensor, y []int32) ([]float32, *tensor.Tensor, error)

// clipRule turns per-sample gradient norms into clip factors.
type clipRule func(norms []float64) []float32

func randTensor(rng *rand.Rand, shape ...int) *tensor.Tensor {
	t := tensor.New(shape...)
	for i := range t.Data {
		t.Data[i] = float32(rng.NormFloat64())
	}
	return t
}

// randomize fills every parameter of l with N(0, scale²) entries.
func randomize(rng *rand.Rand, l Layer, scale float64) {
	for _, p := range uniqueParams(l) {
		for i := range p.Value.Data {
			p.Value.Data[i] = float32(scale * rng.NormFloat64())
		}
	}
}

// uniqueParams lists l's parameters once each (tied weights appear once).
func uniqueParams(l Layer) []*Param {
	var ps []*Param
	for _, p := range l.Params() {
		if !slices.Contains(ps, p) {
			ps = append(ps, p)
		}
	}
	return ps
}

func zeroGrads(l Layer) {
	for _, p := range l.Params() {
		p.Grad.Zero()
	}
}

type gradOpt struct {
	NoInput bool    // do not check the input gradient
	Tol     float64 // relative tolerance; 0 means 1e-2
	Step    float64 // finite-difference step; 0 means 1e-2
}

func checkGrad(t *testing.T, l Layer, x *tensor.Tensor, opt gradOpt) {
	t.Helper()
	tol, h := opt.Tol, opt.Step
	if tol == 0 {
		tol = 1e-2
	}
	if h == 0 {
		h = 1e-2
	}
	newCtx := func() *Context { return &Context{Train: true, Rand: rand.New(rand.NewPCG(7, 7))} }
	ctx := newCtx()
	y := l.Forward(ctx, x)
	rng := rand.New(rand.NewPCG(3, 4))
	r := randTensor(rng, y.Shape...)
	probe := func() float64 {
		y := l.Forward(newCtx(), x)
		return dot(r.Data, y.Data)
	}
	zeroGrads(l)
	dx := l.Backward(ctx, r.Clone())
	// fd compares the analytic gradient an of the probe with respect to v
	// with central differences, perturbing each entry of v in place.
	fd := func(what string, v, an []float32) {
		t.Helper()
		if len(an) != len(v) {
			t.Fatalf("%s: gradient has %d entries, want %d", what, len(an), len(v))
		}
		rms := math.Sqrt(sqNorm(an)/float64(len(an))) + 1e-6
		bad := 0
		for j := range v {
			old := v[j]
			v[j] = old + float32(h)
			up, hiv := probe(), float64(v[j])
			v[j] = old - float32(h)
			down, lov := probe(), float64(v[j])
			v[j] = old
			num := (up - down) / (hiv - lov)
			if d := math.Abs(num - float64(an[j])); !(d <= tol*(math.Abs(float64(an[j]))+rms)) {
				if bad++; bad <= 5 {
					t.Errorf("%s[%d]: backward %.6g, finite differences %.6g", what, j, an[j], num)
				}
			}
		}
		if bad > 5 {
			t.Errorf("%s: %d of %d entries differ", what, bad, len(v))
		}
	}
	for _, p := range uniqueParams(l) {
		fd(p.Name, p.Value.Data, append([]float32(nil), p.Grad.Data...))
	}
	if !opt.NoInput {
		if dx == nil || !dx.SameShape(x) {
			t.Fatalf("input gradient %v for input %v", dx, x)
		}
		fd("input", x.Data, append([]float32(nil), dx.Data...))
	}
}

func squareLoss(r *tensor.Tensor) lossFunc {
	return func(out *tensor.Tensor, y []int32) ([]float32, *tensor.Tensor, error) {
		n := out.Dim(0)
		per := out.Len() / n
		if len(y) != n || r.Len() != per*r.Dim(0) {
			panic("squareLoss: need one sample id per sample and rows of r shaped like out's")
		}
		d := tensor.New(out.Shape...)
		losses := make([]float32, n)
		for i, id := range y {
			ref := r.Data[int(id)*per : (int(id)+1)*per]
			var s float64
			for j := range per {
				v := out.Data[i*per+j] - ref[j]
				d.Data[i*per+j] = v
				s += float64(v) * float64(v) / 2
			}
			losses[i] = float32(s)
		}
		return losses, d, nil
	}
}

// ids returns the sample ids 0..n-1, the targets squareLoss expects.
func ids(n int) []int32 {
	y := make([]int32, n)
	for i := range y {
		y[i] = int32(i)
	}
	return y
}

func medianClip(norms []float64) []float32 {
	s := slices.Clone(norms)
	slices.Sort(s)
	tau := s[len(s)/2]
	c := make([]float32, len(norms))
	for i, n := range norms {
		c[i] = float32(math.Min(1, tau/n) / float64(len(norms)))
	}
	return c
}

func checkPerSample(t *testing.T, model Layer, x *tensor.Tensor, y []int32, loss lossFunc, rule clipRule) {
	t.Helper()
	n := x.Dim(0)
	params := uniqueParams(model)
	per, perY := x.Len()/n, len(y)/n

	// Brute force: one sample at a time, plain mode.
	grads := make([][][]float32, n) // [sample][param]
	norms := make([]float64, n)
	for i := range n {
		xi := tensor.From(slices.Clone(x.Data[i*per:(i+1)*per]), append([]int{1}, x.Shape[1:]...)...)
		var yi []int32
		if y != nil {
			yi = y[i*perY : (i+1)*perY]
		}
		ctx := &Context{}
		out := model.Forward(ctx, xi)
		_, d, err := loss(out, yi)
		if err != nil {
			t.Fatal(err)
		}
		zeroGrads(model)
		model.Backward(ctx, d)
		for _, p := range params {
			grads[i] = append(grads[i], slices.Clone(p.Grad.Data))
			norms[i] += sqNorm(p.Grad.Data)
		}
		norms[i] = math.Sqrt(norms[i])
	}
	c := rule(norms)

	// Plain full batch: Σ_i g_i.
	ctx := &Context{}
	out := model.Forward(ctx, x)
	_, d, err := loss(out, y)
	if err != nil {
		t.Fatal(err)
	}
	zeroGrads(model)
	model.Backward(ctx, d)
	ones := make([]float32, n)
	for i := range ones {
		ones[i] = 1
	}
	compareAggregate(t, "plain batch", params, grads, ones)

	// One pass, per-sample mode.
	out = model.Forward(ctx, x)
	_, d, err = loss(out, y)
	if err != nil {
		t.Fatal(err)
	}
	zeroGrads(model)
	ctx.BeginPerSample(n)
	model.Backward(ctx, d)
	for i, sq := range ctx.SqNorms() {
		if got := math.Sqrt(sq); !(math.Abs(got-norms[i]) <= 1e-4*norms[i]+1e-12) {
			t.Errorf("sample %d: norm %.8g, brute force %.8g", i, got, norms[i])
		}
	}
	ctx.Finish(c)
	ctx.EndPerSample()
	compareAggregate(t, "clipped", params, grads, c)
}

// compareAggregate checks every parameter's gradient against Σ_i c_i·g_i
// (samples with c_i = 0 left out) to relative error 1e-4.
func compareAggregate(t *testing.T, what string, params []*Param, grads [][][]float32, c []float32) {
	t.Helper()
	var total float64
	want := make([][]float64, len(params))
	for k, p := range params {
		want[k] = make([]float64, p.Grad.Len())
		for i, ci := range c {
			if ci == 0 {
				continue
			}
			for j, g := range grads[i][k] {
				want[k][j] += float64(ci) * float64(g)
			}
		}
		for _, w := range want[k] {
			total += w * w
		}
	}
	for k, p := range params {
		var diff, ref float64
		for j, w := range want[k] {
			e := float64(p.Grad.Data[j]) - w
			diff += e * e
			ref += w * w
		}
		if !(math.Sqrt(diff) <= 1e-4*math.Max(math.Sqrt(ref), 1e-3*math.Sqrt(total))) {
			t.Errorf("%s %s: |error| %.3g, |gradient| %.6g", what, p.Name, math.Sqrt(diff), math.Sqrt(ref))
		}
	}
}

// The harness, exported to the external tests of whole models built from
// these layers (package nn_test, which may import package models).
var (
	CheckPerSample = checkPerSample
	MedianClip     = medianClip
	RandTensor     = randTensor
)

// ForceRule sets the per-sample rule of every Linear and Conv2d in a
// Sequential model: ghost norms if ghost, materialised gradients otherwise.
func ForceRule(m Sequential, ghost bool) {
	r := ruleMaterialise
	if ghost {
		r = ruleGhost
	}
	for _, l := range m {
		switch l := l.(type) {
		case *Linear:
			l.rule = r
		case *Conv2d:
			l.rule = r
		}
	}
}

// dot and sqNorm are the tests' own float64 loops, independent of the
// kernels the layers use.
func dot(a, b []float32) float64 {
	var s float64
	for j, x := range a {
		s += float64(x) * float64(b[j])
	}
	return s
}

func sqNorm(x []float32) float64 { return dot(x, x) }
