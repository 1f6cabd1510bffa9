package optim

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/setting"
	"github.com/psclip/psclip/tensor"
)

func param(name string, value []float32, shape ...int) *nn.Param {
	return &nn.Param{Name: name, Value: tensor.From(value, shape...), Grad: tensor.New(shape...)}
}

func near(got float32, want, tol float64) bool {
	return math.Abs(float64(got)-want) <= tol*math.Max(1, math.Abs(want))
}

// The expected values are the PyTorch formulas evaluated by hand (in
// float64) for w₀ = 1, g = 0.5 at every step, lr = 0.1, λ = 0.1.
func TestSGDHandComputed(t *testing.T) {
	tests := []struct {
		name     string
		momentum float64
		nesterov bool
		want     [3]float64
		buf1     float64 // momentum buffer after step 1: d = g + λw₀
	}{
		// d₁ = 0.6; w₁ = 1 − 0.1·0.6; d₂ = 0.5 + 0.1·0.94; ...
		{"plain", 0, false, [3]float64{0.94, 0.8806, 0.821794}, 0},
		// b₁ = d₁ = 0.6 (no μ·0 term); b₂ = 0.9·0.6 + 0.594 = 1.134; ...
		{"momentum", 0.9, false, [3]float64{0.94, 0.8266, 0.666274}, 0.6},
		// u₁ = d₁ + 0.9·b₁ = 1.14; ...
		{"nesterov", 0.9, true, [3]float64{0.886, 0.725566, 0.525363646}, 0.6},
	}
	for _, tt := range tests {
		p := param("w", []float32{1}, 1)
		o, err := NewSGD([]*nn.Param{p}, SGDConfig{LR: 0.1, Momentum: tt.momentum, WeightDecay: 0.1, Nesterov: tt.nesterov})
		if err != nil {
			t.Fatal(err)
		}
		for step, want := range tt.want {
			p.Grad.Data[0] = 0.5
			o.Step()
			if !near(p.Value.Data[0], want, 1e-6) {
				t.Errorf("%s: step %d: w = %.9g, want %.9g", tt.name, step+1, p.Value.Data[0], want)
			}
			st := o.State()
			if st.Steps != step+1 {
				t.Errorf("%s: Steps = %d after %d steps", tt.name, st.Steps, step+1)
			}
			if step == 0 && tt.momentum != 0 {
				if b := st.Tensors["w.momentum_buffer"]; b == nil || !near(b.Data[0], tt.buf1, 1e-7) {
					t.Errorf("%s: momentum buffer after step 1 = %v, want %g", tt.name, b, tt.buf1)
				}
			}
		}
	}
}

// w₀ = 1 for a 1×1 weight (decayed, λ = 0.1) and a bias (not decayed),
// gradients 0.5, −0.25, 2; lr = 0.1, β = (0.9, 0.999), ε = 1e-8. Expected
// values from m̂ = m/(1−β₁ᵗ), v̂ = v/(1−β₂ᵗ), w ← w(1−lr·λ) − lr·m̂/(√v̂+ε).
func TestAdamWHandComputed(t *testing.T) {
	w := param("fc.weight", []float32{1}, 1, 1)
	b := param("fc.bias", []float32{1}, 1)
	o, err := NewAdamW(DecayGroups([]*nn.Param{w, b}, 0.1), AdamWConfig{LR: 0.1, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8})
	if err != nil {
		t.Fatal(err)
	}
	grads := []float32{0.5, -0.25, 2}
	wantW := []float64{0.890000002, 0.8544662986878463, 0.7788568715222746}
	wantB := []float64{0.900000002, 0.8733662987078463, 0.8063015345291531}
	wantM := []float64{0.05, 0.02, 0.218}
	wantV := []float64{0.00025, 0.00031225, 0.00431193775}
	for step, g := range grads {
		w.Grad.Data[0], b.Grad.Data[0] = g, g
		o.Step()
		if !near(w.Value.Data[0], wantW[step], 1e-6) || !near(b.Value.Data[0], wantB[step], 1e-6) {
			t.Errorf("step %d: weight %.9g bias %.9g, want %.9g %.9g", step+1, w.Value.Data[0], b.Value.Data[0], wantW[step], wantB[step])
		}
		st := o.State()
		if m, v := st.Tensors["fc.weight.exp_avg"].Data[0], st.Tensors["fc.weight.exp_avg_sq"].Data[0]; !near(m, wantM[step], 1e-6) || !near(v, wantV[step], 1e-6) {
			t.Errorf("step %d: exp_avg %g exp_avg_sq %g, want %g %g", step+1, m, v, wantM[step], wantV[step])
		}
	}
}

