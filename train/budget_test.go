package train_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"runtime"
	"runtime/metrics"
	"slices"
	"testing"

	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/models"
	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/optim"
	"github.com/psclip/psclip/setting"
	"github.com/psclip/psclip/tensor"
	"github.com/psclip/psclip/train"
)

// TestPerSampleMemory trains a small GPT whose Linear layers see T = 32
// positions under per-sample memory budgets: the bytes the step
// materialised stay within each budget, and the update is the layer
// rule's up to the order of float32 additions.
func TestPerSampleMemory(t *testing.T) {
	cfg := models.GPTConfig{NLayer: 1, NHead: 2, NEmbd: 8, BlockSize: 32, VocabSize: 7}
	const b = 3
	rng := rand.New(rand.NewPCG(1, 2))
	x := tensor.New(b, cfg.BlockSize)
	y := make([]int32, b*cfg.BlockSize)
	for i := range y {
		x.Data[i], y[i] = float32(rng.IntN(cfg.VocabSize)), int32(rng.IntN(cfg.VocabSize))
	}
	step := func(budget int64) ([]float32, int64) {
		m, err := models.NewGPT(cfg, 1)
		if err != nil {
			t.Fatal(err)
		}
		opt, err := optim.NewSGD(m.Params(), optim.SGDConfig{LR: 0.1})
		if err != nil {
			t.Fatal(err)
		}
		ps, err := estimator.Spec{Estimator: "ps-clip-sgd", Clip: 0.5}.New()
		if err != nil {
			t.Fatal(err)
		}
		tr, err := train.New(train.Config{Model: m, Loss: nn.CrossEntropy, Estimator: ps, Optimizer: opt, PerSampleMemory: budget})
		if err != nil {
			t.Fatal(err)
		}
		st, err := tr.Step(train.Batch{X: x, Y: y})
		if err != nil {
			t.Fatal(err)
		}
		var w []float32
		for _, p := range m.Params() {
			w = append(w, p.Value.Data...)
		}
		return w, st.PerSampleBytes
	}
	want, _ := step(0)
	_, all := step(math.MaxInt64)
	if all == 0 {
		t.Fatal("an unbounded budget materialised nothing: the test's shapes do not exercise the plan")
	}
	for _, budget := range []int64{nn.NoMaterialise, all / 3, all / 2, all, math.MaxInt64} {
		w, spent := step(budget)
		if spent < 0 || (budget > 0 && spent > budget) || (budget < 0 && spent != 0) {
			t.Errorf("budget %d: %d bytes materialised", budget, spent)
		}
		for i := range w {
			if d := math.Abs(float64(w[i] - want[i])); d > 1e-6*(1+math.Abs(float64(want[i]))) {
				t.Errorf("budget %d: weight %d is %v, the layer rule's %v", budget, i, w[i], want[i])
				break
			}
		}
	}
}

func TestParseMemoryBudget(t *testing.T) {
	for _, tc := range []struct {
		in    string
		want  train.MemoryBudget
		bytes int64 // Bytes(1000)
		str   string
	}{
		{"auto", train.MemoryBudget{Auto: true}, 0, "auto"},
		{"1.3x", train.MemoryBudget{Ratio: 1.3}, 300, "1.3x"},
		{"none", train.MemoryBudget{Size: nn.NoMaterialise}, nn.NoMaterialise, "none"},
		{"0", train.MemoryBudget{Size: nn.NoMaterialise}, nn.NoMaterialise, "none"},
		{"0MiB", train.MemoryBudget{Size: nn.NoMaterialise}, nn.NoMaterialise, "none"},
		{"300000000", train.MemoryBudget{Size: 300000000}, 300000000, "300000000"},
		{"512MiB", train.MemoryBudget{Size: 512 << 20}, 512 << 20, "512MiB"},
		{"1.5GB", train.MemoryBudget{Size: 1500000000}, 1500000000, "1500000000"},
		{"2kB", train.MemoryBudget{Size: 2000}, 2000, "2000"},
		{"4096", train.MemoryBudget{Size: 4096}, 4096, "4KiB"},
		{"7B", train.MemoryBudget{Size: 7}, 7, "7"},
		{"1.35x", train.MemoryBudget{Ratio: 1.35}, 350, "1.35x"},
		{"1x", train.MemoryBudget{Ratio: 1}, nn.NoMaterialise, "1x"},
		{"1.0005x", train.MemoryBudget{Ratio: 1.0005}, nn.NoMaterialise, "1.0005x"}, // 0.5 byte of 1000
	} {
		got, err := train.ParseMemoryBudget(tc.in)
		if err != nil || got != tc.want || got.Bytes(1000) != tc.bytes || got.String() != tc.str {
			t.Errorf("%q: %+v (Bytes(1000) %d, %q), %v; want %+v (%d, %q)", tc.in, got, got.Bytes(1000), got.String(), err, tc.want, tc.bytes, tc.str)
		}
		if again, err := train.ParseMemoryBudget(got.String()); err != nil || again.Bytes(1000) != tc.bytes {
			t.Errorf("%q: its String %q reads back as %+v, %v", tc.in, got.String(), again, err)
		}
	}
	for _, in := range []string{"", "Auto", "-1", "-1MiB", "0.5x", "NaNx", "Infx", "1e30GiB", "NaN", "Inf", "12 MiB", "12mb", "x", "MiB", "1.35"} {
		_, err := train.ParseMemoryBudget(in)
		var se *setting.Error
		if !errors.As(err, &se) || se.Field != "PerSampleMemory" {
			t.Errorf("%q: %v, want a *setting.Error for PerSampleMemory", in, err)
		}
	}
	// The zero value is the default ratio of the measured plain step.
	if def := (train.MemoryBudget{}); def.Bytes(1000) != 300 || def.String() != "1.3x" || !def.Measured() {
		t.Errorf("the zero budget: Bytes(1000) %d, %q, measured %v; want 300, \"1.3x\", true", def.Bytes(1000), def.String(), def.Measured())
	}
	for _, m := range []train.MemoryBudget{{Auto: true}, {Size: nn.NoMaterialise}, {Size: 1 << 20}} {
		if m.Measured() {
			t.Errorf("%v needs no plain step's measure, but says it does", m)
		}
	}
	if b := (train.MemoryBudget{Ratio: 3}).Bytes(math.MaxInt64); b != math.MaxInt64 {
		t.Errorf("a ratio of a huge plain step: %d bytes, want MaxInt64", b)
	}
}

