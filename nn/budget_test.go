package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/psclip/psclip/kernels"
	"github.com/psclip/psclip/tensor"
)

// budgetModel is three Linear layers over sequences long enough (T = 32)
// that materialising saves time in each: 4→6, 6→3 and 3→5, whose
// per-sample gradients take 96, 72 and 60 bytes a sample and save, a byte,
// (2·32²·10 − 78·24)/96 = 193.8, (2·32²·9 − 78·18)/72 = 236.5 and
// (2·32²·8 − 78·15)/60 = 253.6 flops: the plan ranks them 3, 2, 1.
func budgetModel(rng *rand.Rand) (Sequential, []*Linear) {
	ls := []*Linear{NewLinear("a", 4, 6, true), NewLinear("b", 6, 3, false), NewLinear("c", 3, 5, true)}
	for _, l := range ls {
		randomize(rng, l, 0.5)
	}
	return Sequential{ls[0], &GELU{}, ls[1], ls[2]}, ls
}

// TestPerSampleMemoryPlan checks the plan's choices under budgets against
// the ranking worked out by hand in budgetModel, and what PerSampleBytes
// reports; the norms and clipped gradients under every budget are the
// brute force's (checkPerSample runs the model under budgets too).
func TestPerSampleMemoryPlan(t *testing.T) {
	const n, tl = 3, 32
	for _, tc := range []struct {
		name   string
		budget int64
		mat    []bool // a, b, c materialised
	}{
		{"layer rule", 0, []bool{true, true, true}}, // each: in·out ≤ T·(in+out), and materialising is cheaper
		{"none", NoMaterialise, []bool{false, false, false}},
		{"all", math.MaxInt64, []bool{true, true, true}},
		{"best only", 60 * n, []bool{false, false, true}},
		{"best two", (60 + 72) * n, []bool{false, true, true}},
		{"best, the second one byte short", (60+72)*n - 1, []bool{false, false, true}},
		{"one byte short of the best", 60*n - 1, []bool{false, false, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			m, ls := budgetModel(rng)
			x := randTensor(rng, n, tl, 4)
			ctx := &Context{PerSampleMemory: tc.budget}
			ctx.BeginPerSample(n)
			out := m.Forward(ctx, x)
			m.Backward(ctx, randTensor(rng, out.Shape...))
			var want int64
			var got []bool
			for i, l := range ls {
				got = append(got, !l.ghost)
				if tc.mat[i] {
					want += 4 * n * int64(l.in*l.out)
				}
			}
			if !slices.Equal(got, tc.mat) {
				t.Errorf("materialised %v, want %v", got, tc.mat)
			}
			if ctx.PerSampleBytes() != want {
				t.Errorf("PerSampleBytes %d, want %d", ctx.PerSampleBytes(), want)
			}
			ctx.Finish(make([]float32, n))
		})
	}
	rng := rand.New(rand.NewPCG(3, 4))
	m, _ := budgetModel(rng)
	x := randTensor(rng, n, tl, 4)
	checkPerSample(t, m, x, ids(n), squareLoss(randTensor(rng, n, tl, 5)), medianClip)
}

// TestPerSampleMemoryHeld checks what a per-sample step under a budget
// holds beyond a plain step's buffers: the per-sample gradients of the
// layers it materialises, the Gram matrices of the ghost layers' inputs and
// a few bytes a sample (bias gradients, norms). A layer that the plan
// materialises drops the Gram matrices that the first step's Forward formed
// for it, before there was a plan.
func TestPerSampleMemoryHeld(t *testing.T) {
	const n, tl = 3, 32
	rng := rand.New(rand.NewPCG(7, 8))
	m, ls := budgetModel(rng)
	x := randTensor(rng, n, tl, 4)
	dy := randTensor(rng, n, tl, 5)
	ctx := &Context{PerSampleMemory: (60 + 72) * n} // b and c materialise
	m.Forward(ctx, x)
	m.Backward(ctx, dy)
	plain := HeldBytes(m)
	for range 2 {
		ctx.BeginPerSample(n)
		m.Forward(ctx, x)
		m.Backward(ctx, dy)
		ctx.Finish(make([]float32, n))
		ctx.EndPerSample()
	}
	grams := int64(4 * n * kernels.RowGramLen(tl)) // layer a's
	extra := HeldBytes(m) - plain - ctx.PerSampleBytes() - grams
	if !ls[0].ghost || ls[1].ghost || ls[2].ghost {
		t.Fatalf("ghost %v %v %v, want true false false", ls[0].ghost, ls[1].ghost, ls[2].ghost)
	}
	if extra < 0 || extra > 128*n {
		t.Errorf("a per-sample step holds %d bytes beyond the plain step's, its per-sample gradients (%d) and the ghost layer's Gram matrices (%d): want at most %d", extra+ctx.PerSampleBytes()+grams, ctx.PerSampleBytes(), grams, 128*n)
	}
}

