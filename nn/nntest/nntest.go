// Package nntest checks an nn.Layer the way psclip checks its own layers, so
// that a layer of one's own can be trusted in training and in one-pass
// per-sample clipping. CheckGradients compares Backward (the input gradient
// and every parameter's) with central finite differences of the forward
// pass. CheckPerSample compares the per-sample mode with the brute force:
// every sample's gradient from a batch of one, its norm, the clip factors,
// and the clipped aggregate Σ_i c_i·g_i; and the plain batch gradient with
// Σ_i g_i. CheckLayer runs both with a square loss and a median clip, the
// few lines a layer's test needs:
//
//	func TestMyLayer(t *testing.T) {
//		rng := rand.New(rand.NewPCG(1, 2))
//		nntest.CheckLayer(t, NewMyLayer(4), nntest.RandTensor(rng, 5, 4))
//	}
//
// The checks compute in float64, independently of the kernels the layers
// use, with tolerances that float32 layers meet and real mistakes (a
// missing term, a wrong index, a norm of the wrong sample) do not. A
// failure names the parameter it concerns: a gradient entry, a sample's
// gradient of one parameter, and for a wrong per-sample norm the layer
// (inside nn.Sequential and nn.Residual) whose norm term is wrong, by its
// parameters.
//
// Frozen parameters (nn.Param.Frozen) are constants to every check: the
// brute force's norms and aggregates are over the parameters to train, and
// every check fails a layer that writes a frozen parameter's gradient.
// CheckPerSample also runs nn.BackwardParams, the backward pass a trainer
// runs, against the same brute force.
//
// The checks report to a T, which *testing.T and *testing.B are; outside
// go test (a program checking layers of its own) a Recorder collects the
// failures.
package nntest

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/tensor"
)

// T is what the checks report failures to: *testing.T, *testing.B and
// *Recorder are one. A check that cannot go on (a gradient of the wrong
// shape, a loss that fails) reports it with Errorf and returns.
type T interface {
	// Helper marks the calling function as a helper (testing.T.Helper).
	Helper()
	// Errorf reports a failure.
	Errorf(format string, args ...any)
}

// Recorder is a T for use outside go test: it records every failure.
type Recorder struct {
	Failures []string
}

// Helper does nothing: a Recorder reports no source lines.
func (*Recorder) Helper() {}

// Errorf records a failure.
func (r *Recorder) Errorf(format string, args ...any) {
	r.Failures = append(r.Failures, fmt.Sprintf(format, args...))
}

// Err returns the failures as one error, one per line, or nil if there
// were none.
func (r *Recorder) Err() error {
	if len(r.Failures) == 0 {
		return nil
	}
	return errors.New(strings.Join(r.Failures, "\n"))
}

// Loss is the shape of a loss, train.Loss's: per-sample losses and the
// gradient of their sum with respect to the model output. nn.CrossEntropy
// and any train.Loss are one.
type Loss = func(out *tensor.Tensor, y []int32) ([]float32, *tensor.Tensor, error)

// RandTensor returns a tensor of the given shape with N(0, 1) entries.
func RandTensor(rng *rand.Rand, shape ...int) *tensor.Tensor {
	t := tensor.New(shape...)
	for i := range t.Data {
		t.Data[i] = float32(rng.NormFloat64())
	}
	return t
}

// Options adjusts CheckGradients.
type Options struct {
	// NoInput skips the input gradient (integer inputs such as token ids,
	// or a layer with NoInputGrad set).
	NoInput bool
	// Tol is the relative tolerance (0: 1e-2) and Step the finite-difference
	// step (0: 1e-2).
	Tol, Step float64
}

