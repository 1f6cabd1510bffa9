package train_test

import (
	"errors"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/models"
	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/optim"
	"github.com/psclip/psclip/setting"
	"github.com/psclip/psclip/tensor"
	"github.com/psclip/psclip/train"
)

// snapshot copies every parameter value and the optimizer's state.
func snapshot(params []*nn.Param, opt optim.Optimizer) []float32 {
	var s []float32
	for _, p := range params {
		s = append(s, p.Value.Data...)
	}
	st := opt.State()
	s = append(s, float32(st.Steps))
	for _, k := range slices.Sorted(maps.Keys(st.Tensors)) {
		s = append(s, st.Tensors[k].Data...)
	}
	return s
}

// estimators builds one of every estimator by name, fresh.
func estimators(t *testing.T) map[string]func() estimator.Estimator {
	must := func(e estimator.Estimator, err error) estimator.Estimator {
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	return map[string]func() estimator.Estimator{
		"sgd":         func() estimator.Estimator { return estimator.SGD{} },
		"clip-sgd":    func() estimator.Estimator { return must(estimator.Spec{Estimator: "clip-sgd", Clip: 0.5}.New()) },
		"nsgd":        func() estimator.Estimator { return estimator.NSGD{} },
		"ps-clip-sgd": func() estimator.Estimator { return must(estimator.Spec{Estimator: "ps-clip-sgd", Clip: 0.5}.New()) },
		"ps-clip-sgd α·k^1/β": func() estimator.Estimator {
			return must(estimator.Spec{Estimator: "ps-clip-sgd", Alpha: 0.1, Beta: 1.5}.New())
		},
		"ps-clip-auto":     func() estimator.Estimator { return must(estimator.Spec{Estimator: "ps-clip-auto"}.New()) },
		"ps-clip-quantile": func() estimator.Estimator { return must(estimator.Spec{Estimator: "ps-clip-quantile"}.New()) },
		"auto-clip":        func() estimator.Estimator { return must(estimator.Spec{Estimator: "auto-clip"}.New()) },
	}
}

// Step refuses every malformed micro-batch with a typed error and changes
// nothing: not the parameters, not the optimizer's state (momentum, weight
// decay, step count), for every estimator. An empty micro-batch is one of
// them. A good step afterwards works.
func TestStepRefusesBadBatches(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	good := batch(rng, 4)
	seq := train.Batch{X: tensor.New(2, 3, 5), Y: make([]int32, 6)} // a sequence input Linear accepts
	tests := []struct {
		name    string
		batches []train.Batch
	}{
		{"no micro-batch", nil},
		{"nil input", []train.Batch{{Y: []int32{0}}}},
		{"empty micro-batch", []train.Batch{{X: tensor.New(0, 5)}}},
		{"empty second micro-batch", []train.Batch{good, {X: tensor.New(0, 5)}}},
		{"1-D input", []train.Batch{{X: tensor.New(5), Y: []int32{0}}}},
		{"scalar input", []train.Batch{{X: &tensor.Tensor{Data: []float32{1}}, Y: []int32{0}}}},
		{"wrong width", []train.Batch{{X: tensor.New(4, 6), Y: make([]int32, 4)}}},
		{"wrong rank", []train.Batch{{X: tensor.New(2, 1, 1, 5), Y: make([]int32, 2)}}},
		{"data shorter than the shape", []train.Batch{{X: &tensor.Tensor{Shape: []int{2, 5}, Data: make([]float32, 7)}, Y: make([]int32, 2)}}},
		{"negative dimension", []train.Batch{{X: &tensor.Tensor{Shape: []int{-2, 5}}, Y: nil}}},
		{"overflowing shape", []train.Batch{{X: &tensor.Tensor{Shape: []int{1 << 62, 1 << 62, 5}}, Y: nil}}},
		{"micro-batches disagree", []train.Batch{good, seq}},
		{"too few targets", []train.Batch{{X: good.X, Y: good.Y[:3]}}},
		{"too many targets", []train.Batch{good, {X: good.X, Y: append(slices.Clone(good.Y), 0)}}},
		{"nil targets", []train.Batch{{X: good.X}}},
		{"target out of range", []train.Batch{good, {X: good.X, Y: []int32{0, 1, 3, 2}}}},
		{"negative target", []train.Batch{{X: good.X, Y: []int32{0, -1, 2, 2}}}},
	}
	for name, mk := range estimators(t) {
		for _, scope := range scopes(mk()) {
			model := mlp(1)
			opt, err := optim.NewSGD(model.Params(), optim.SGDConfig{LR: 0.1, Momentum: 0.9, WeightDecay: 0.1})
			if err != nil {
				t.Fatal(err)
			}
			tr, err := train.New(train.Config{Model: model, Loss: nn.CrossEntropy, Estimator: mk(), Optimizer: opt, Scope: scope})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tr.Step(good); err != nil { // momentum buffers exist from here on
				t.Fatal(err)
			}
			for _, tc := range tests {
				before := snapshot(model.Params(), opt)
				st, err := tr.Step(tc.batches...)
				var be *train.BatchError
				if !errors.As(err, &be) && !errors.Is(err, train.ErrNoBatches) {
					t.Errorf("%s, %v, %s: error %v (%T), stats %+v: want a *train.BatchError", name, scope, tc.name, err, err, st)
				}
				if !slices.Equal(snapshot(model.Params(), opt), before) {
					t.Errorf("%s, %v, %s: a refused step changed the parameters or the optimizer", name, scope, tc.name)
				}
			}
			if _, err := tr.Step(good, good); err != nil {
				t.Errorf("%s, %v: a good step after refused ones: %v", name, scope, err)
			}
		}
	}
}

// A convolutional model: a missing channel dimension or an image too small
// for the kernel is refused, as is a sample shape that differs between
// micro-batches although each alone would fit.
func TestStepRefusesBadImages(t *testing.T) {
	model := nn.Sequential{nn.NewConv2d("c", 3, 4, 3, 1, 0, true), &nn.ReLU{}, nn.NewMaxPool2d(2, 2),
		nn.NewAdaptiveAvgPool2d(2, 2), &nn.Flatten{}, nn.NewLinear("fc", 16, 3, true)}
	opt, _ := optim.NewSGD(model.Params(), optim.SGDConfig{LR: 0.1})
	tr, err := train.New(train.Config{Model: model, Loss: nn.CrossEntropy, Estimator: estimator.SGD{}, Optimizer: opt})
	if err != nil {
		t.Fatal(err)
	}
	img := func(b, c, h, w int) train.Batch { return train.Batch{X: tensor.New(b, c, h, w), Y: make([]int32, b)} }
	for _, tc := range []struct {
		name    string
		batches []train.Batch
	}{
		{"missing channel dimension", []train.Batch{{X: tensor.New(2, 8, 8), Y: make([]int32, 2)}}},
		{"wrong channels", []train.Batch{img(2, 1, 8, 8)}},
		{"too small for the kernel", []train.Batch{img(2, 3, 2, 8)}},
		{"too small for the pool", []train.Batch{img(2, 3, 3, 3)}},
		{"sizes differ between micro-batches", []train.Batch{img(2, 3, 8, 8), img(2, 3, 9, 9)}},
	} {
		before := snapshot(model.Params(), opt)
		_, err := tr.Step(tc.batches...)
		var be *train.BatchError
		if !errors.As(err, &be) {
			t.Errorf("%s: error %v, want a *train.BatchError", tc.name, err)
		}
		if !slices.Equal(snapshot(model.Params(), opt), before) {
			t.Errorf("%s: changed the parameters", tc.name)
		}
	}
	if _, err := tr.Step(img(2, 3, 8, 8), img(1, 3, 8, 8)); err != nil {
		t.Error(err)
	}
}

// FuzzStep feeds Step arbitrary shapes, data and targets: it never panics,
// and a refused step changes nothing.
func FuzzStep(f *testing.F) {
	f.Add([]byte{2, 4, 5, 0, 1, 2, 0}, uint8(0))
	f.Add([]byte{1, 0, 5}, uint8(1))
	f.Add([]byte{3, 2, 3, 5, 1, 1, 1, 1, 1, 1}, uint8(2))
	f.Add([]byte{0}, uint8(3))
	f.Add([]byte{2, 3, 5, 9, 9, 9}, uint8(4))
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		model := mlp(1)
		opt, _ := optim.NewSGD(model.Params(), optim.SGDConfig{LR: 0.1, Momentum: 0.9})
		names := []string{"sgd", "clip-sgd", "ps-clip-sgd"}
		e, _ := estimator.Spec{Estimator: names[int(which)%3], Clip: 1}.Trim().New()
		ss := scopes(e) // the scopes that have an effect with e
		tr, err := train.New(train.Config{Model: model, Loss: nn.CrossEntropy, Estimator: e, Optimizer: opt, Scope: ss[int(which/3)%len(ss)]})
		if err != nil {
			t.Fatal(err)
		}
		var batches []train.Batch
		for len(data) > 0 && len(batches) < 3 {
			rank := int(data[0]) % 5
			data = data[1:]
			shape := make([]int, 0, rank)
			for range rank {
				if len(data) == 0 {
					break
				}
				shape = append(shape, int(data[0])%8)
				data = data[1:]
			}
			x := &tensor.Tensor{Shape: shape, Data: make([]float32, min(tensor.Numel(shape), 64))}
			var y []int32
			for i := 0; i < len(data) && i < 8; i++ {
				y = append(y, int32(int8(data[i]))%5)
			}
			batches = append(batches, train.Batch{X: x, Y: y})
		}
		before := snapshot(model.Params(), opt)
		if _, err := tr.Step(batches...); err != nil && !slices.Equal(snapshot(model.Params(), opt), before) {
			t.Fatalf("refused step (%v) changed the parameters", err)
		}
	})
}

