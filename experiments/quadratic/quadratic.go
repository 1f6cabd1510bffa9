// Package quadratic reproduces the paper's noisy-quadratic experiments:
// minimising f(x, ξ) = ½|x|² + ⟨x, ξ⟩ in R^d, whose stochastic gradient is
// x + ξ and whose true gradient is ∇F(x) = x (E ξ = 0), with heavy-tailed
// noise ξ of i.i.d. symmetrized-Pareto components of tail index p.
//
// Run is the convergence experiment (the paper's table of minimal and average
// gradient norms, T = 2000 iterations, 10 runs); HighProb is the
// high-probability study ((1−δ)-quantiles of the average gradient norm over
// 10⁴ runs of T = 100 iterations).
//
// Choices the paper leaves open, fixed here by reproducing its untuned table
// (see README.md for the evidence):
//
//   - noise: every component is ±P with a fair random sign, P Pareto with
//     scale 1 and shape p (P ≥ 1, P(P > s) = s^(−p)), sampled by
//     inversion, U^(−1/p) with U uniform (see pareto);
//   - start: x_1 ~ N(0, I_d), drawn afresh for every run;
//   - aggregation: the gradient norms |∇F(x_t)| = |x_t|, t = 1..T, are
//     averaged over the runs into one curve; the "minimal gradient norm" is
//     the minimum of that curve over t and the "average gradient norm" its
//     mean over t;
//   - common random numbers: for a given p and run every method starts from
//     the same x_1 and sees the same noise at every step, which is why
//     normalized SGD and Clip-SGD with γ = 1 agree to three or four digits,
//     as in the paper, and makes method differences less noisy.
//
// Run r for tail index p draws from its own PCG stream seeded from
// (Seed, p, r), so results are identical whatever the number of goroutines.
package quadratic

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/internal/jsonkeys"
	"github.com/psclip/psclip/setting"
)

// MethodNames are the estimators the experiment runs: estimator.Names but
// dp-sgd, whose noise and accounting are package train's.
var MethodNames = slices.DeleteFunc(slices.Clone(estimator.Names), func(m string) bool { return m == "dp-sgd" })

// Config describes an experiment. The zero value is not useful: start from
// DefaultConfig or DefaultHighProbConfig.
type Config struct {
	P       []float64 `json:"p"`       // tail indices of the noise, each > 1
	Methods []string  `json:"methods"` // estimator names (MethodNames)
	T       int       `json:"T"`       // iterations per run
	N       int       `json:"n"`       // batch size
	Dim     int       `json:"d"`       // dimension of x
	Runs    int       `json:"runs"`    // independent runs per p
	Seed    uint64    `json:"seed"`
	// Eta is the step size of every method and p, unless Tuned selects
	// the paper's tuned values (TunedParams) instead.
	Eta   float64 `json:"eta"`
	Tuned bool    `json:"tuned"`
	// Spec holds the estimator settings of every method and p, each
	// method taking those it reads: Clip-SGD's threshold Clip and
	// PS-Clip-SGD's threshold α·k^(1/β), numbers unless Tuned. AutoAlpha
	// and AutoBeta make PS-Clip-SGD estimate α = σ̂ or β = p̂ online
	// (estimator.PSAuto) instead, tuned or not; with both it is the method
	// ps-clip-auto. Its Estimator is unset: Methods names them. Its JSON
	// keys are the experiment's own ("gamma" for Clip).
	estimator.Spec
}

// jsonRename maps the keys of estimator.Spec to the experiment's own.
var jsonRename = map[string]string{"clip": "gamma"}