// CheckGradients checks l.Backward against central finite differences of
// the probe L = Σ r⊙Forward(x), r fixed and random, with respect to x and
// to every parameter of l. The forward passes run in training mode with the
// same dropout mask every time. Each gradient entry must agree to Tol
// relative to its own size plus the gradient's root mean square.
func CheckGradients(t T, l nn.Layer, x *tensor.Tensor, opt Options) {
	t.Helper()
	tol, h := opt.Tol, opt.Step
	if tol == 0 {
		tol = 1e-2
	}
	if h == 0 {
		h = 1e-2
	}
	newCtx := func() *nn.Context { return &nn.Context{Train: true, Rand: rand.New(rand.NewPCG(7, 7))} }
	ctx := newCtx()
	y := l.Forward(ctx, x)
	r := RandTensor(rand.New(rand.NewPCG(3, 4)), y.Shape...)
	probe := func() float64 {
		y := l.Forward(newCtx(), x)
		return dot(r.Data, y.Data)
	}
	zeroGrads(l)
	dx := l.Backward(ctx, r.Clone())
	checkFrozen(t, "Backward", l)
	// fd compares the analytic gradient an of the probe with respect to v
	// with central differences, perturbing each entry of v in place.
	fd := func(what string, v, an []float32) {
		t.Helper()
		if len(an) != len(v) {
			t.Errorf("%s: gradient has %d entries, want %d", what, len(an), len(v))
			return
		}
		rms := math.Sqrt(dot(an, an)/float64(len(an))) + 1e-6
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
		fd(p.Name, p.Value.Data, slices.Clone(p.Grad.Data))
	}
	if !opt.NoInput {
		if dx == nil || !dx.SameShape(x) {
			t.Errorf("input gradient %v for input %v", dx, x)
			return
		}
		fd("input", x.Data, slices.Clone(dx.Data))
	}
}