// failingLoss is nn.CrossEntropy until fail is set.
type failingLoss struct{ fail bool }

func (l *failingLoss) loss(out *tensor.Tensor, y []int32) ([]float32, *tensor.Tensor, error) {
	if l.fail {
		return nil, nil, errors.New("the loss failed")
	}
	return nn.CrossEntropy(out, y)
}

// An MB-Clip step that fails on a later micro-batch leaves nothing behind:
// the next step's update is that of a fresh trainer.
func TestFailedMicroBatchStepLeavesNoRunningSum(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	a, b := batch(rng, 4), batch(rng, 4)
	for _, scope := range []train.Scope{train.MicroBatch, train.MicroBatchMean} {
		model := mlp(7)
		clip, _ := estimator.NewClipSGD(1)
		fresh, freshOpt := newTrainer(t, model, clip, scope)
		if _, err := fresh.Step(a, b); err != nil {
			t.Fatal(err)
		}
		want := flatten(freshOpt.got)

		fl := &failingLoss{}
		opt := &captureOpt{params: model.Params()}
		calls := 0
		loss := func(out *tensor.Tensor, y []int32) ([]float32, *tensor.Tensor, error) {
			calls++
			fl.fail = calls == 2 // the second micro-batch fails
			return fl.loss(out, y)
		}
		tr, err := train.New(train.Config{Model: model, Loss: loss, Estimator: clip, Optimizer: opt, Scope: scope})
		if err != nil {
			t.Fatal(err)
		}
		_, err = tr.Step(b, a, b)
		var be *train.BatchError
		if !errors.As(err, &be) || be.Batch != 1 {
			t.Fatalf("%v: error %v, want a *train.BatchError for micro-batch 1", scope, err)
		}
		if opt.steps != 0 {
			t.Fatalf("%v: the failed step reached the optimizer", scope)
		}
		if _, err := tr.Step(a, b); err != nil {
			t.Fatal(err)
		}
		assertClose(t, flatten(opt.got), want, 1e-6)
	}
}

