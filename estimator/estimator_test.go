package estimator

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/psclip/psclip/setting"
)

func mustPS(t testing.TB, th Threshold, err error) *PSClip {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	return NewPSClip(th)
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }

func nearVec(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !near(a[i], b[i]) {
			return false
		}
	}
	return true
}

// The batch of the hand-computed cases: norms 5, 2, 0, 3; sum (0, 6); mean
// (0, 1.5), |mean| = 1.5; mean norm 2.5.
var batch = []float64{
	3, 4,
	0, 2,
	0, 0,
	-3, 0,
}

func TestDirectionHandComputed(t *testing.T) {
	c2, err := Constant(2)
	ps2 := mustPS(t, c2, err)
	k1, err := Increasing(1, 1) // τ = 1, 2, 3, 4
	ps11 := mustPS(t, k1, err)
	k2, err := Increasing(1, 2) // τ = 1, √2, √3, 2
	ps12 := mustPS(t, k2, err)
	s2 := math.Sqrt2
	tests := []struct {
		name string
		e    Estimator
		want []float64
		st   Stats
	}{
		{"sgd", SGD{}, []float64{0, 1.5}, Stats{N: 4, MeanNorm: 2.5, PreClipNorm: 1.5}},
		{"clip-sgd γ=1 clips", ClipSGD{Gamma: 1}, []float64{0, 1}, Stats{N: 4, MeanNorm: 2.5, PreClipNorm: 1.5, BatchClipped: true}},
		{"clip-sgd γ=2 keeps", ClipSGD{Gamma: 2}, []float64{0, 1.5}, Stats{N: 4, MeanNorm: 2.5, PreClipNorm: 1.5}},
		{"clip-sgd γ=1.5 boundary", ClipSGD{Gamma: 1.5}, []float64{0, 1.5}, Stats{N: 4, MeanNorm: 2.5, PreClipNorm: 1.5}},
		{"nsgd", NSGD{}, []float64{0, 1}, Stats{N: 4, MeanNorm: 2.5, PreClipNorm: 1.5, BatchClipped: true}},
		// factors 2/5, 1, 1, 2/3: ((1.2 - 2), (1.6 + 2)) / 4.
		{"ps constant γ=2", ps2, []float64{-0.2, 0.9}, Stats{N: 4, Clipped: 2, MeanNorm: 2.5, PreClipNorm: math.Hypot(0.2, 0.9)}},
		// factors 1/5, 1 (2 ≤ 2), 1, 1 (3 ≤ 4): ((0.6 - 3), (0.8 + 2)) / 4.
		{"ps α=1 β=1", ps11, []float64{-0.6, 0.7}, Stats{N: 4, Clipped: 1, MeanNorm: 2.5, PreClipNorm: math.Hypot(0.6, 0.7)}},
		// factors 1/5, √2/2, 1, 2/3: ((0.6 - 2), (0.8 + √2)) / 4.
		{"ps α=1 β=2", ps12, []float64{-0.35, (0.8 + s2) / 4}, Stats{N: 4, Clipped: 3, MeanNorm: 2.5, PreClipNorm: math.Hypot(0.35, (0.8+s2)/4)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := make([]float64, 2)
			st, err := Direction(tt.e, batch, dir)
			if err != nil {
				t.Fatal(err)
			}
			if !nearVec(dir, tt.want) {
				t.Errorf("direction %v, want %v", dir, tt.want)
			}
			if !statsNear(st.Stats, tt.st) {
				t.Errorf("stats %+v, want %+v", st, tt.st)
			}
		})
	}
}

func statsNear(a, b Stats) bool {
	return a.N == b.N && a.Clipped == b.Clipped && a.Dropped == b.Dropped && a.BatchClipped == b.BatchClipped &&
		near(a.MeanNorm, b.MeanNorm) && near(a.PreClipNorm, b.PreClipNorm)
}