// SquareLoss is loss_i = ½|out_i − r[y_i]|², for layers with no natural
// loss: r holds one reference row per sample id, shaped like one sample's
// output, and y = IDs(B) makes a batch of one find its own row.
func SquareLoss(r *tensor.Tensor) Loss {
	return func(out *tensor.Tensor, y []int32) ([]float32, *tensor.Tensor, error) {
		n := out.Dim(0)
		per := out.Len() / n
		if len(y) != n || r.Len() != per*r.Dim(0) {
			return nil, nil, fmt.Errorf("nntest: SquareLoss of %d ids for output %v and references %v: want one id per sample and rows shaped like a sample's output", len(y), out, r)
		}
		for _, id := range y {
			if id < 0 || int(id) >= r.Dim(0) {
				return nil, nil, fmt.Errorf("nntest: SquareLoss: sample id %d outside the %d references", id, r.Dim(0))
			}
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

// IDs returns the sample ids 0..n-1, the targets SquareLoss expects.
func IDs(n int) []int32 {
	y := make([]int32, n)
	for i := range y {
		y[i] = int32(i)
	}
	return y
}

// MedianClip is the clip rule c_i = min(1, τ/|g_i|)/B with τ the median
// norm: about half the samples are clipped.
func MedianClip(norms []float64) []float32 {
	s := slices.Sorted(slices.Values(norms))
	tau := s[len(s)/2]
	c := make([]float32, len(norms))
	for i, n := range norms {
		c[i] = float32(math.Min(1, tau/n) / float64(len(norms)))
	}
	return c
}

// CheckPerSample checks model's per-sample mode against the brute force:
// every sample's gradient from a batch of one in the plain mode and its
// norm, the factors clip(norms), and Σ_i c_i·g_i; against the one-pass
// per-sample mode (BeginPerSample after Forward, and again before it;
// Backward, norms from SqNorms, Finish) to relative error 1e-4. It also checks the plain full-batch gradient
// against Σ_i g_i. Dropout is off. x's first dimension is the batch; y (may
// be nil) is split evenly among the samples.
func CheckPerSample(t T, model nn.Layer, x *tensor.Tensor, y []int32, loss Loss, clip func(norms []float64) []float32) {
	t.Helper()
	n := x.Dim(0)
	params := uniqueParams(model)
	per, perY := x.Len()/n, len(y)/n

	// Brute force: one sample at a time, plain mode, over the parameters
	// to train.
	grads := make([][][]float32, n) // [sample][param]
	norms := make([]float64, n)
	for i := range n {
		xi := tensor.From(slices.Clone(x.Data[i*per:(i+1)*per]), append([]int{1}, x.Shape[1:]...)...)
		var yi []int32
		if y != nil {
			yi = y[i*perY : (i+1)*perY]
		}
		ctx := &nn.Context{}
		out := model.Forward(ctx, xi)
		_, d, err := loss(out, yi)
		if err != nil {
			t.Errorf("sample %d alone: the loss: %v", i, err)
			return
		}
		zeroGrads(model)
		model.Backward(ctx, d)
		checkFrozen(t, fmt.Sprintf("sample %d alone", i), model)
		for _, p := range params {
			grads[i] = append(grads[i], slices.Clone(p.Grad.Data))
			norms[i] += dot(p.Grad.Data, p.Grad.Data)
		}
		norms[i] = math.Sqrt(norms[i])
	}
	c := clip(norms)

	// Plain full batch: Σ_i g_i.
	ctx := &nn.Context{}
	out := model.Forward(ctx, x)
	_, d, err := loss(out, y)
	if err != nil {
		t.Errorf("the batch: the loss: %v", err)
		return
	}
	zeroGrads(model)
	model.Backward(ctx, d)
	checkFrozen(t, "plain batch", model)
	ones := make([]float32, n)
	for i := range ones {
		ones[i] = 1
	}
	compareAggregate(t, "plain batch", params, grads, ones)
	out = model.Forward(ctx, x)
	_, d, _ = loss(out, y)
	zeroGrads(model)
	nn.BackwardParams(ctx, model, d)
	checkFrozen(t, "plain batch, BackwardParams", model)
	compareAggregate(t, "plain batch, BackwardParams", params, grads, ones)

	// One pass, per-sample mode, begun after and before the forward pass,
	// with each layer's own choice and under per-sample memory budgets:
	// none, all the layers want, and half of that.
	// The last pass is nn.BackwardParams'.
	budgets := []int64{0, nn.NoMaterialise, math.MaxInt64, 0, 0}
	for k, early := range []bool{false, true, false, true, false, true, false, true, true} {
		budget, viaParams := budgets[k/2], k == 8
		ctx := &nn.Context{PerSampleMemory: budget}
		if early {
			ctx.BeginPerSample(n)
		}
		out = model.Forward(ctx, x)
		_, d, err = loss(out, y)
		if err != nil {
			t.Errorf("the batch, per-sample mode: the loss: %v", err)
			return
		}
		zeroGrads(model)
		if !early {
			ctx.BeginPerSample(n)
		}
		if viaParams {
			nn.BackwardParams(ctx, model, d)
		} else {
			model.Backward(ctx, d)
		}
		wrong := false
		for i, sq := range ctx.SqNorms() {
			if got := math.Sqrt(sq); !(math.Abs(got-norms[i]) <= 1e-4*norms[i]+1e-12) {
				t.Errorf("begun before Forward %v, memory budget %d, BackwardParams %v: sample %d: norm %.8g, brute force %.8g", early, budget, viaParams, i, got, norms[i])
				wrong = true
			}
		}
		if budget == nn.NoMaterialise && ctx.PerSampleBytes() != 0 {
			t.Errorf("memory budget NoMaterialise: %d bytes of per-sample gradients materialised", ctx.PerSampleBytes())
		}
		if budget > 0 && ctx.PerSampleBytes() > budget {
			t.Errorf("memory budget %d: %d bytes of per-sample gradients materialised", budget, ctx.PerSampleBytes())
		}
		if budget == math.MaxInt64 {
			budgets[3] = ctx.PerSampleBytes() / 2
		}
		ctx.Finish(c)
		ctx.EndPerSample()
		what := fmt.Sprintf("clipped, begun before Forward %v, memory budget %d, BackwardParams %v", early, budget, viaParams)
		checkFrozen(t, what, model)
		compareAggregate(t, what, params, grads, c)
		if wrong {
			blameNorms(t, model, x, y, loss, params, grads)
		}
	}
	// Every sample alone through Finish (factor 1 for it, 0 for the
	// others): each parameter's per-sample gradient, named if wrong.
	for i := range n {
		onehot := make([]float32, n)
		onehot[i] = 1
		ctx.BeginPerSample(n)
		out = model.Forward(ctx, x)
		if _, d, err = loss(out, y); err != nil {
			t.Errorf("the batch, per-sample mode: the loss: %v", err)
			return
		}
		zeroGrads(model)
		model.Backward(ctx, d)
		ctx.Finish(onehot)
		ctx.EndPerSample()
		checkFrozen(t, fmt.Sprintf("sample %d through Finish", i), model)
		compareAggregate(t, fmt.Sprintf("sample %d's per-sample gradient:", i), params, grads, onehot)
	}
}

// blameNorms names the layers whose per-sample norm terms are wrong: it
// runs the per-sample backward pass again with every parametrised layer
// inside model's nn.Sequential and nn.Residual containers wrapped, so that
// each one's contribution to SqNorms is seen, and compares it with the
// brute-force squared norms of that layer's parameters.
func blameNorms(t T, model nn.Layer, x *tensor.Tensor, y []int32, loss Loss, params []*nn.Param, grads [][][]float32) {
	t.Helper()
	probed, probes := probe(model)
	n := x.Dim(0)
	ctx := &nn.Context{}
	ctx.BeginPerSample(n)
	defer ctx.EndPerSample()
	out := probed.Forward(ctx, x)
	_, d, err := loss(out, y)
	if err != nil {
		t.Errorf("the batch, per-sample mode: the loss: %v", err)
		return
	}
	zeroGrads(model)
	probed.Backward(ctx, d)
	for _, p := range probes {
		var names []string
		for _, q := range uniqueParams(p) {
			names = append(names, q.Name)
		}
		for i := range n {
			var want float64
			for k, q := range params {
				if slices.Contains(p.Params(), q) {
					want += dot(grads[i][k], grads[i][k])
				}
			}
			if got := p.terms[i]; !(math.Abs(got-want) <= 1e-4*want+1e-12) {
				t.Errorf("sample %d: the per-sample squared-norm term of the layer with parameters %s is %.8g, brute force %.8g", i, strings.Join(names, ", "), got, want)
			}
		}
	}
}

// termProbe wraps a parametrised layer and records its Backward's
// contribution to every sample's squared norm.
type termProbe struct {
	nn.Layer
	terms []float64
}

func (p *termProbe) Backward(ctx *nn.Context, dy *tensor.Tensor) *tensor.Tensor {
	before := slices.Clone(ctx.SqNorms())
	dx := p.Layer.Backward(ctx, dy)
	p.terms = slices.Clone(ctx.SqNorms())
	for i, b := range before {
		p.terms[i] -= b
	}
	return dx
}

// probe returns l with every parametrised layer inside its nn.Sequential
// and nn.Residual containers wrapped in a termProbe (l itself if it is no
// container), and the probes; the layers and parameters are l's own.
func probe(l nn.Layer) (nn.Layer, []*termProbe) {
	switch l := l.(type) {
	case nn.Sequential:
		out := make(nn.Sequential, len(l))
		var all []*termProbe
		for i, c := range l {
			var ps []*termProbe
			out[i], ps = probe(c)
			all = append(all, ps...)
		}
		return out, all
	case *nn.Residual:
		f, ps := probe(l.F)
		return &nn.Residual{F: f}, ps
	}
	if len(l.Params()) == 0 {
		return l, nil
	}
	p := &termProbe{Layer: l}
	return p, []*termProbe{p}
}

// CheckLayer runs CheckGradients on l with input x (its first dimension the
// batch, at least two samples), then CheckPerSample with SquareLoss against
// random references and MedianClip. A layer whose input has no gradient
// (token ids) needs CheckGradients with Options.NoInput instead.
func CheckLayer(t T, l nn.Layer, x *tensor.Tensor) {
	t.Helper()
	CheckGradients(t, l, x, Options{})
	out := l.Forward(&nn.Context{}, x)
	n := x.Dim(0)
	r := RandTensor(rand.New(rand.NewPCG(5, 6)), append([]int{n}, out.Shape[1:]...)...)
	CheckPerSample(t, l, x, IDs(n), SquareLoss(r), MedianClip)
}

// compareAggregate checks every parameter's gradient against Σ_i c_i·g_i
// (samples with c_i = 0 left out) to relative error 1e-4.
func compareAggregate(t T, what string, params []*nn.Param, grads [][][]float32, c []float32) {
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

// uniqueParams lists l's parameters to train once each (tied weights
// appear once; frozen ones not at all).
func uniqueParams(l nn.Layer) []*nn.Param {
	var ps []*nn.Param
	for _, p := range l.Params() {
		if !p.Frozen && !slices.Contains(ps, p) {
			ps = append(ps, p)
		}
	}
	return ps
}

// frozenMark is what zeroGrads writes into a frozen parameter's gradient,
// and checkFrozen expects there after a backward pass.
const frozenMark = 0.5

// zeroGrads clears the gradients of l's parameters to train and marks
// those of its frozen ones.
func zeroGrads(l nn.Layer) {
	for _, p := range l.Params() {
		if p.Frozen {
			for i := range p.Grad.Data {
				p.Grad.Data[i] = frozenMark
			}
		} else {
			p.Grad.Zero()
		}
	}
}

// checkFrozen fails unless every frozen parameter's gradient holds what
// zeroGrads wrote: a backward pass must not touch it.
func checkFrozen(t T, what string, l nn.Layer) {
	t.Helper()
	for _, p := range l.Params() {
		if p.Frozen && slices.ContainsFunc(p.Grad.Data, func(v float32) bool { return v != frozenMark }) {
			t.Errorf("%s: the gradient of the frozen parameter %s was written", what, p.Name)
		}
	}
}

// dot is the checks' own float64 loop, independent of the kernels the
// layers use.
func dot(a, b []float32) float64 {
	var s float64
	for j, x := range a {
		s += float64(x) * float64(b[j])
	}
	return s
}