// refStep is an independent float64 implementation of the textbook
// formulas, for many elements and steps.
type ref struct {
	w, buf, m, v []float64
	t            int
}

func (r *ref) sgd(g []float64, lr, mu, wd float64, nesterov bool) {
	for i := range r.w {
		d := g[i] + wd*r.w[i]
		u := d
		if mu != 0 {
			if r.t == 0 {
				r.buf[i] = d
			} else {
				r.buf[i] = mu*r.buf[i] + d
			}
			u = r.buf[i]
			if nesterov {
				u = d + mu*r.buf[i]
			}
		}
		r.w[i] -= lr * u
	}
	r.t++
}

func (r *ref) adamw(g []float64, lr, b1, b2, eps, wd float64) {
	r.t++
	for i := range r.w {
		r.w[i] *= 1 - lr*wd
		r.m[i] = b1*r.m[i] + (1-b1)*g[i]
		r.v[i] = b2*r.v[i] + (1-b2)*g[i]*g[i]
		mh := r.m[i] / (1 - math.Pow(b1, float64(r.t)))
		vh := r.v[i] / (1 - math.Pow(b2, float64(r.t)))
		r.w[i] -= lr * mh / (math.Sqrt(vh) + eps)
	}
}

// model returns parameters of a weight matrix and a bias with random values,
// and float64 references for each.
func model(rng *rand.Rand) ([]*nn.Param, []*ref) {
	shapes := [][]int{{3, 4}, {4}}
	var ps []*nn.Param
	var refs []*ref
	for i, s := range shapes {
		p := nn.NewParam([]string{"w", "b"}[i], s...)
		r := &ref{}
		for j := range p.Value.Data {
			p.Value.Data[j] = float32(rng.NormFloat64())
			r.w = append(r.w, float64(p.Value.Data[j]))
		}
		n := len(r.w)
		r.buf, r.m, r.v = make([]float64, n), make([]float64, n), make([]float64, n)
		ps, refs = append(ps, p), append(refs, r)
	}
	return ps, refs
}

// setGrads draws gradients, returning them in float64 per parameter.
func setGrads(rng *rand.Rand, ps []*nn.Param) [][]float64 {
	var gs [][]float64
	for _, p := range ps {
		g := make([]float64, p.Grad.Len())
		for j := range g {
			p.Grad.Data[j] = float32(rng.NormFloat64())
			g[j] = float64(p.Grad.Data[j])
		}
		gs = append(gs, g)
	}
	return gs
}

func compare(t *testing.T, what string, step int, ps []*nn.Param, refs []*ref) {
	t.Helper()
	for i, p := range ps {
		for j, x := range p.Value.Data {
			if !near(x, refs[i].w[j], 2e-6) {
				t.Fatalf("%s step %d: %s[%d] = %.9g, float64 reference %.9g", what, step, p.Name, j, x, refs[i].w[j])
			}
		}
	}
}

func TestSGDMatchesFloat64Reference(t *testing.T) {
	for _, nesterov := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(1, 2))
		ps, refs := model(rng)
		o, err := NewSGD(ps, SGDConfig{LR: 0.05, Momentum: 0.9, WeightDecay: 5e-4, Nesterov: nesterov})
		if err != nil {
			t.Fatal(err)
		}
		for step := range 20 {
			lr := 0.05 / float64(step+1) // a changing learning rate
			o.SetLR(lr)
			gs := setGrads(rng, ps)
			o.Step()
			for i, r := range refs {
				r.sgd(gs[i], lr, 0.9, 5e-4, nesterov)
			}
			compare(t, "SGD", step, ps, refs)
		}
	}
}