func TestEdgeCases(t *testing.T) {
	inc, _ := Increasing(2, 1)
	half, _ := Constant(0.5)
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		name  string
		e     Estimator
		grads []float64
		want  []float64
		st    Stats
	}{
		{"zero gradients nsgd", NSGD{}, []float64{0, 0, 0, 0}, []float64{0, 0}, Stats{N: 2}},
		{"zero gradients clip-sgd", ClipSGD{Gamma: 1}, []float64{0, 0, 0, 0}, []float64{0, 0}, Stats{N: 2}},
		{"zero gradients ps", NewPSClip(half), []float64{0, 0, 0, 0}, []float64{0, 0}, Stats{N: 2}},
		{"n=1 nsgd", NSGD{}, []float64{3, 4}, []float64{0.6, 0.8}, Stats{N: 1, MeanNorm: 5, PreClipNorm: 5, BatchClipped: true}},
		{"n=1 ps τ_1=2", NewPSClip(inc), []float64{3, 4}, []float64{1.2, 1.6}, Stats{N: 1, Clipped: 1, MeanNorm: 5, PreClipNorm: 2}},
		// (0.5, 0) and (0, 0.5) averaged.
		{"all clipped", NewPSClip(half), []float64{2, 0, 0, 4}, []float64{0.25, 0.25}, Stats{N: 2, Clipped: 2, MeanNorm: 3, PreClipNorm: math.Sqrt(0.125)}},
		// Samples 2 and 3 are dropped; 1 and 4 are averaged over 2.
		{"non-finite sgd", SGD{}, []float64{3, 4, nan, 0, inf, 1, 0, 2}, []float64{1.5, 3}, Stats{N: 4, Dropped: 2, MeanNorm: 3.5, PreClipNorm: math.Hypot(1.5, 3)}},
		{"non-finite nsgd", NSGD{}, []float64{3, 4, -inf, 0}, []float64{0.6, 0.8}, Stats{N: 2, Dropped: 1, MeanNorm: 5, PreClipNorm: 5, BatchClipped: true}},
		// Thresholds keep their batch positions: τ_1 = 2 clips (3, 4) to
		// (1.2, 1.6), τ_4 = 8 keeps (0, 2); the average is over 2.
		{"non-finite ps", NewPSClip(inc), []float64{3, 4, nan, 0, inf, 1, 0, 2}, []float64{0.6, 1.8}, Stats{N: 4, Clipped: 1, Dropped: 2, MeanNorm: 3.5, PreClipNorm: math.Hypot(0.6, 1.8)}},
		{"all non-finite", NewPSClip(inc), []float64{nan, 1, inf, 0}, []float64{0, 0}, Stats{N: 2, Dropped: 2}},
		{"all non-finite nsgd", NSGD{}, []float64{nan, 1, inf, 0}, []float64{0, 0}, Stats{N: 2, Dropped: 2}},
		{"empty batch", SGD{}, nil, []float64{0, 0}, Stats{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := []float64{7, 7} // must be overwritten
			st, err := Direction(tt.e, tt.grads, dir)
			if err != nil {
				t.Fatal(err)
			}
			if !nearVec(dir, tt.want) {
				t.Errorf("direction %v, want %v", dir, tt.want)
			}
			if !statsNear(st.Stats, tt.st) {
				t.Errorf("stats %+v, want %+v", st, tt.st)
			}
		})
	}
}