// MarshalJSON writes c with the keys the experiment's results have always
// had: "gamma", "alpha", "beta" beside the others.
func (c Config) MarshalJSON() ([]byte, error) {
	type plain Config
	b, err := json.Marshal(plain(c))
	if err != nil {
		return nil, err
	}
	return jsonkeys.Rewrite(b, jsonRename)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (c *Config) UnmarshalJSON(b []byte) error {
	b, err := jsonkeys.Rewrite(b, jsonkeys.Invert(jsonRename))
	if err != nil {
		return err
	}
	type plain Config
	return json.Unmarshal(b, (*plain)(c))
}

// DefaultConfig is the paper's untuned convergence experiment.
func DefaultConfig() Config {
	return Config{
		P:       []float64{1.8, 1.5, 1.2},
		Methods: []string{"clip-sgd", "ps-clip-sgd", "nsgd"},
		T:       2000, N: 64, Dim: 10, Runs: 10, Seed: 1,
		Eta: 0.01, Spec: estimator.Spec{Clip: 1, Alpha: 1, Beta: 1},
	}
}

// Hyper are one method's hyperparameters: its step size and estimator
// settings.
type Hyper struct {
	Eta float64
	estimator.Spec
}

// TunedParams is the paper's table of tuned hyperparameters, by p and
// method. PS-Clip-SGD only had α tuned, with β = p.
var TunedParams = map[float64]map[string]Hyper{
	1.8: {
		"clip-sgd":    {Eta: 0.5, Spec: estimator.Spec{Estimator: "clip-sgd", Clip: 0.1}},
		"ps-clip-sgd": {Eta: 0.05, Spec: estimator.Spec{Estimator: "ps-clip-sgd", Alpha: 1, Beta: 1.8}},
		"nsgd":        {Eta: 0.05, Spec: estimator.Spec{Estimator: "nsgd"}},
	},
	1.5: {
		"clip-sgd":    {Eta: 0.05, Spec: estimator.Spec{Estimator: "clip-sgd", Clip: 0.6}},
		"ps-clip-sgd": {Eta: 0.05, Spec: estimator.Spec{Estimator: "ps-clip-sgd", Alpha: 1, Beta: 1.5}},
		"nsgd":        {Eta: 0.05, Spec: estimator.Spec{Estimator: "nsgd"}},
	},
	1.2: {
		"clip-sgd":    {Eta: 0.4, Spec: estimator.Spec{Estimator: "clip-sgd", Clip: 0.1}},
		"ps-clip-sgd": {Eta: 0.05, Spec: estimator.Spec{Estimator: "ps-clip-sgd", Alpha: 1, Beta: 1.2}},
		"nsgd":        {Eta: 0.05, Spec: estimator.Spec{Estimator: "nsgd"}},
	},
}

// Validate reports the first problem with c.
func (c Config) Validate() error {
	switch {
	case len(c.P) == 0:
		return errors.New("no tail index p")
	case len(c.Methods) == 0:
		return errors.New("no method")
	case c.T <= 0:
		return fmt.Errorf("T = %d iterations, want T > 0", c.T)
	case c.N <= 0:
		return fmt.Errorf("batch size n = %d, want n > 0", c.N)
	case c.Dim <= 0:
		return fmt.Errorf("dimension d = %d, want d > 0", c.Dim)
	case c.Runs <= 0:
		return fmt.Errorf("runs = %d, want runs > 0", c.Runs)
	}
	for i, p := range c.P {
		if !(p > 1) || math.IsInf(p, 1) {
			return fmt.Errorf("tail index p = %v, want a finite p > 1 (the noise needs a finite mean)", p)
		}
		if slices.Contains(c.P[:i], p) {
			return fmt.Errorf("tail index p = %v given twice", p)
		}
	}
	for i, m := range c.Methods {
		switch {
		case !slices.Contains(MethodNames, m):
			return setting.Errorf("Methods", strconv.Quote(m), "estimators among %s", strings.Join(MethodNames, ", "))
		case slices.Contains(c.Methods[:i], m):
			return setting.Errorf("Methods", strconv.Quote(m), "each method once (it is listed twice)")
		}
	}
	if c.Estimator != "" {
		return setting.Unread("Estimator", c.Estimator, "Methods names the estimators")
	}
	_, err := c.plan()
	return err
}

// Reads reports whether some method reads field: Eta (the step size) or a
// field of estimator.Spec. With Tuned, Eta and the thresholds' numbers come
// from TunedParams, so only AutoAlpha and AutoBeta are read. The shared
// settings are defaults for the methods that read them, so Validate does
// not refuse one that no method reads; a command that sets them from its
// flags refuses a flag given for a setting no method reads.
func (c Config) Reads(field string) bool {
	switch field {
	case "Eta":
		return !c.Tuned
	case "Clip", "Alpha", "Beta":
		if c.Tuned {
			return false
		}
	}
	return slices.ContainsFunc(c.Methods, func(name string) bool {
		s := c.Spec
		s.Estimator = name
		return slices.Contains(MethodNames, name) && s.Reads(field)
	})
}

// Hyper returns the hyperparameters method uses at tail index p.
func (c Config) Hyper(p float64, method string) (Hyper, error) {
	h := Hyper{Eta: c.Eta, Spec: c.Spec}
	if c.Tuned {
		var ok bool
		if h, ok = TunedParams[p][method]; !ok {
			return Hyper{}, fmt.Errorf("the paper has no tuned parameters for %s at p = %v (it tuned clip-sgd, ps-clip-sgd and nsgd at p = 1.8, 1.5, 1.2)", method, p)
		}
	}
	h.Estimator, h.AutoAlpha, h.AutoBeta = method, c.AutoAlpha, c.AutoBeta
	if method == "ps-clip-sgd" && h.Beta == 0 && !h.AutoBeta {
		// β = 0 would be the constant threshold; the experiment's is α·k^(1/β).
		return Hyper{}, setting.Errorf("Beta", h.Beta, "a positive normal float32 or automatic: PS-Clip-SGD's threshold here is α·k^(1/β)")
	}
	if h.AutoAlpha {
		h.Alpha = 0
	}
	if h.AutoBeta {
		h.Beta = 0
	}
	h.Spec = h.Trim()
	return h, nil
}

// A method is an estimator's settings with its step size.
type method struct {
	spec estimator.Spec
	eta  float64
}

// estimator returns a fresh estimator: every run gets its own, because an
// adaptive estimator keeps state from batch to batch (and runs must not
// share it, across goroutines or otherwise).
func (m method) estimator() estimator.Estimator {
	e, err := m.spec.New()
	if err != nil {
		panic(err) // plan has built it once already
	}
	return e
}

// plan returns every method's parameters and step size, by p (outer) and
// method, in Config order, after checking that the estimators build.
func (c Config) plan() ([][]method, error) {
	plan := make([][]method, len(c.P))
	for pi, p := range c.P {
		plan[pi] = make([]method, len(c.Methods))
		for m, name := range c.Methods {
			h, err := c.Hyper(p, name)
			if err != nil {
				return nil, err
			}
			if !(h.Eta > 0 && !math.IsInf(h.Eta, 1)) {
				return nil, setting.Errorf("Eta", h.Eta, "a finite step size > 0")
			}
			if _, err := h.New(); err != nil {
				return nil, err
			}
			plan[pi][m] = method{h.Spec, h.Eta}
		}
	}
	return plan, nil
}

// forEach calls job(w, pi, r) for every tail index c.P[pi] and run r, on
// all cores; w identifies the calling worker (0 ≤ w < workers) so that jobs
// can reuse per-worker scratch space. Jobs must write only their own outputs.
func forEach(c Config, workers int, job func(w, pi, r int)) {
	total := len(c.P) * c.Runs
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= total {
					return
				}
				job(w, i/c.Runs, i%c.Runs)
			}
		})
	}
	wg.Wait()
}

