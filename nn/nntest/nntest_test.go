package nntest

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/tensor"
)

// failures runs CheckLayer on l with a Recorder, as a program outside go
// test would, and returns how many failures it reported.
func failures(_ *testing.T, l nn.Layer, x *tensor.Tensor) int {
	var r Recorder
	CheckLayer(&r, l, x)
	if (r.Err() == nil) != (len(r.Failures) == 0) {
		panic("Recorder.Err disagrees with Failures")
	}
	return len(r.Failures)
}

// scale is y = x ⊙ w per feature, with a bug chosen by bug.
type scale struct {
	w   *nn.Param
	x   *tensor.Tensor
	ps  []float32
	bug int
}

const (
	noBug       = iota
	inputGrad   // the input gradient forgets w
	paramGrad   // the plain weight gradient is doubled
	wrongSample // each sample's squared norm goes to the next sample
	noFactors   // the deferred clipped gradient ignores the factors
)

func (s *scale) Params() []*nn.Param { return []*nn.Param{s.w} }

func (s *scale) Forward(_ *nn.Context, x *tensor.Tensor) *tensor.Tensor {
	s.x = x
	y := tensor.New(x.Shape...)
	d := s.w.Value.Len()
	for i, v := range x.Data {
		y.Data[i] = v * s.w.Value.Data[i%d]
	}
	return y
}

func (s *scale) Backward(ctx *nn.Context, dy *tensor.Tensor) *tensor.Tensor {
	d := s.w.Value.Len()
	dx := tensor.New(dy.Shape...)
	for i, v := range dy.Data {
		dx.Data[i] = v * s.w.Value.Data[i%d]
		if s.bug == inputGrad {
			dx.Data[i] = v
		}
	}
	if !ctx.PerSample() {
		for i, v := range dy.Data {
			g := v * s.x.Data[i]
			if s.bug == paramGrad {
				g *= 2
			}
			s.w.Grad.Data[i%d] += g
		}
		return dx
	}
	n := dy.Dim(0)
	per := dy.Len() / n
	s.ps = make([]float32, n*d)
	sq := ctx.SqNorms()
	for i := range n {
		gi := s.ps[i*d : (i+1)*d]
		for j := i * per; j < (i+1)*per; j++ {
			gi[j%d] += dy.Data[j] * s.x.Data[j]
		}
		k := i
		if s.bug == wrongSample {
			k = (i + 1) % n
		}
		for _, v := range gi {
			sq[k] += float64(v) * float64(v)
		}
	}
	ctx.Defer(func(c []float32) {
		for i, ci := range c {
			if s.bug == noFactors {
				ci = 1
			}
			if ci == 0 {
				continue
			}
			for j, v := range s.ps[i*d : (i+1)*d] {
				s.w.Grad.Data[j] += ci * v
			}
		}
	})
	return dx
}

// CheckLayer passes a correct layer and psclip's own, and catches each of
// the mistakes a hand-written layer makes.
func TestCheckLayer(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	newScale := func(bug int) *scale {
		s := &scale{w: nn.NewParam("w", 4), bug: bug}
		for i := range s.w.Value.Data {
			s.w.Value.Data[i] = float32(1 + 0.5*rng.NormFloat64())
		}
		return s
	}
	x := RandTensor(rng, 6, 3, 4)
	if n := failures(t, newScale(noBug), x); n != 0 {
		t.Errorf("a correct layer: %d failures", n)
	}
	if n := failures(t, nn.NewLinear("fc", 4, 5, true), x); n != 0 {
		t.Errorf("nn.Linear: %d failures", n)
	}
	for _, bug := range []struct {
		name string
		bug  int
	}{{"input gradient", inputGrad}, {"weight gradient", paramGrad}, {"norm of the wrong sample", wrongSample}, {"factors ignored", noFactors}} {
		if n := failures(t, newScale(bug.bug), x); n == 0 {
			t.Errorf("%s: not caught", bug.name)
		}
	}
}

// A wrong per-sample term inside a model is blamed on its parameter: the
// norm of the wrong sample (gradients right) by the layer's norm term, and
// factors ignored by the per-sample gradient, both naming "mid.w" and never
// the correct layers around it.
func TestFailuresNameTheParameter(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, tc := range []struct {
		bug  int
		want string // what a failure naming mid.w says
	}{{wrongSample, "squared-norm term"}, {noFactors, "per-sample gradient"}} {
		mid := &scale{w: nn.NewParam("mid.w", 4), bug: tc.bug}
		for i := range mid.w.Value.Data {
			mid.w.Value.Data[i] = float32(1 + 0.5*rng.NormFloat64())
		}
		model := nn.Sequential{nn.NewLinear("a", 4, 4, true), mid, nn.NewLinear("b", 4, 3, true)}
		for _, p := range model.Params() {
			if p != mid.w {
				for i := range p.Value.Data {
					p.Value.Data[i] = float32(0.5 * rng.NormFloat64())
				}
			}
		}
		x := RandTensor(rng, 5, 4)
		r := RandTensor(rng, 5, 3)
		var rec Recorder
		CheckPerSample(&rec, model, x, IDs(5), SquareLoss(r), MedianClip)
		named := slices.ContainsFunc(rec.Failures, func(f string) bool {
			return strings.Contains(f, "mid.w") && strings.Contains(f, tc.want)
		})
		if !named {
			t.Errorf("bug %d: no failure names mid.w's %s: %q", tc.bug, tc.want, rec.Failures)
		}
		for _, f := range rec.Failures {
			if (strings.Contains(f, "a.") || strings.Contains(f, "b.")) && !strings.Contains(f, "clipped") && !strings.Contains(f, "plain") {
				t.Errorf("bug %d: a correct layer is blamed: %s", tc.bug, f)
			}
		}
	}
}