func TestAdamWMatchesFloat64Reference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ps, refs := model(rng)
	o, err := NewAdamW(DecayGroups(ps, 0.1), AdamWConfig{LR: 1e-3, Beta1: 0.9, Beta2: 0.95, Eps: 1e-8})
	if err != nil {
		t.Fatal(err)
	}
	sched := NewWarmupCosine(1e-3, 3, 15)
	for step := range 20 {
		lr := sched.LR(step)
		o.SetLR(lr)
		gs := setGrads(rng, ps)
		o.Step()
		refs[0].adamw(gs[0], lr, 0.9, 0.95, 1e-8, 0.1) // the matrix decays
		refs[1].adamw(gs[1], lr, 0.9, 0.95, 1e-8, 0)   // the bias does not
		compare(t, "AdamW", step, ps, refs)
	}
}

// A β₁ below ½ takes torch.lerp's other branch.
func TestAdamWSmallBeta1(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	ps, refs := model(rng)
	o, err := NewAdamW([]Group{{Params: ps}}, AdamWConfig{LR: 1e-2, Beta1: 0.3, Beta2: 0.99, Eps: 1e-6})
	if err != nil {
		t.Fatal(err)
	}
	for step := range 5 {
		gs := setGrads(rng, ps)
		o.Step()
		for i, r := range refs {
			r.adamw(gs[i], 1e-2, 0.3, 0.99, 1e-6, 0)
		}
		compare(t, "AdamW β₁=0.3", step, ps, refs)
	}
}

func TestDecayGroups(t *testing.T) {
	ps := []*nn.Param{nn.NewParam("wte", 10, 4), nn.NewParam("ln.weight", 4), nn.NewParam("conv", 2, 3, 3, 3), nn.NewParam("bias", 2)}
	g := DecayGroups(ps, 0.1)
	names := func(g Group) (s []string) {
		for _, p := range g.Params {
			s = append(s, p.Name)
		}
		return s
	}
	if len(g) != 2 || g[0].WeightDecay != 0.1 || g[1].WeightDecay != 0 ||
		strings.Join(names(g[0]), ",") != "wte,conv" || strings.Join(names(g[1]), ",") != "ln.weight,bias" {
		t.Fatalf("DecayGroups = %v (decay %v), %v (decay %v)", names(g[0]), g[0].WeightDecay, names(g[1]), g[1].WeightDecay)
	}
}

func TestSchedules(t *testing.T) {
	s := NewWarmupCosine(6e-4, 10, 100)
	// Values from nanoGPT's get_lr in Python.
	tests := []struct {
		it   int
		want float64
	}{
		{0, 5.454545454545454e-05},   // warm-up start: lr/(warmup+1)
		{9, 0.0005454545454545454},   // warm-up end
		{10, 0.0006},                 // peak
		{55, 0.00032999999999999994}, // mid-decay: (peak+min)/2
		{100, 6e-05},                 // end of decay: min = peak/10
		{101, 6e-05}, {5000, 6e-05},  // after
	}
	for _, tt := range tests {
		if got := s.LR(tt.it); math.Abs(got-tt.want) > 1e-15 {
			t.Errorf("LR(%d) = %v, want %v", tt.it, got, tt.want)
		}
	}
	noDecay := WarmupCosine{Peak: 1, Min: 0.5, Warmup: 4, Decay: 4}
	if a, b := noDecay.LR(3), noDecay.LR(4); a != 0.8 || b != 0.5 {
		t.Errorf("Decay = Warmup: LR(3), LR(4) = %v, %v, want 0.8, 0.5", a, b)
	}
	noWarmup := NewWarmupCosine(1, 0, 10)
	if a, b := noWarmup.LR(0), noWarmup.LR(10); a != 1 || math.Abs(b-0.1) > 1e-15 {
		t.Errorf("no warm-up: LR(0), LR(10) = %v, %v, want 1, 0.1", a, b)
	}
	if Constant(0.01).LR(12345) != 0.01 {
		t.Error("Constant")
	}
}