// TestDirectionBruteForce compares Direction with the paper's formulas
// evaluated directly on random heavy-tailed batches.
func TestDirectionBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		n, d := 1+r.IntN(40), 1+r.IntN(9)
		g := make([]float64, n*d)
		for i := range g {
			g[i] = r.NormFloat64() * math.Exp(3*r.NormFloat64())
		}
		alpha, beta, gamma := math.Exp(r.NormFloat64()), 0.5+2*r.Float64(), math.Exp(2*r.NormFloat64())
		th, err := Increasing(alpha, beta)
		if err != nil {
			t.Fatal(err)
		}
		mean := make([]float64, d)
		clipped := make([]float64, d)
		for k := 1; k <= n; k++ {
			row := g[(k-1)*d : k*d]
			nk := 0.0
			for _, v := range row {
				nk += v * v
			}
			c := math.Min(1, alpha*math.Pow(float64(k), 1/beta)/math.Sqrt(nk))
			for j, v := range row {
				mean[j] += v / float64(n)
				clipped[j] += c * v / float64(n)
			}
		}
		mn := math.Sqrt(dot(mean, mean))
		scaled := func(s float64) []float64 {
			out := make([]float64, d)
			for j := range out {
				out[j] = s * mean[j]
			}
			return out
		}
		cases := []struct {
			e    Estimator
			want []float64
		}{
			{SGD{}, mean},
			{ClipSGD{Gamma: gamma}, scaled(math.Min(1, gamma/mn))},
			{NSGD{}, scaled(1 / mn)},
			{NewPSClip(th), clipped},
		}
		for _, c := range cases {
			dir := make([]float64, d)
			Direction(c.e, g, dir)
			for j := range dir {
				if math.Abs(dir[j]-c.want[j]) > 1e-9*(1+math.Abs(c.want[j])) {
					t.Fatalf("trial %d %s: direction %v, want %v", trial, c.e.Name(), dir, c.want)
				}
			}
		}
	}
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// The threshold table is cached across batches of different sizes.
func TestPSClipThresholdCache(t *testing.T) {
	th, _ := Increasing(0.7, 1.6)
	e := NewPSClip(th)
	for _, n := range []int{3, 8, 5, 1, 12} {
		norms := make([]float64, n)
		for i := range norms {
			norms[i] = 100 // every sample clipped: w_i = τ_i/100/n
		}
		w := make([]float64, n)
		Weights(e, norms, w)
		for i, wi := range w {
			if want := 0.7 * math.Pow(float64(i+1), 1/1.6) / 100 / float64(n); !near(wi, want) {
				t.Fatalf("n=%d: w[%d] = %v, want %v", n, i, wi, want)
			}
		}
	}
}

func TestThreshold(t *testing.T) {
	hp, err := HighProbability(2, 2, math.Exp(-3.75)) // (3.75 + 1/4)^(1/2) = 2
	if err != nil {
		t.Fatal(err)
	}
	if !near(hp.Alpha(), 1) || hp.Beta() != 2 || hp.IsConstant() {
		t.Errorf("HighProbability(2, 2, e^-3.75) = %v, want α=1 β=2", hp)
	}
	hp, _ = HighProbability(1, 1.5, 0.01)
	if want := 1 / math.Pow(math.Log(100)+0.25, 1/1.5); !near(hp.Alpha(), want) || hp.Beta() != 1.5 {
		t.Errorf("HighProbability(1, 1.5, 0.01) = %v, want α=%v β=1.5", hp, want)
	}
	c, _ := Constant(3)
	if c.Tau(1) != 3 || c.Tau(64) != 3 || !math.IsInf(c.Beta(), 1) || !c.IsConstant() {
		t.Errorf("Constant(3) = %v", c)
	}
	lin, _ := Increasing(1.5, 1)
	if lin.Tau(4) != 6 {
		t.Errorf("1.5·4^(1/1) = %v, want 6", lin.Tau(4))
	}
	sq, _ := Increasing(1, 2)
	if !near(sq.Tau(9), 3) {
		t.Errorf("9^(1/2) = %v, want 3", sq.Tau(9))
	}
	if got := sq.String(); got != "1·k^(1/2)" {
		t.Errorf("String = %q", got)
	}
}

