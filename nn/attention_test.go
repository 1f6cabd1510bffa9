package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/psclip/psclip/bench"
	"github.com/psclip/psclip/kernels"
	"github.com/psclip/psclip/tensor"
)

// naiveAttention is causal multi-head attention computed in float64 from
// its definition.
func naiveAttention(x *tensor.Tensor, nh int) []float64 {
	b, t, d := x.Shape[0], x.Shape[1], x.Shape[2]/3
	hd := d / nh
	at := func(i, s, j int) float64 { return float64(x.Data[(i*t+s)*3*d+j]) }
	y := make([]float64, b*t*d)
	for i := range b {
		for h := range nh {
			for r := range t {
				w := make([]float64, r+1)
				var m float64 = math.Inf(-1)
				for s := range r + 1 {
					for j := range hd {
						w[s] += at(i, r, h*hd+j) * at(i, s, d+h*hd+j)
					}
					w[s] /= math.Sqrt(float64(hd))
					m = math.Max(m, w[s])
				}
				var z float64
				for s := range w {
					w[s] = math.Exp(w[s] - m)
					z += w[s]
				}
				for s := range w {
					for j := range hd {
						y[(i*t+r)*d+h*hd+j] += w[s] / z * at(i, s, 2*d+h*hd+j)
					}
				}
			}
		}
	}
	return y
}

func TestCausalAttentionForward(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	// The last case spans three of causalBlocks' blocks, one of them cut.
	for _, tc := range []struct{ b, t, d, nh int }{{2, 5, 8, 2}, {1, 1, 4, 1}, {3, 7, 12, 3}, {2, 2*attnBlock + 13, 8, 2}} {
		x := randTensor(rng, tc.b, tc.t, 3*tc.d)
		a := &CausalAttention{NHead: tc.nh}
		y := a.Forward(&Context{}, x)
		want := naiveAttention(x, tc.nh)
		for i, w := range want {
			if math.Abs(float64(y.Data[i])-w) > 1e-5*(1+math.Abs(w)) {
				t.Fatalf("%+v: y[%d] = %v, want %v", tc, i, y.Data[i], w)
			}
		}
	}
}

func TestCausalAttentionGrad(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	checkGrad(t, &CausalAttention{NHead: 2}, randTensor(rng, 2, 5, 3*4), gradOpt{})
	// Two of causalBlocks' blocks.
	checkGrad(t, &CausalAttention{NHead: 1}, randTensor(rng, 1, attnBlock+5, 3*2), gradOpt{})
}

// The output and gradient are bit-identical whatever GOMAXPROCS is.
func TestCausalAttentionDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	x, dy := randTensor(rng, 3, 9, 3*8), randTensor(rng, 3, 9, 8)
	run := func(procs int) ([]float32, []float32) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		a := &CausalAttention{NHead: 4}
		y := a.Forward(&Context{}, x)
		return slices.Clone(y.Data), slices.Clone(a.Backward(&Context{}, dy).Data)
	}
	y1, dx1 := run(1)
	y4, dx4 := run(4)
	if !slices.Equal(y1, y4) || !slices.Equal(dx1, dx4) {
		t.Fatal("results differ between GOMAXPROCS 1 and 4")
	}
}

func TestCausalSelfAttention(t *testing.T) {
	for _, tc := range []struct {
		name string
		rule rule
		bias bool
	}{
		{"ghost", ruleGhost, false},
		{"materialise", ruleMaterialise, false},
		{"ghost-bias", ruleGhost, true},
		{"materialise-bias", ruleMaterialise, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, 8))
			a := NewCausalSelfAttention("attn", 8, 2, 0, tc.bias)
			a.CAttn.rule, a.CProj.rule = tc.rule, tc.rule
			randomize(rng, a, 0.5)
			want := []string{"attn.c_attn.weight", "attn.c_proj.weight"}
			if tc.bias {
				want = []string{"attn.c_attn.weight", "attn.c_attn.bias", "attn.c_proj.weight", "attn.c_proj.bias"}
			}
			if got := paramNames(a); !slices.Equal(got, want) {
				t.Fatalf("params %v", got)
			}
			x := randTensor(rng, 3, 6, 8)
			checkGrad(t, a, x, gradOpt{})
			checkPerSample(t, a, x, ids(3), squareLoss(randTensor(rng, 3, 6, 8)), medianClip)
		})
	}
}