// Continuing from a restored state gives bit-identical parameters.
func TestStateRoundTripContinuesBitIdentically(t *testing.T) {
	makers := map[string]func([]*nn.Param) Optimizer{
		"sgd": func(ps []*nn.Param) Optimizer {
			o, _ := NewSGD(ps, SGDConfig{LR: 0.1, Momentum: 0.9, WeightDecay: 1e-4, Nesterov: true})
			return o
		},
		"sgd without momentum": func(ps []*nn.Param) Optimizer {
			o, _ := NewSGD(ps, SGDConfig{LR: 0.1, WeightDecay: 1e-4})
			return o
		},
		"adamw": func(ps []*nn.Param) Optimizer {
			o, _ := NewAdamW(DecayGroups(ps, 0.1), AdamWConfig{LR: 1e-3, Beta1: 0.9, Beta2: 0.95, Eps: 1e-8})
			return o
		},
	}
	for name, mk := range makers {
		rng := rand.New(rand.NewPCG(7, 8))
		a, _ := model(rng)
		oa := mk(a)
		for range 3 {
			setGrads(rng, a)
			oa.Step()
		}
		// Snapshot: copies of the parameters and of the state.
		b := make([]*nn.Param, len(a))
		for i, p := range a {
			b[i] = &nn.Param{Name: p.Name, Value: p.Value.Clone(), Grad: p.Grad.Clone()}
		}
		st := oa.State()
		snap := State{Steps: st.Steps, Tensors: map[string]*tensor.Tensor{}}
		for k, v := range st.Tensors {
			snap.Tensors[k] = v.Clone()
		}
		ob := mk(b)
		if err := ob.SetState(snap); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for range 4 {
			setGrads(rng, a)
			for i := range a {
				copy(b[i].Grad.Data, a[i].Grad.Data)
			}
			oa.Step()
			ob.Step()
		}
		for i := range a {
			for j := range a[i].Value.Data {
				if math.Float32bits(a[i].Value.Data[j]) != math.Float32bits(b[i].Value.Data[j]) {
					t.Fatalf("%s: %s[%d] differs after restore: %v vs %v", name, a[i].Name, j, a[i].Value.Data[j], b[i].Value.Data[j])
				}
			}
		}
	}
}

func TestSetStateRejects(t *testing.T) {
	ps := []*nn.Param{nn.NewParam("w", 2, 2)}
	o, _ := NewAdamW([]Group{{Params: ps}}, AdamWConfig{LR: 1, Beta1: 0.9, Beta2: 0.9})
	ps[0].Grad.Data[0] = 1
	o.Step()
	good := o.State()
	before := good.Tensors["w.exp_avg"].Clone()
	with := func(edit func(s *State)) State {
		s := State{Steps: good.Steps, Tensors: map[string]*tensor.Tensor{}}
		for k, v := range good.Tensors {
			s.Tensors[k] = tensor.New(v.Shape...) // zeros: would change the state
		}
		edit(&s)
		return s
	}
	tests := []struct {
		name  string
		state State
		want  string
	}{
		{"negative steps", with(func(s *State) { s.Steps = -1 }), "negative"},
		{"missing", with(func(s *State) { delete(s.Tensors, "w.exp_avg_sq") }), `no tensor "w.exp_avg_sq"`},
		{"wrong shape", with(func(s *State) { s.Tensors["w.exp_avg"] = tensor.New(4) }), "is Tensor[4]"},
		{"extra", with(func(s *State) { s.Tensors["v.exp_avg"] = tensor.New(1) }), `unexpected state tensor "v.exp_avg"`},
		{"other optimizer", with(func(s *State) { s.Tensors = map[string]*tensor.Tensor{"w.momentum_buffer": tensor.New(2, 2)} }), "no tensor"},
		{"tensors at step 0", with(func(s *State) { s.Steps = 0 }), "unexpected"},
	}
	for _, tt := range tests {
		err := o.SetState(tt.state)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want it to mention %q", tt.name, err, tt.want)
		}
		if after := o.State(); after.Steps != 1 || after.Tensors["w.exp_avg"].Data[0] != before.Data[0] {
			t.Fatalf("%s: a rejected state changed the optimizer", tt.name)
		}
	}
	// A fresh state resets the optimizer.
	if err := o.SetState(State{}); err != nil || o.State().Steps != 0 || len(o.State().Tensors) != 0 {
		t.Fatalf("reset: %v, %+v", err, o.State())
	}
}