// K micro-batches give the update of one batch of the same samples in the
// same order, for every estimator in Global scope (the others clip per
// micro-batch, and New refuses them where Scale is the identity): the
// increasing threshold's k runs over the whole step, and the adaptive
// estimators learn once per step. ps-clip-auto and
// ps-clip-quantile without an initial γ are compared after their warm-up.
func TestMicroBatchesEqualOneBatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	var steps [][]train.Batch // 12 steps of 4 micro-batches of 8
	for range 12 {
		var mbs []train.Batch
		for range 4 {
			mbs = append(mbs, batch(rng, 8))
		}
		steps = append(steps, mbs)
	}
	join := func(mbs []train.Batch) train.Batch {
		var x []float32
		var y []int32
		for _, b := range mbs {
			x = append(x, b.X.Data...)
			y = append(y, b.Y...)
		}
		return train.Batch{X: tensor.From(x, len(y), 5), Y: y}
	}
	for name, mk := range estimators(t) {
		model := mlp(8)
		one, optOne := newTrainer(t, model, mk(), train.Global)
		acc, optAcc := newTrainer(t, model, mk(), train.Global)
		for i, mbs := range steps {
			stOne, err := one.Step(join(mbs))
			if err != nil {
				t.Fatal(err)
			}
			want := flatten(optOne.got)
			stAcc, err := acc.Step(mbs...)
			if err != nil {
				t.Fatal(err)
			}
			if i < 10 && (name == "ps-clip-auto" || name == "ps-clip-quantile") {
				continue // the warm-up: a median of each micro-batch's norms
			}
			assertClose(t, flatten(optAcc.got), want, 1e-5)
			if stOne.Clipped != stAcc.Clipped || math.Abs(stOne.Loss-stAcc.Loss) > 1e-6 {
				t.Errorf("%s: one batch %+v, micro-batches %+v", name, stOne, stAcc)
			}
			if name == "ps-clip-sgd α·k^1/β" && (stOne.Clipped == 0 || stOne.Clipped == 32) {
				t.Errorf("%s: %d of 32 clipped: the test needs both kinds", name, stOne.Clipped)
			}
		}
	}
}