// TestPerSampleMemoryPlanIsStable checks that a run's results do not
// depend on when its plan was made: a context's first step (a fresh run, or
// one resumed) gives the same bits as a step of a context that planned
// before, whether the per-sample mode begins before or after Forward, and
// a forward pass of another batch size in between (evaluation) does not
// disturb the plan.
func TestPerSampleMemoryPlanIsStable(t *testing.T) {
	const n, tl = 3, 32
	budget := int64((60 + 72) * n)
	step := func(ctx *Context, m Sequential, x, dy *tensor.Tensor, early bool) ([]float64, [][]float32) {
		for _, p := range m.Params() {
			clear(p.Grad.Data)
		}
		if early {
			ctx.BeginPerSample(n)
		}
		m.Forward(ctx, x)
		if !early {
			ctx.BeginPerSample(n)
		}
		m.Backward(ctx, dy)
		sq := slices.Clone(ctx.SqNorms())
		c := make([]float32, n)
		for i, s := range sq {
			c[i] = float32(1 / (1 + math.Sqrt(s)))
		}
		ctx.Finish(c)
		ctx.EndPerSample()
		var g [][]float32
		for _, p := range m.Params() {
			g = append(g, slices.Clone(p.Grad.Data))
		}
		return sq, g
	}
	rng := rand.New(rand.NewPCG(5, 6))
	m, _ := budgetModel(rng)
	x, dy := randTensor(rng, n, tl, 4), randTensor(rng, n, tl, 5)
	wantSq, wantG := step(&Context{PerSampleMemory: budget}, m, x, dy, true)
	for _, early := range []bool{true, false} {
		ctx := &Context{PerSampleMemory: budget}
		for k := range 3 {
			if k == 1 {
				m.Forward(ctx, randTensor(rng, 5, tl, 4)) // evaluation
			}
			sq, g := step(ctx, m, x, dy, early)
			if !slices.Equal(sq, wantSq) {
				t.Errorf("begun before Forward %v, step %d: norms %v, a fresh context's first step %v", early, k, sq, wantSq)
			}
			for j := range g {
				if !slices.Equal(g[j], wantG[j]) {
					t.Errorf("begun before Forward %v, step %d: parameter %d's gradient differs from a fresh context's first step", early, k, j)
				}
			}
			if ctx.PerSampleBytes() != (60+72)*n {
				t.Errorf("begun before Forward %v, step %d: PerSampleBytes %d, want %d", early, k, ctx.PerSampleBytes(), (60+72)*n)
			}
		}
	}
}

// BenchmarkRuleCost measures what the plan's constant passCost stands for:
// per shape (GPT's Linear layers at T 64 and 256, batch 8), one layer's
// forward pass, backward pass and Finish in the plain mode, with ghost
// norms and with materialised gradients, interleaved, and reports the
// constant that would make the rule's two costs, gram flops against
// passCost·in·out, as far apart as the measured extra times of the two
// per-sample modes over the plain one ("pass-cost", GEMM flops a float of
// per-sample gradient).
func BenchmarkRuleCost(b *testing.B) {
	const n = 8
	for _, s := range []struct{ t, in, out int }{
		{64, 128, 128}, {64, 128, 384}, {64, 128, 512}, {64, 512, 128},
		{256, 384, 384}, {256, 384, 1152}, {256, 384, 1536}, {256, 1536, 384},
	} {
		b.Run(fmt.Sprintf("T%d-%dx%d", s.t, s.in, s.out), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			l := NewLinear("fc", s.in, s.out, true)
			x, dy := randTensor(rng, n, s.t, s.in), randTensor(rng, n, s.t, s.out)
			c := make([]float32, n)
			for i := range c {
				c[i] = 0.5
			}
			run := func(mode rule, perSample bool) time.Duration {
				start := time.Now()
				ctx := &Context{}
				l.rule = mode
				if perSample {
					ctx.BeginPerSample(n)
				}
				l.Forward(ctx, x)
				l.Backward(ctx, dy)
				if perSample {
					ctx.Finish(c)
				}
				return time.Since(start)
			}
			var plain, ghost, mat time.Duration
			for i := 0; b.Loop(); i++ {
				for j := range 3 {
					switch (i + j) % 3 {
					case 0:
						plain += run(ruleAuto, false)
					case 1:
						ghost += run(ruleGhost, true)
					case 2:
						mat += run(ruleMaterialise, true)
					}
				}
			}
			gram := l.offer(n, s.t).gram
			g := float64(s.in) * float64(s.out)
			b.ReportMetric(gram*float64(mat-plain)/(float64(ghost-plain)*g), "pass-cost")
			b.ReportMetric(float64(ghost-plain)/float64(plain), "ghost-extra")
			b.ReportMetric(float64(mat-plain)/float64(plain), "mat-extra")
		})
	}
}
