package nntest

import (
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/tensor"
)

// recorder is a testing.TB that counts failures instead of failing.
type recorder struct {
	testing.TB
	failures int
}

func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.failures++ }
func (r *recorder) Fatal(...any)          { r.failures++; runtime.Goexit() }
func (r *recorder) Fatalf(string, ...any) { r.failures++; runtime.Goexit() }

// failures runs CheckLayer on l and returns how many failures it reported.
func failures(t *testing.T, l nn.Layer, x *tensor.Tensor) int {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		CheckLayer(r, l, x)
	}()
	<-done
	return r.failures
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