// Stats summarises the per-sample norms (against the brute force), keeps
// them on request without allocating more, and reports group norms.
func TestStatsNorms(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 12))
	b := batch(rng, 11)
	model := mlp(9)
	var norms []float64
	for _, g := range sampleGrads(t, model, b) {
		norms = append(norms, norm(g))
	}
	sorted := slices.Sorted(slices.Values(norms))
	ps, _ := estimator.Spec{Estimator: "ps-clip-sgd", Clip: 1}.New()
	opt := &captureOpt{params: model.Params()}
	groups := [][]*nn.Param{model[0].Params(), model[2].Params()}
	cfg := train.Config{Model: model, Loss: nn.CrossEntropy, Estimator: ps, Optimizer: opt, KeepNorms: true, Groups: groups}
	tr, err := train.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	st, err := tr.Step(b)
	if err != nil {
		t.Fatal(err)
	}
	// 11 norms: the median is the 6th, the 90th percentile the 10th.
	want := train.NormSummary{Min: sorted[0], Median: sorted[5], P90: sorted[9], Max: sorted[10]}
	got := st.SampleNorms
	for _, p := range [][2]float64{{got.Min, want.Min}, {got.Median, want.Median}, {got.P90, want.P90}, {got.Max, want.Max}} {
		if math.Abs(p[0]-p[1]) > 1e-5*p[1] {
			t.Fatalf("summary %+v, brute force %+v", got, want)
		}
	}
	if len(st.Norms) != 11 {
		t.Fatalf("%d norms kept, want 11", len(st.Norms))
	}
	for i, x := range st.Norms {
		if math.Abs(x-norms[i]) > 1e-5*norms[i] {
			t.Fatalf("norm %d = %v, brute force %v", i, x, norms[i])
		}
	}
	var offset int
	for g, ps := range groups {
		var sq float64
		for range ps {
			for _, v := range opt.got[offset] {
				sq += float64(v) * float64(v)
			}
			offset++
		}
		if math.Abs(st.GroupNorms[g]-math.Sqrt(sq)) > 1e-5*math.Sqrt(sq) {
			t.Errorf("group %d norm %v, want %v", g, st.GroupNorms[g], math.Sqrt(sq))
		}
	}
	cfg.KeepNorms, cfg.Groups = false, nil
	plain, _ := train.New(cfg)
	plain.Step(b)
	with := testing.AllocsPerRun(10, func() { tr.Step(b) })
	without := testing.AllocsPerRun(10, func() { plain.Step(b) })
	if with > without {
		t.Errorf("a step allocates %v times with KeepNorms and Groups, %v without", with, without)
	}
	if st, _ := plain.Step(b); st.Norms != nil || st.SampleNorms.Max == 0 {
		t.Errorf("without KeepNorms: norms %v, summary %+v", st.Norms, st.SampleNorms)
	}
}