// TestPlainStepBytes measures the plain step of a GPT, AlexNet (scaled
// down, with dropout), the tanh CNN and the small CNN on fresh models at
// one and three threads: the same figure at both, again on a second
// measure, at least the models' lower bound (TrainingBytes), and the
// gradients left zero; the GPT's, large enough for the runtime's own
// memory not to matter, within 10 % of what the Go runtime finds live
// after the step.
func TestPlainStepBytes(t *testing.T) {
	images := func(b, c, side, classes int) train.Batch {
		x := tensor.New(b, c, side, side)
		y := make([]int32, b)
		for i := range x.Data {
			x.Data[i] = float32(i%7) - 3
		}
		for i := range y {
			y[i] = int32(i % classes)
		}
		return train.Batch{X: x, Y: y}
	}
	gpt := models.GPTConfig{NLayer: 2, NHead: 2, NEmbd: 128, BlockSize: 128, VocabSize: 11, Dropout: 0.1}
	alex := models.AlexNetConfig{Classes: 10, WidthDiv: 8, Dropout: 0.5}
	for _, tc := range []struct {
		name  string
		build func() (nn.Layer, error)
		batch train.Batch
		lower float64
	}{
		{"gpt", func() (nn.Layer, error) { return models.NewGPT(gpt, 1) }, func() train.Batch {
			x := tensor.New(8, gpt.BlockSize)
			y := make([]int32, x.Len())
			for i := range y {
				x.Data[i], y[i] = float32(i%gpt.VocabSize), int32((i+1)%gpt.VocabSize)
			}
			return train.Batch{X: x, Y: y}
		}(), gpt.TrainingBytes(8, 1)},
		{"alexnet", func() (nn.Layer, error) { return models.NewAlexNet(alex, 1) }, images(6, 3, 32, 10), alex.TrainingBytes(6, 1)},
		{"tanh-cnn", func() (nn.Layer, error) { return models.NewTanhCNN(models.DefaultTanhCNN, 1) }, images(7, 1, 28, 10), models.DefaultTanhCNN.TrainingBytes(7, 1)},
		{"small-cnn", func() (nn.Layer, error) { return models.NewSmallCNN(models.DefaultSmallCNN, 1) }, images(4, 1, 32, 10), models.DefaultSmallCNN.TrainingBytes(4, 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			measure := func(procs int) (bytes, live int64) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				live0 := liveHeap()
				m, err := tc.build()
				if err != nil {
					t.Fatal(err)
				}
				opt, err := optim.NewSGD(nn.Trainable(m.Params()), optim.SGDConfig{LR: 0.1, Momentum: 0.9})
				if err != nil {
					t.Fatal(err)
				}
				cfg := train.Config{Model: m, Loss: nn.CrossEntropy, Optimizer: opt}
				if bytes, err = train.PlainStepBytes(cfg, tc.batch); err != nil {
					t.Fatal(err)
				}
				live = liveHeap() - live0
				if again, err := train.PlainStepBytes(cfg, tc.batch); err != nil || again != bytes {
					t.Errorf("GOMAXPROCS %d: measured %d bytes, then %d (%v)", procs, bytes, again, err)
				}
				for _, p := range nn.Trainable(m.Params()) {
					if slices.ContainsFunc(p.Grad.Data, func(v float32) bool { return v != 0 }) {
						t.Fatalf("GOMAXPROCS %d: %s's gradient is not zero after the measure", procs, p.Name)
					}
				}
				runtime.KeepAlive(opt)
				return bytes, live
			}
			one, live := measure(1)
			if three, _ := measure(3); three != one {
				t.Errorf("%d bytes at one thread, %d at three", one, three)
			}
			if float64(one) < tc.lower {
				t.Errorf("%d bytes measured, under the lower bound %.0f", one, tc.lower)
			}
			if d := math.Abs(float64(one - live)); tc.name == "gpt" && d > 0.1*float64(live) {
				t.Errorf("%d bytes measured, the runtime found %d live", one, live)
			}
		})
	}
}