// Every refusal is a *setting.Error naming the field, found by errors.As.
func TestConstructorsReject(t *testing.T) {
	ok := []*nn.Param{nn.NewParam("w", 2)}
	sgd := func(ps []*nn.Param, c SGDConfig) error { _, err := NewSGD(ps, c); return err }
	adamw := func(gs []Group, c AdamWConfig) error { _, err := NewAdamW(gs, c); return err }
	tests := []struct {
		name  string
		err   error
		field string
	}{
		{"negative lr", sgd(ok, SGDConfig{LR: -1}), "LR"},
		{"NaN lr", sgd(ok, SGDConfig{LR: math.NaN()}), "LR"},
		{"negative momentum", sgd(ok, SGDConfig{LR: 1, Momentum: -0.1}), "Momentum"},
		{"infinite decay", sgd(ok, SGDConfig{LR: 1, WeightDecay: math.Inf(1)}), "WeightDecay"},
		{"nesterov without momentum", sgd(ok, SGDConfig{LR: 1, Nesterov: true}), "Nesterov"},
		{"duplicate names", sgd([]*nn.Param{nn.NewParam("w", 2), nn.NewParam("w", 3)}, SGDConfig{LR: 1}), "Params"},
		{"grad shape", sgd([]*nn.Param{{Name: "x", Value: tensor.New(2), Grad: tensor.New(3)}}, SGDConfig{LR: 1}), "Params"},
		{"no grad", sgd([]*nn.Param{{Name: "x", Value: tensor.New(2)}}, SGDConfig{LR: 1}), "Params"},
		{"β₁ = 1", adamw([]Group{{Params: ok}}, AdamWConfig{LR: 1, Beta1: 1, Beta2: 0.9}), "Beta1"},
		{"β₂ < 0", adamw([]Group{{Params: ok}}, AdamWConfig{LR: 1, Beta1: 0.9, Beta2: -0.1}), "Beta2"},
		{"ε < 0", adamw([]Group{{Params: ok}}, AdamWConfig{LR: 1, Beta1: 0.9, Beta2: 0.9, Eps: -1}), "Eps"},
		{"negative decay", adamw([]Group{{Params: ok, WeightDecay: -1}}, AdamWConfig{LR: 1}), "WeightDecay"},
		{"parameter in two groups", adamw([]Group{{Params: ok}, {Params: ok}}, AdamWConfig{LR: 1}), "Params"},
		{"adamw lr 1e39", adamw([]Group{{Params: ok}}, AdamWConfig{LR: 1e39}), "LR"},
	}
	for _, tt := range tests {
		var se *setting.Error
		if !errors.As(tt.err, &se) || se.Field != tt.field {
			t.Errorf("%s: err = %v, want a *setting.Error for %s", tt.name, tt.err, tt.field)
		}
	}
}

// A learning rate set during training that is not a positive normal
// float32 is refused, and the optimizer keeps its rate: the next step is
// the one the old rate makes, with finite weights. Today's main took any
// rate (NaN weights, or a step up the gradient for a negative one).
func TestSetLRRefused(t *testing.T) {
	opts := []struct {
		name string
		new  func([]*nn.Param) Optimizer
	}{
		{"sgd", func(ps []*nn.Param) Optimizer { o, _ := NewSGD(ps, SGDConfig{LR: 0.1, Momentum: 0.9}); return o }},
		{"adamw", func(ps []*nn.Param) Optimizer {
			o, _ := NewAdamW([]Group{{Params: ps}}, AdamWConfig{LR: 0.1})
			return o
		}},
	}
	bad := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, -0.1, 1e-40, 1e39}
	for _, o := range opts {
		for _, lr := range bad {
			got, want := param("w", []float32{1, -2}, 2), param("w", []float32{1, -2}, 2)
			og, ow := o.new([]*nn.Param{got}), o.new([]*nn.Param{want})
			err := og.SetLR(lr)
			var se *setting.Error
			if !errors.As(err, &se) || se.Field != "LR" {
				t.Errorf("%s: SetLR(%v) = %v, want a *setting.Error for LR", o.name, lr, err)
			}
			if og.LR() != 0.1 {
				t.Errorf("%s: after SetLR(%v) LR() = %v, want 0.1 kept", o.name, lr, og.LR())
			}
			for _, p := range []*nn.Param{got, want} {
				copy(p.Grad.Data, []float32{0.5, -0.25})
			}
			og.Step()
			ow.Step()
			for i, w := range want.Value.Data {
				if g := got.Value.Data[i]; math.Float32bits(g) != math.Float32bits(w) {
					t.Errorf("%s: after SetLR(%v) w[%d] = %v, want %v (the step at lr 0.1)", o.name, lr, i, g, w)
				}
			}
		}
		if err := o.new([]*nn.Param{nn.NewParam("w", 2)}).SetLR(1e-3); err != nil {
			t.Errorf("%s: SetLR(1e-3) = %v", o.name, err)
		}
	}
}