// New refuses missing, typed-nil and foreign parts, each with a
// *setting.Error naming the field.
func TestNewRefuses(t *testing.T) {
	model := mlp(10)
	other := mlp(11)
	sgd, _ := optim.NewSGD(model.Params(), optim.SGDConfig{LR: 0.1})
	foreign, _ := optim.NewSGD(other.Params(), optim.SGDConfig{LR: 0.1})
	partial, _ := optim.NewSGD(model.Params()[:2], optim.SGDConfig{LR: 0.1})
	empty := &captureOpt{}
	ok := train.Config{Model: model, Loss: nn.CrossEntropy, Estimator: estimator.SGD{}, Optimizer: sgd}
	for _, tc := range []struct {
		name, field string
		edit        func(*train.Config)
	}{
		{"nil model", "Model", func(c *train.Config) { c.Model = nil }},
		{"typed-nil model", "Model", func(c *train.Config) { c.Model = (*nn.Linear)(nil) }},
		{"nil layer inside", "Model", func(c *train.Config) { c.Model = nn.Sequential{model[0], (*nn.ReLU)(nil), model[2]} }},
		{"no parameters", "Model", func(c *train.Config) { c.Model = nn.Sequential{&nn.ReLU{}} }},
		{"nil loss", "Loss", func(c *train.Config) { c.Loss = nil }},
		{"typed-nil estimator", "Estimator", func(c *train.Config) { c.Estimator = (*estimator.PSClip)(nil) }},
		{"nil optimizer", "Optimizer", func(c *train.Config) { c.Optimizer = nil }},
		{"typed-nil optimizer", "Optimizer", func(c *train.Config) { c.Optimizer = (*optim.SGD)(nil) }},
		{"another model's optimizer", "Optimizer", func(c *train.Config) { c.Optimizer = foreign }},
		{"optimizer with no parameters", "Optimizer", func(c *train.Config) { c.Optimizer = empty }},
		{"optimizer over some parameters, none frozen", "Optimizer", func(c *train.Config) { c.Optimizer = partial }},
		{"foreign group", "Groups[0]", func(c *train.Config) { c.Groups = [][]*nn.Param{other.Params()} }},
		{"unknown scope", "Scope", func(c *train.Config) { c.Scope = 7 }},
	} {
		cfg := ok
		tc.edit(&cfg)
		var se *setting.Error
		if tr, err := train.New(cfg); !errors.As(err, &se) || se.Field != tc.field || tr != nil {
			t.Errorf("%s: %v, want a *setting.Error for %s", tc.name, err, tc.field)
		}
	}
}