// CausalSelfAttention does c_attn's per-sample work inside the core's
// backward pass, a sample at a time; the norms and the clipped gradients
// are those of the layers' Backward passes run one after the other, to the
// bit, at any GOMAXPROCS.
func TestCausalSelfAttentionEarlySamples(t *testing.T) {
	for _, r := range []rule{ruleGhost, ruleMaterialise} {
		for _, procs := range []int{1, 3} {
			rng := rand.New(rand.NewPCG(9, 10))
			a := NewCausalSelfAttention("attn", 16, 2, 0, true)
			a.CAttn.rule, a.CProj.rule = r, r
			randomize(rng, a, 0.5)
			x, dy := randTensor(rng, 5, 8, 16), randTensor(rng, 5, 8, 16)
			c := []float32{0.5, 0, 1, 0.25, 0.125}
			run := func(fused bool) (norms []float64, grads [][]float32) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				var ctx Context
				ctx.BeginPerSample(5)
				a.Forward(&ctx, x)
				for _, p := range a.Params() {
					clear(p.Grad.Data)
				}
				if fused {
					a.Backward(&ctx, dy)
				} else {
					a.CAttn.Backward(&ctx, a.Core.Backward(&ctx, a.CProj.Backward(&ctx, dy)))
				}
				norms = slices.Clone(ctx.SqNorms())
				ctx.Finish(c)
				ctx.EndPerSample()
				for _, p := range a.Params() {
					grads = append(grads, slices.Clone(p.Grad.Data))
				}
				return norms, grads
			}
			n0, g0 := run(false)
			n1, g1 := run(true)
			if !slices.Equal(n0, n1) {
				t.Errorf("rule %d, GOMAXPROCS %d: norms %v, layer by layer %v", r, procs, n1, n0)
			}
			for i := range g0 {
				if !slices.Equal(g0[i], g1[i]) {
					t.Errorf("rule %d, GOMAXPROCS %d: %s differs from the layers' Backward passes", r, procs, a.Params()[i].Name)
				}
			}
		}
	}
}

func paramNames(l Layer) []string {
	var s []string
	for _, p := range l.Params() {
		s = append(s, p.Name)
	}
	return s
}

// BenchmarkCausalAttention times the core at the shapes of nanoGPT's
// character-level model (batch 12, T 64, width 128, 4 heads), of GPT-2
// 124M at a short context (batch 8, T 256, width 768, 12 heads) and of the
// GPT 4×256 at T 1024 (batch 4). Besides the wall time it reports the
// process's CPU time an operation (cpu-ms/op), the figure to compare on a
// machine shared with other jobs.
func BenchmarkCausalAttention(b *testing.B) {
	for _, s := range []struct{ b, t, d, h int }{{12, 64, 128, 4}, {8, 256, 768, 12}, {4, 1024, 256, 4}} {
		rng := rand.New(rand.NewPCG(1, 2))
		x, dy := randTensor(rng, s.b, s.t, 3*s.d), randTensor(rng, s.b, s.t, s.d)
		a := &CausalAttention{NHead: s.h}
		name := fmt.Sprintf("B%d-T%d-d%d-h%d", s.b, s.t, s.d, s.h)
		b.Run(name+"/forward", func(b *testing.B) {
			cpu := bench.CPUTime()
			for b.Loop() {
				a.Forward(&Context{}, x)
			}
			reportCPU(b, cpu)
		})
		b.Run(name+"/backward", func(b *testing.B) {
			a.Forward(&Context{}, x)
			cpu := bench.CPUTime()
			for b.Loop() {
				a.Backward(&Context{}, dy)
			}
			reportCPU(b, cpu)
		})
	}
}

// reportCPU reports the process's CPU time since cpu0 per operation of b.
func reportCPU(b *testing.B, cpu0 time.Duration) {
	b.ReportMetric(float64((bench.CPUTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

// BenchmarkCausalSoftmax times the softmax of one (sample, head) job's
// scores and its backward at the character GPT's T = 64.
func BenchmarkCausalSoftmax(b *testing.B) {
	const t = 64
	rng := rand.New(rand.NewPCG(3, 4))
	scores, dp := make([]float32, t*t), make([]float32, t*t)
	for i := range scores {
		scores[i], dp[i] = float32(3*rng.NormFloat64()), float32(rng.NormFloat64())
	}
	p, ds, e := make([]float32, t*t), make([]float32, t*t), make([]float64, softmaxSpan)
	b.Run("forward", func(b *testing.B) {
		for b.Loop() {
			copy(p, scores)
			causalSoftmax(p, t, e)
		}
	})
	b.Run("backward", func(b *testing.B) {
		for b.Loop() {
			causalSoftmaxBackward(p, dp, ds, t, 0.25)
		}
	})
}

// TestCausalSoftmaxBlocks checks causalSoftmax, which feeds kernels.Exp
// several rows at a time, and rows longer than that in blocks, against the
// softmax computed per element in float64 with math.Exp.
func TestCausalSoftmaxBlocks(t *testing.T) {
	const n = softmaxSpan + 2*kernels.ExpBlock + 22
	rng := rand.New(rand.NewPCG(9, 10))
	p := make([]float32, n*n)
	for i := range p {
		p[i] = float32(4 * rng.NormFloat64())
	}
	scores := append([]float32(nil), p...)
	causalSoftmax(p, n, make([]float64, softmaxSpan))
	for r := range n {
		row := scores[r*n : (r+1)*n]
		m := math.Inf(-1)
		for _, v := range row[:r+1] {
			m = math.Max(m, float64(v))
		}
		var z float64
		for _, v := range row[:r+1] {
			z += math.Exp(float64(v) - m)
		}
		for s, v := range row {
			want := 0.0
			if s <= r {
				want = math.Exp(float64(v)-m) / z
			}
			if got := float64(p[r*n+s]); math.Abs(got-want) > 1e-5*want {
				t.Fatalf("row %d, column %d: %v, want %v", r, s, got, want)
			}
		}
	}
}