// WarmupCosine.Validate refuses the schedules whose rates SetLR would
// refuse; Constant.Validate is SetLR's check.
func TestScheduleValidate(t *testing.T) {
	tests := []struct {
		s     interface{ Validate() error }
		field string // "" for a valid schedule
	}{
		{NewWarmupCosine(6e-4, 100, 5000), ""},
		{WarmupCosine{Peak: 6e-4, Min: 0, Warmup: 10, Decay: 100}, ""},
		{WarmupCosine{Peak: -6e-4, Min: 0, Decay: 100}, "Peak"},
		{WarmupCosine{Peak: math.NaN(), Decay: 100}, "Peak"},
		{WarmupCosine{Peak: 1e-3, Min: -1e-4, Decay: 100}, "Min"},
		{WarmupCosine{Peak: 1e-3, Min: 1e-2, Decay: 100}, "Min"},
		{WarmupCosine{Peak: 1e-3, Min: 1e-4, Warmup: -1, Decay: 100}, "Warmup"},
		{WarmupCosine{Peak: 1e-3, Min: 1e-4, Decay: -1}, "Decay"},
		{Constant(0.1), ""},
		{Constant(0), "LR"},
		{Constant(math.Inf(1)), "LR"},
	}
	for _, tt := range tests {
		err := tt.s.Validate()
		var se *setting.Error
		switch {
		case tt.field == "" && err != nil:
			t.Errorf("%+v: Validate() = %v, want nil", tt.s, err)
		case tt.field != "" && (!errors.As(err, &se) || se.Field != tt.field):
			t.Errorf("%+v: Validate() = %v, want a *setting.Error for %s", tt.s, err, tt.field)
		}
	}
}

func TestStepDoesNotAllocate(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	ps, _ := model(rng)
	sgd, _ := NewSGD(ps, SGDConfig{LR: 0.1, Momentum: 0.9, WeightDecay: 1e-4})
	adamw, _ := NewAdamW(DecayGroups(ps, 0.1), AdamWConfig{LR: 1e-3, Beta1: 0.9, Beta2: 0.95, Eps: 1e-8})
	for name, o := range map[string]Optimizer{"SGD": sgd, "AdamW": adamw} {
		if n := testing.AllocsPerRun(10, o.Step); n != 0 {
			t.Errorf("%s.Step allocates %v times", name, n)
		}
	}
}

func benchmarkStep(b *testing.B, mk func([]*nn.Param) Optimizer) {
	p := nn.NewParam("w", 1024, 1024)
	rng := rand.New(rand.NewPCG(1, 1))
	for i := range p.Value.Data {
		p.Value.Data[i] = float32(rng.NormFloat64())
		p.Grad.Data[i] = float32(rng.NormFloat64())
	}
	o := mk([]*nn.Param{p})
	b.SetBytes(int64(4 * p.Value.Len())) // per parameter: 4 bytes of weight
	for b.Loop() {
		o.Step()
	}
}

func BenchmarkSGDStep(b *testing.B) {
	benchmarkStep(b, func(ps []*nn.Param) Optimizer {
		o, _ := NewSGD(ps, SGDConfig{LR: 1e-3, Momentum: 0.9, WeightDecay: 1e-4})
		return o
	})
}

func BenchmarkAdamWStep(b *testing.B) {
	benchmarkStep(b, func(ps []*nn.Param) Optimizer {
		o, _ := NewAdamW(DecayGroups(ps, 0.1), AdamWConfig{LR: 1e-3, Beta1: 0.9, Beta2: 0.95, Eps: 1e-8})
		return o
	})
}