// New validates the estimator (struct literals that reverse, freeze or
// poison training, which main accepted) and refuses settings that have no
// effect, with a *setting.Error naming the field.
func TestNewRefusesSettings(t *testing.T) {
	model := mlp(10)
	sgd, _ := optim.NewSGD(model.Params(), optim.SGDConfig{LR: 0.1})
	ps, _ := estimator.Spec{Estimator: "ps-clip-sgd", Clip: 1}.New()
	for _, tc := range []struct {
		name  string
		e     estimator.Estimator
		edit  func(*train.Config)
		field string
	}{
		{"ClipSGD{Gamma: -1}", estimator.ClipSGD{Gamma: -1}, nil, "Gamma"},
		{"ClipSGD{}", estimator.ClipSGD{}, nil, "Gamma"},
		{"AutoClip{}", estimator.AutoClip{}, nil, "R"},
		{"zero PSAuto", &estimator.PSAuto{}, nil, "Window"},
		{"zero Threshold", estimator.NewPSClip(estimator.Threshold{}), nil, "Gamma"},
		{"MicroBatch with ps-clip-sgd", ps, func(c *train.Config) { c.Scope = train.MicroBatch }, "Scope"},
		{"MicroBatchMean with auto-clip", estimator.AutoClip{R: 0.01}, func(c *train.Config) { c.Scope = train.MicroBatchMean }, "Scope"},
		{"MicroBatch with sgd", estimator.SGD{}, func(c *train.Config) { c.Scope = train.MicroBatch }, "Scope"},
		{"KeepNorms with clip-sgd", estimator.ClipSGD{Gamma: 1}, func(c *train.Config) { c.KeepNorms = true }, "KeepNorms"},
		{"KeepNorms with sgd", estimator.SGD{}, func(c *train.Config) { c.KeepNorms = true }, "KeepNorms"},
		{"unknown scope", estimator.SGD{}, func(c *train.Config) { c.Scope = 7 }, "Scope"},
		{"PerSampleMemory with sgd", estimator.SGD{}, func(c *train.Config) { c.PerSampleMemory = 1 << 20 }, "PerSampleMemory"},
		{"PerSampleMemory below NoMaterialise", ps, func(c *train.Config) { c.PerSampleMemory = -2 }, "PerSampleMemory"},
	} {
		cfg := train.Config{Model: model, Loss: nn.CrossEntropy, Estimator: tc.e, Optimizer: sgd}
		if tc.edit != nil {
			tc.edit(&cfg)
		}
		tr, err := train.New(cfg)
		var se *setting.Error
		if !errors.As(err, &se) || se.Field != tc.field || tr != nil {
			t.Errorf("%s: New = %v, want a *setting.Error for %s", tc.name, err, tc.field)
		}
	}
	for _, cfg := range []train.Config{
		{Model: model, Loss: nn.CrossEntropy, Estimator: ps, Optimizer: sgd, KeepNorms: true},
		{Model: model, Loss: nn.CrossEntropy, Estimator: ps, Optimizer: sgd, PerSampleMemory: nn.NoMaterialise},
		{Model: model, Loss: nn.CrossEntropy, Estimator: estimator.ClipSGD{Gamma: 1}, Optimizer: sgd, Scope: train.MicroBatch},
	} {
		if _, err := train.New(cfg); err != nil {
			t.Errorf("%s, %v, KeepNorms %v: %v", cfg.Estimator.Name(), cfg.Scope, cfg.KeepNorms, err)
		}
	}
}

// A NaN output predicts no class: a model whose outputs are NaN scores
// accuracy 0 on targets of class 0 (main scored 1, taking NaN rows for
// class 0), and its loss is NaN.
func TestEvaluateNaN(t *testing.T) {
	lin := nn.NewLinear("id", 3, 3, false)
	for i := range lin.Weight.Value.Data {
		lin.Weight.Value.Data[i] = float32(math.NaN())
	}
	x := tensor.From([]float32{1, 0, 0, 0, 1, 0}, 2, 3)
	ev, err := train.Evaluate(lin, nn.CrossEntropy, train.Batch{X: x, Y: []int32{0, 0}})
	if err != nil {
		t.Fatal(err)
	}
	if ev.Accuracy != 0 || !math.IsNaN(ev.Loss) {
		t.Errorf("NaN outputs: accuracy %v, loss %v; want 0 and NaN", ev.Accuracy, ev.Loss)
	}
}

// Evaluate with no batches says so, in words that fit it (ErrNoBatches).
func TestEvaluateNoBatches(t *testing.T) {
	if _, err := train.Evaluate(mlp(1), nn.CrossEntropy); !errors.Is(err, train.ErrNoBatches) || strings.Contains(err.Error(), "Step") {
		t.Errorf("Evaluate() = %v, want ErrNoBatches, which does not speak of Step", err)
	}
}