func TestInvalidParameters(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	errs := map[string]error{}
	for _, g := range []float64{0, -1, nan, inf} {
		_, errs["Constant"] = Constant(g)
		check(t, "Constant", g, errs["Constant"])
		_, err := NewClipSGD(g)
		check(t, "NewClipSGD", g, err)
		_, err = Spec{Estimator: "clip-sgd", Clip: g}.New()
		check(t, "New clip-sgd γ", g, err)
		_, err = Increasing(g, 1)
		check(t, "Increasing α", g, err)
		_, err = Increasing(1, g)
		check(t, "Increasing β", g, err)
		_, err = Spec{Estimator: "ps-clip-sgd", Alpha: g, Beta: 1}.New()
		check(t, "New ps-clip-sgd α", g, err)
		_, err = HighProbability(g, 1.5, 0.1)
		check(t, "HighProbability σ", g, err)
	}
	for _, d := range []float64{0, 1, -0.5, 2, nan, inf} {
		_, err := HighProbability(1, 1.5, d)
		check(t, "HighProbability δ", d, err)
	}
	for _, p := range []float64{1, 0.5, 2.5, nan, inf} {
		_, err := HighProbability(1, p, 0.1)
		check(t, "HighProbability p", p, err)
	}
	if _, err := (Spec{Estimator: "ps-clip-sgd", Alpha: 1, Beta: -1}).New(); err == nil {
		t.Error("New ps-clip-sgd β=-1: no error")
	}
	if _, err := (Spec{Estimator: "adam"}).New(); err == nil || !strings.Contains(err.Error(), "ps-clip-sgd") {
		t.Errorf("New(adam) = %v, want an error listing the methods", err)
	}
}

func check(t *testing.T, what string, x float64, err error) {
	t.Helper()
	if err == nil {
		t.Errorf("%s(%v): no error", what, x)
	}
}

func TestNew(t *testing.T) {
	for _, name := range Names {
		e, err := Spec{Estimator: name, Clip: 1, Alpha: 1, Beta: 1.5, NoiseMultiplier: 1}.Trim().New()
		if err != nil {
			t.Fatal(err)
		}
		want := name
		if name == "ps-clip-sgd" {
			want = "inc-ps-clip-sgd" // Beta 1.5: the increasing threshold
		}
		if e.Name() != want {
			t.Errorf("New(%q).Name() = %q, want %q", name, e.Name(), want)
		}
		if e.PerSample() != (name != "sgd" && name != "clip-sgd" && name != "nsgd") {
			t.Errorf("%s: PerSample = %v", name, e.PerSample())
		}
	}
	e, _ := Spec{Estimator: "ps-clip-sgd", Clip: 45}.New()
	if th := e.(*PSClip).Threshold(); !th.IsConstant() || th.Alpha() != 45 || e.Name() != "ps-clip-sgd" {
		t.Errorf("β=0 should select the constant threshold γ=45, got %v (%s)", th, e.Name())
	}
	e, _ = Spec{Estimator: "ps-clip-sgd", Alpha: 2, Beta: 1.5}.New()
	if th := e.(*PSClip).Threshold(); th.Alpha() != 2 || th.Beta() != 1.5 {
		t.Errorf("got %v, want 2·k^(1/1.5)", th)
	}
}

func TestWorkspaceDoesNotAllocate(t *testing.T) {
	th, _ := Increasing(1, 1.5)
	e := NewPSClip(th)
	g := make([]float64, 64*10)
	for i := range g {
		g[i] = float64(i%7) - 3
	}
	dir := make([]float64, 10)
	var ws Workspace[float64]
	ws.Direction(e, g, dir)
	if a := testing.AllocsPerRun(100, func() { ws.Direction(e, g, dir) }); a != 0 {
		t.Errorf("Workspace.Direction allocates %v times per call", a)
	}
}

