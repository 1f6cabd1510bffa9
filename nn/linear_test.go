package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/psclip/psclip/kernels"
	"github.com/psclip/psclip/tensor"
)

func TestLinearGrad(t *testing.T) {
	for _, tc := range []struct {
		name  string
		shape []int
		bias  bool
	}{
		{"2d", []int{3, 5}, true},
		{"2d-nobias", []int{3, 5}, false},
		{"3d", []int{2, 4, 5}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			l := NewLinear("fc", 5, 6, tc.bias)
			randomize(rng, l, 0.5)
			checkGrad(t, l, randTensor(rng, tc.shape...), gradOpt{})
		})
	}
}

func TestLinearPerSample(t *testing.T) {
	for _, tc := range []struct {
		name  string
		shape []int
		rule  rule
	}{
		{"2d", []int{5, 7}, ruleAuto},
		{"3d-ghost", []int{4, 3, 7}, ruleGhost},
		{"3d-materialise", []int{4, 3, 7}, ruleMaterialise},
		{"3d-auto-long", []int{4, 9, 7}, ruleAuto}, // 7·6 ≤ 9·13: materialises
		{"3d-mixed", []int{3, 37, 7}, ruleMixed},
	} {
		for _, bias := range []bool{true, false} {
			t.Run(tc.name, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(5, 6))
				l := NewLinear("fc", 7, 6, bias)
				l.rule = tc.rule
				randomize(rng, l, 0.5)
				x := randTensor(rng, tc.shape...)
				// Two layers, so the per-sample rule also sees a
				// propagated output gradient.
				l2 := NewLinear("fc2", 6, 3, true)
				randomize(rng, l2, 0.5)
				m := Sequential{l, l2}
				out := append(append([]int(nil), tc.shape[:len(tc.shape)-1]...), 3)
				checkPerSample(t, m, x, ids(tc.shape[0]), squareLoss(randTensor(rng, out...)), medianClip)
			})
		}
	}
}

// The automatic rule on the Linear shapes of the models it serves, and the
// mixed rule it replaces (TestConv2dRule covers the convolutions).
func TestRuleChoose(t *testing.T) {
	for _, tc := range []struct {
		name        string
		t, in, out  int
		auto, mixed bool // ghost?
	}{
		{"alexnet classifier.1", 1, 9216, 4096, true, true},
		{"gpt c_attn", 64, 128, 384, true, true},
		{"gpt c_fc", 64, 128, 512, true, true},
		{"gpt c_proj", 64, 128, 128, false, true},
		{"gpt lm_head", 64, 128, 65, false, true},
		{"short sequence", 2, 64, 64, true, true},
		{"long sequence, narrow layer", 256, 32, 32, false, false},
	} {
		gram := 2 * float64(tc.t*tc.t) * float64(tc.in+tc.out)
		if got := ruleAuto.choose(tc.t, tc.in, tc.out, gram); got != tc.auto {
			t.Errorf("%s: auto ghost = %v, want %v", tc.name, got, tc.auto)
		}
		if got := ruleMixed.choose(tc.t, tc.in, tc.out, gram); got != tc.mixed {
			t.Errorf("%s: mixed ghost = %v, want %v", tc.name, got, tc.mixed)
		}
	}
}

// A sample excluded with factor 0 must not leak its NaN into the gradient.
func TestLinearExcludedSampleNaN(t *testing.T) {
	for _, r := range []rule{ruleGhost, ruleMaterialise} {
		rng := rand.New(rand.NewPCG(9, 9))
		l := NewLinear("fc", 4, 3, true)
		l.rule = r
		randomize(rng, l, 1)
		x := randTensor(rng, 3, 2, 4)
		x.Data[2*4+1] = float32(math.NaN()) // sample 1
		ctx := &Context{}
		l.Forward(ctx, x)
		dy := randTensor(rng, 3, 2, 3)
		ctx.BeginPerSample(3)
		l.Backward(ctx, dy)
		if sq := ctx.SqNorms(); !math.IsNaN(sq[1]) || math.IsNaN(sq[0]) || math.IsNaN(sq[2]) {
			t.Fatalf("rule %d: norms %v, want NaN only for sample 1", r, sq)
		}
		ctx.Finish([]float32{1, 0, 1})
		for _, p := range l.Params() {
			for _, g := range p.Grad.Data {
				if math.IsNaN(float64(g)) {
					t.Fatalf("rule %d: %s has NaN after excluding the NaN sample", r, p.Name)
				}
			}
		}
	}
}

func TestLinearNoInputGrad(t *testing.T) {
	l := NewLinear("fc", 2, 2, false)
	l.NoInputGrad = true
	ctx := &Context{}
	l.Forward(ctx, tensor.New(1, 2))
	if dx := l.Backward(ctx, tensor.New(1, 2)); dx != nil {
		t.Fatalf("NoInputGrad: Backward returned %v", dx)
	}
}

// TestLinearForwardTransposed checks that a Forward of fewer rows than
// outputs, computed as (W·xᵀ)ᵀ, gives the bits of x·Wᵀ + b (the GEMM the
// other Forwards run), on shapes that cut the GEMM's tiles and blocks.
func TestLinearForwardTransposed(t *testing.T) {
	for _, tc := range []struct {
		name          string
		rows, in, out int
		bias          bool
	}{
		{"one-row", 1, 7, 9, true},
		{"edges", 13, 300, 37, true},
		{"nobias", 5, 64, 100, false},
		{"classifier", 64, 1100, 520, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			l := NewLinear("fc", tc.in, tc.out, tc.bias)
			randomize(rng, l, 0.5)
			x := randTensor(rng, tc.rows, tc.in)
			y := l.Forward(&Context{}, x)
			want := make([]float32, tc.rows*tc.out)
			kernels.Sgemm(false, true, tc.rows, tc.out, tc.in, 1, x.Data, tc.in, l.Weight.Value.Data, tc.in, 0, want, tc.out)
			for r := range tc.rows {
				for j := range tc.out {
					if l.Bias != nil {
						want[r*tc.out+j] += l.Bias.Value.Data[j]
					}
					if got := y.Data[r*tc.out+j]; math.Float32bits(got) != math.Float32bits(want[r*tc.out+j]) {
						t.Fatalf("y[%d,%d] = %v, want %v", r, j, got, want[r*tc.out+j])
					}
				}
			}
		})
	}
}

// benchLinear times one forward and backward pass of AlexNet-CIFAR's first
// classifier layer (9216→4096) on a batch of 16, plain or per-sample.
func benchLinear(b *testing.B, perSample bool) {
	rng := rand.New(rand.NewPCG(1, 1))
	l := NewLinear("fc", 9216, 4096, true)
	InitDefault(rng, l.Weight, l.Bias)
	x := randTensor(rng, 16, 9216)
	dy := randTensor(rng, 16, 4096)
	f := make([]float32, 16)
	for i := range f {
		f[i] = 1
	}
	ctx := &Context{}
	for b.Loop() {
		l.Forward(ctx, x)
		if perSample {
			ctx.BeginPerSample(16)
		}
		l.Backward(ctx, dy)
		if perSample {
			ctx.Finish(f)
			ctx.EndPerSample()
		}
	}
}

func BenchmarkLinearPlain(b *testing.B)     { benchLinear(b, false) }
func BenchmarkLinearPerSample(b *testing.B) { benchLinear(b, true) }