// Evaluate reports loss and accuracy with dropout off, and refuses bad
// batches.
func TestEvaluate(t *testing.T) {
	// A fixed model: the output is the input, so the class is the argmax.
	model := nn.Sequential{nn.NewDropout(0.9), nn.NewLinear("id", 3, 3, false)}
	lin := model[1].(*nn.Linear)
	lin.Weight.Value.Zero()
	for i := range 3 {
		lin.Weight.Value.Data[i*3+i] = 1
	}
	x := tensor.From([]float32{5, 0, 0, 0, 5, 0, 0, 0, 5, 5, 0, 0}, 4, 3)
	ev, err := train.Evaluate(model, nn.CrossEntropy, train.Batch{X: x, Y: []int32{0, 1, 2, 1}})
	if err != nil {
		t.Fatal(err)
	}
	lossRight := math.Log(1 + 2*math.Exp(-5)) // −log softmax of the right class
	wantLoss := (3*lossRight + (lossRight + 5)) / 4
	if ev.Accuracy != 0.75 || ev.Samples != 4 || math.Abs(ev.Loss-wantLoss) > 1e-5 {
		t.Errorf("eval %+v, want accuracy 0.75 and loss %v", ev, wantLoss)
	}
	var be *train.BatchError
	if _, err := train.Evaluate(model, nn.CrossEntropy, train.Batch{X: tensor.New(2, 4), Y: []int32{0, 0}}); !errors.As(err, &be) {
		t.Errorf("wrong width: %v", err)
	}
}

// A GPT: token ids that are not integers in [0, vocab), sequences longer
// than the block, and targets that are not one per position are refused.
func TestStepRefusesBadTokens(t *testing.T) {
	m, err := models.NewGPT(models.GPTConfig{NLayer: 1, NHead: 2, NEmbd: 8, BlockSize: 4, VocabSize: 5}, 1)
	if err != nil {
		t.Fatal(err)
	}
	opt, _ := optim.NewAdamW(optim.DecayGroups(m.Params(), 0.1), optim.AdamWConfig{LR: 1e-3})
	ps, _ := estimator.Spec{Estimator: "ps-clip-sgd", Clip: 1}.New()
	tr, err := train.New(train.Config{Model: m, Loss: nn.CrossEntropy, Estimator: ps, Optimizer: opt})
	if err != nil {
		t.Fatal(err)
	}
	seq := func(ids ...float32) train.Batch {
		return train.Batch{X: tensor.From(ids, 1, len(ids)), Y: make([]int32, len(ids))}
	}
	good := seq(1, 2, 3)
	for _, tc := range []struct {
		name string
		b    train.Batch
	}{
		{"id ≥ vocab", seq(1, 5, 0)},
		{"negative id", seq(1, -1, 0)},
		{"fractional id", seq(1, 1.5, 0)},
		{"NaN id", seq(1, float32(math.NaN()), 0)},
		{"longer than the block", seq(1, 2, 3, 4, 0)},
		{"one target per sequence", train.Batch{X: good.X, Y: []int32{0}}},
		{"target ≥ vocab", train.Batch{X: good.X, Y: []int32{0, 5, 0}}},
		{"rank 3", train.Batch{X: tensor.New(1, 3, 1), Y: make([]int32, 3)}},
	} {
		before := snapshot(m.Params(), opt)
		_, err := tr.Step(good, tc.b)
		var be *train.BatchError
		if !errors.As(err, &be) || be.Batch != 1 {
			t.Errorf("%s: error %v, want a *train.BatchError for micro-batch 1", tc.name, err)
		}
		if !slices.Equal(snapshot(m.Params(), opt), before) {
			t.Errorf("%s: changed the parameters", tc.name)
		}
	}
	if _, err := tr.Step(good, seq(0, 4, 4)); err != nil {
		t.Error(err)
	}
}

// A model with dropout trains without Config.Rand.
func TestDropoutWithoutRand(t *testing.T) {
	model := nn.Sequential{nn.NewLinear("0", 5, 8, true), nn.NewDropout(0.5), nn.NewLinear("2", 8, 3, true)}
	opt, _ := optim.NewSGD(model.Params(), optim.SGDConfig{LR: 0.1})
	tr, err := train.New(train.Config{Model: model, Loss: nn.CrossEntropy, Estimator: estimator.SGD{}, Optimizer: opt})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Step(batch(rand.New(rand.NewPCG(1, 1)), 4)); err != nil {
		t.Fatal(err)
	}
}