// Gradients that do not form rows of the direction's length, nil slices
// included, are a *ShapeError, not a panic, and dir is left alone.
func TestDirectionShapeError(t *testing.T) {
	tests := []struct{ grads, dir []float64 }{
		{nil, nil},
		{make([]float64, 4), nil},
		{make([]float64, 5), make([]float64, 2)},
	}
	for _, tt := range tests {
		for i := range tt.dir {
			tt.dir[i] = 7
		}
		_, err := Direction(SGD{}, tt.grads, tt.dir)
		var se *ShapeError
		if !errors.As(err, &se) || se.Grads != len(tt.grads) || se.Dir != len(tt.dir) {
			t.Errorf("Direction(%d values, dir %d) = %v, want a *ShapeError", len(tt.grads), len(tt.dir), err)
		}
		for _, v := range tt.dir {
			if v != 7 {
				t.Errorf("Direction(%d values, dir %d) wrote dir %v", len(tt.grads), len(tt.dir), tt.dir)
			}
		}
	}
}

// Direction does not drop DP-SGD's noise: a noisy estimator is refused
// with a *NoisyError and dir is not written; Weights panics on one.
func TestDirectionNoisy(t *testing.T) {
	e, err := NewDPSGD(1, 1, 5)
	if err != nil {
		t.Fatal(err)
	}
	dir := []float32{7, 7}
	_, err = Direction(e, []float32{1, 2, 3, 4}, dir)
	var ne *NoisyError
	if !errors.As(err, &ne) || ne.Estimator != "dp-sgd" || dir[0] != 7 || dir[1] != 7 {
		t.Errorf("Direction(dp-sgd) = %v, dir %v; want a *NoisyError, dir unwritten", err, dir)
	}
	defer func() {
		if recover() == nil {
			t.Error("Weights(dp-sgd) did not panic")
		}
	}()
	Weights(e, []float64{1, 2}, make([]float64, 2))
}

// Estimators built as struct literals are validated by Validate and so by
// Direction: ClipSGD{Gamma: -1} (which would reverse the direction),
// ClipSGD{} (which freezes training), AutoClip{} (NaN), a zero PSAuto (a
// panic on main), a zero Quantile and the zero Threshold are refused with a
// *setting.Error naming the field, and Direction writes nothing.
func TestValidateStructLiterals(t *testing.T) {
	tests := []struct {
		name  string
		e     Estimator
		field string // "" for a valid estimator
	}{
		{"SGD{}", SGD{}, ""},
		{"NSGD{}", NSGD{}, ""},
		{"ClipSGD{Gamma: 1}", ClipSGD{Gamma: 1}, ""},
		{"AutoClip{R: 0.01}", AutoClip{R: 0.01}, ""},
		{"ClipSGD{Gamma: -1}", ClipSGD{Gamma: -1}, "Gamma"},
		{"ClipSGD{}", ClipSGD{}, "Gamma"},
		{"ClipSGD{Gamma: 1e39}", ClipSGD{Gamma: 1e39}, "Gamma"},
		{"ClipSGD{Gamma: NaN}", ClipSGD{Gamma: math.NaN()}, "Gamma"},
		{"AutoClip{}", AutoClip{}, "R"},
		{"AutoClip{R: -1}", AutoClip{R: -1}, "R"},
		{"&PSAuto{}", &PSAuto{}, "Window"},
		{"&Quantile{}", &Quantile{}, "Q"},
		{"NewPSClip(Threshold{})", NewPSClip(Threshold{}), "Gamma"},
		{"nil", nil, "-"},
		{"(*PSAuto)(nil)", (*PSAuto)(nil), "-"},
	}
	for _, tt := range tests {
		err := Validate(tt.e)
		var se *setting.Error
		switch {
		case tt.field == "" && err != nil:
			t.Errorf("Validate(%s) = %v, want nil", tt.name, err)
		case tt.field == "-" && err == nil:
			t.Errorf("Validate(%s) = nil, want an error", tt.name)
		case tt.field != "" && tt.field != "-" && (!errors.As(err, &se) || se.Field != tt.field):
			t.Errorf("Validate(%s) = %v, want a *setting.Error for %s", tt.name, err, tt.field)
		}
		dir := []float64{7, 7}
		_, derr := Direction(tt.e, []float64{3, 4, 1, 0}, dir)
		if (derr == nil) != (err == nil) || (err != nil && dir[0] != 7) {
			t.Errorf("Direction(%s) = %v, dir %v; Validate said %v", tt.name, derr, dir, err)
		}
	}
}