// liveHeap is the Go heap's live bytes after a collection.
func liveHeap() int64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// TestMemoryBudgetFor: the default budget of a per-sample trainer is
// 0.3 times the plain step measured on its model (the same at one thread
// and at three), and what it plans holds its per-sample gradients within
// it; a budget stated in bytes, auto and none are taken as they are, and
// a trainer that forms no per-sample gradients gets none by default.
func TestMemoryBudgetFor(t *testing.T) {
	cfg := models.GPTConfig{NLayer: 1, NHead: 2, NEmbd: 16, BlockSize: 32, VocabSize: 7}
	x := tensor.New(3, cfg.BlockSize)
	y := make([]int32, x.Len())
	for i := range y {
		x.Data[i], y[i] = float32(i%cfg.VocabSize), int32((i+3)%cfg.VocabSize)
	}
	b := train.Batch{X: x, Y: y}
	config := func(name string) train.Config {
		m, err := models.NewGPT(cfg, 1)
		if err != nil {
			t.Fatal(err)
		}
		opt, err := optim.NewSGD(m.Params(), optim.SGDConfig{LR: 0.1})
		if err != nil {
			t.Fatal(err)
		}
		e, err := estimator.Spec{Estimator: name, Clip: 0.5}.Trim().New()
		if err != nil {
			t.Fatal(err)
		}
		return train.Config{Model: m, Loss: nn.CrossEntropy, Estimator: e, Optimizer: opt}
	}
	budgetAt := func(procs int, m train.MemoryBudget, name string) (int64, train.Config) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		c := config(name)
		got, err := m.For(c, b)
		if err != nil {
			t.Fatal(err)
		}
		return got, c
	}
	got, c := budgetAt(1, train.MemoryBudget{}, "ps-clip-sgd")
	plain, err := train.PlainStepBytes(config("sgd"), b)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(0.3 * float64(plain)); got != want || got <= 0 {
		t.Errorf("the default budget: %d bytes, want 0.3 × the plain step's %d = %d", got, plain, want)
	}
	if three, _ := budgetAt(3, train.MemoryBudget{}, "ps-clip-sgd"); three != got {
		t.Errorf("the default budget: %d bytes at one thread, %d at three", got, three)
	}
	c.PerSampleMemory = got
	tr, err := train.New(c)
	if err != nil {
		t.Fatal(err)
	}
	st, err := tr.Step(b)
	if err != nil {
		t.Fatal(err)
	}
	if st.PerSampleBytes <= 0 || st.PerSampleBytes > got {
		t.Errorf("the default budget of %d bytes: the step materialised %d", got, st.PerSampleBytes)
	}
	for _, tc := range []struct {
		m    train.MemoryBudget
		est  string
		want int64
	}{
		{train.MemoryBudget{Size: 1 << 20}, "ps-clip-sgd", 1 << 20},
		{train.MemoryBudget{Size: nn.NoMaterialise}, "ps-clip-sgd", nn.NoMaterialise},
		{train.MemoryBudget{Auto: true}, "ps-clip-sgd", 0},
		{train.MemoryBudget{Ratio: 1.5}, "ps-clip-sgd", plain / 2},
		{train.MemoryBudget{}, "sgd", 0},
		{train.MemoryBudget{Auto: true}, "sgd", 0},
		{train.MemoryBudget{Size: 1 << 20}, "sgd", 1 << 20}, // for New to refuse
	} {
		if got, _ := budgetAt(2, tc.m, tc.est); got != tc.want {
			t.Errorf("%v with %s: %d bytes, want %d", tc.m, tc.est, got, tc.want)
		}
	}
}