func workers(c Config) int { return max(1, min(runtime.GOMAXPROCS(0), len(c.P)*c.Runs)) }

// sim runs all of a Config's methods in lockstep for one (p, run): the same
// start and the same noise for every method. A sim is one worker's scratch
// space.
//
// The stochastic gradients are y_k = x + ξ_k, so the estimators' weighted
// sum Σ_k w_k y_k = (Σ_k w_k)·x + Σ_k w_k ξ_k needs no y_k stored. An
// estimator whose weights do not depend on the norms (SGD, Clip-SGD, NSGD)
// weights the always-finite samples equally: its sum is x + ξ̄, and the
// noise mean ξ̄ is computed once per step for all of them. The sums Σ_k w_k ξ_k
// of a step, one per per-sample method and one with unit weights for ξ̄, are
// computed together (weightedSums).
type sim struct {
	c     Config
	ests  []estimator.Estimator // per method, fresh for every run
	x     [][]float64           // per method
	noise []float64             // n×d
	norms []float64             // per sample
	// slot[m] is method m's weighted sum: ws[slot[m]] its weights (ones
	// for the methods that average), sums[slot[m]] the sum and
	// sw[slot[m]] the sum of the weights. The first len(ws) are in use.
	slot     []int
	ws, sums [][]float64
	sw       []float64
	weights  [][]float64 // per-sample methods' weights, n each; len(c.Methods) of them
	ones     []float64   // n ones
	dir      []float64
}