// One validation path: every constructor accepts exactly the values Spec
// accepts for the same setting (on main, Constant(1e-40) and Constant(1e39)
// were accepted where Spec refused them), and refuses the others with a
// *setting.Error.
func TestConstructorsAgreeWithSpec(t *testing.T) {
	values := []float64{1, 0.5, setting.MinNormal32, math.MaxFloat32, 1e-40, 1e39, 1e-320, 0, -1, math.NaN(), math.Inf(1), math.Inf(-1)}
	type check struct {
		name string
		spec func(x float64) Spec
		ctor func(x float64) error
	}
	err := func(_ any, err error) error { return err }
	checks := []check{
		{"Constant", func(x float64) Spec { return Spec{Estimator: "ps-clip-sgd", Clip: x} },
			func(x float64) error { return err(Constant(x)) }},
		{"NewClipSGD", func(x float64) Spec { return Spec{Estimator: "clip-sgd", Clip: x} },
			func(x float64) error { return err(NewClipSGD(x)) }},
		{"Increasing α", func(x float64) Spec { return Spec{Estimator: "ps-clip-sgd", Alpha: x, Beta: 2} },
			func(x float64) error { return err(Increasing(x, 2)) }},
		{"NewPSAuto α", func(x float64) Spec { // α 0 is automatic
			return Spec{Estimator: "ps-clip-sgd", Alpha: x, AutoAlpha: x == 0, AutoBeta: true}
		},
			func(x float64) error { return err(NewPSAuto(x, 0, 0)) }},
		{"NewAutoClip", func(x float64) Spec { return Spec{Estimator: "auto-clip", AutoClipR: x} },
			func(x float64) error { return err(NewAutoClip(x)) }},
		{"NewQuantile rate", func(x float64) Spec { return Spec{Estimator: "ps-clip-quantile", QuantileRate: x} },
			func(x float64) error { return err(NewQuantile(0, x, 0)) }},
		{"NewQuantile γ", func(x float64) Spec { return Spec{Estimator: "ps-clip-quantile", Clip: x} },
			func(x float64) error { return err(NewQuantile(0, 0, x)) }},
	}
	for _, c := range checks {
		for _, x := range values {
			specErr, ctorErr := c.spec(x).Validate(), c.ctor(x)
			if (specErr == nil) != (ctorErr == nil) {
				t.Errorf("%s(%v) = %v, Spec.Validate = %v: they disagree", c.name, x, ctorErr, specErr)
			}
			var se *setting.Error
			if ctorErr != nil && !errors.As(ctorErr, &se) {
				t.Errorf("%s(%v) = %v, want a *setting.Error", c.name, x, ctorErr)
			}
		}
	}
}

func benchmarkDirection(b *testing.B, e Estimator, n, d int) {
	r := rand.New(rand.NewPCG(1, 1))
	g := make([]float64, n*d)
	for i := range g {
		g[i] = r.NormFloat64()
	}
	dir := make([]float64, d)
	var ws Workspace[float64]
	b.SetBytes(int64(8 * n * d))
	for b.Loop() {
		ws.Direction(e, g, dir)
	}
}

func BenchmarkDirection(b *testing.B) {
	inc, _ := Increasing(1, 1.5)
	con, _ := Constant(1)
	for _, s := range []struct{ n, d int }{{64, 10}, {64, 1000}} {
		for _, e := range []Estimator{SGD{}, ClipSGD{Gamma: 1}, NSGD{}, NewPSClip(con), NewPSClip(inc)} {
			name := e.Name()
			if ps, ok := e.(*PSClip); ok {
				name += "/" + ps.Threshold().String()
			}
			b.Run(name+"/n="+itoa(s.n)+",d="+itoa(s.d), func(b *testing.B) { benchmarkDirection(b, e, s.n, s.d) })
		}
	}
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}