func newSim(c Config) *sim {
	nm := len(c.Methods)
	s := &sim{
		c:       c,
		ests:    make([]estimator.Estimator, nm),
		x:       make([][]float64, nm),
		noise:   make([]float64, c.N*c.Dim),
		norms:   make([]float64, c.N),
		slot:    make([]int, nm),
		ws:      make([][]float64, 0, nm+1),
		sums:    make([][]float64, nm+1),
		sw:      make([]float64, nm+1),
		weights: make([][]float64, nm),
		ones:    make([]float64, c.N),
		dir:     make([]float64, c.Dim),
	}
	for m := range s.x {
		s.x[m] = make([]float64, c.Dim)
		s.weights[m] = make([]float64, c.N)
	}
	for i := range s.sums {
		s.sums[i] = make([]float64, c.Dim)
	}
	for k := range s.ones {
		s.ones[k] = 1
	}
	return s
}

// run simulates run r at tail index p with the given methods and calls
// record(m, t, |x_t|) for every method m and t = 0..T-1 (iteration t+1 in
// the paper's numbering).
func (s *sim) run(p float64, r int, noise *pareto, methods []method, record func(m, t int, norm float64)) {
	c := s.c
	src := newPCG(c.Seed, streamID(p, r))
	x1 := s.x[0]
	for i := range x1 {
		x1[i] = normal(src)
	}
	for m := 1; m < len(s.x); m++ {
		copy(s.x[m], x1)
	}
	s.ws = s.ws[:0]
	mean := -1 // the slot of ξ̄
	for m, meth := range methods {
		s.ests[m] = meth.estimator()
		switch {
		case s.ests[m].PerSample():
			s.slot[m] = len(s.ws)
			s.ws = append(s.ws, s.weights[m])
		case mean < 0:
			mean = len(s.ws)
			s.ws = append(s.ws, s.ones)
			fallthrough
		default:
			s.slot[m] = mean
		}
	}
	for t := range c.T {
		noise.fill(src, s.noise)
		for m, x := range s.x {
			record(m, t, norm(x))
			if e := s.ests[m]; e.PerSample() {
				sampleNorms(x, s.noise, s.norms)
				estimator.Weights(e, s.norms, s.weights[m])
			}
		}
		weightedSums(s.noise, s.ws, s.sums[:len(s.ws)], s.sw)
		if mean >= 0 {
			for j := range s.sums[mean] {
				s.sums[mean][j] /= float64(c.N)
			}
		}
		for m, x := range s.x {
			e, sum := s.ests[m], s.sums[s.slot[m]]
			if e.PerSample() {
				sw := s.sw[s.slot[m]]
				for j, v := range x {
					s.dir[j] = sum[j] + float64(sw*v) // see roundProducts
				}
			} else {
				for j, v := range x {
					s.dir[j] = v + sum[j]
				}
			}
			step := methods[m].eta * e.Scale(norm(s.dir))
			for j := range x {
				x[j] -= float64(step * s.dir[j]) // see roundProducts
			}
		}
	}
}

// streamID is the PCG stream of run r at tail index p: a mix of both, so
// that a run's noise depends on nothing else (not on the other p values in
// the Config, nor on scheduling).
func streamID(p float64, r int) uint64 {
	return splitmix(splitmix(math.Float64bits(p)) ^ uint64(r))
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

func norm(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += float64(v * v) // see roundProducts
	}
	return math.Sqrt(s)
}
