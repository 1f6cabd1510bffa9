// Package tail evaluates parameter-free per-sample clipping: the online
// tail estimates of the estimator package (Hill's p̂, the moment bound σ̂)
// and the thresholds built on them (ps-clip-auto: α = σ̂, β = p̂; Andrew et
// al.'s quantile-adaptive ps-clip-quantile; Bu et al.'s auto-clip), against
// the paper's untuned and tuned PS-Clip-SGD on its noisy quadratic, where
// the tail index p is known. It also traces p̂ and σ̂ over a training run
// from the per-sample norms in a JSON-lines log (Trace), for "psclip tail".
//
// The quadratic is experiments/quadratic's problem: f(x, ξ) = ½|x|² +
// ⟨x, ξ⟩ in R^d, stochastic gradients x + ξ_k, ξ with i.i.d. symmetrized
// Pareto(1, p) components, x_1 ~ N(0, I), and the paper's metrics (minimum
// and mean over t of the run-averaged |∇F(x_t)| = |x_t|). Its Run cannot
// host these estimators, which keep state across batches, so this package
// has its own loop in which every run builds fresh estimators, every method
// of a run sees the same start and the same noise, and run r of tail index
// p draws from a PCG stream of its own: results depend on the Config only,
// not on GOMAXPROCS.
package tail

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/experiments/quadratic"
	"github.com/psclip/psclip/provenance"
)

// Method is one row of the comparison: an estimator with its settings and
// step size.
type Method struct {
	Label string `json:"label"` // row name, e.g. "auto η=0.01"
	estimator.Spec
	Eta   float64 `json:"eta"`
	Tuned bool    `json:"tuned,omitempty"` // ps-clip-sgd with the paper's tuned α, β = p, η per p
}

// Config describes the quadratic evaluation.
type Config struct {
	P       []float64 `json:"p"`
	Methods []Method  `json:"methods"`
	T       int       `json:"T"`
	N       int       `json:"n"`
	Dim     int       `json:"d"`
	Runs    int       `json:"runs"`
	Seed    uint64    `json:"seed"`
}

// DefaultConfig is the paper's convergence experiment (T = 2000, n = 64,
// d = 10, 10 runs, p ∈ {1.8, 1.5, 1.2}) with the paper's untuned (α = β = 1,
// η = 0.01) and tuned (quadratic.TunedParams: α = 1, β = p, η = 0.05)
// PS-Clip-SGD, and the parameter-free thresholds at both step sizes.
func DefaultConfig() Config {
	var ms []Method
	for _, eta := range []float64{0.01, 0.05} {
		if eta == 0.01 {
			ms = append(ms, Method{Label: "untuned ps-clip-sgd", Spec: estimator.Spec{Estimator: "ps-clip-sgd", Alpha: 1, Beta: 1}, Eta: eta})
		} else {
			ms = append(ms, Method{Label: "tuned ps-clip-sgd", Spec: estimator.Spec{Estimator: "ps-clip-sgd"}, Tuned: true})
		}
		s := fmt.Sprintf(" η=%g", eta)
		ms = append(ms,
			Method{Label: "ps-clip-auto" + s, Spec: estimator.Spec{Estimator: "ps-clip-auto"}, Eta: eta},
			Method{Label: "ps-clip-quantile" + s, Spec: estimator.Spec{Estimator: "ps-clip-quantile"}, Eta: eta},
			Method{Label: "auto-clip" + s, Spec: estimator.Spec{Estimator: "auto-clip"}, Eta: eta},
		)
	}
	return Config{P: []float64{1.8, 1.5, 1.2}, Methods: ms, T: 2000, N: 64, Dim: 10, Runs: 10, Seed: 1}
}

// Validate reports the first problem with c.
func (c Config) Validate() error {
	switch {
	case len(c.P) == 0 || len(c.Methods) == 0:
		return fmt.Errorf("tail: no tail index or no method")
	case c.T <= 0 || c.N <= 0 || c.Dim <= 0 || c.Runs <= 0:
		return fmt.Errorf("tail: T = %d, n = %d, d = %d, runs = %d; want all > 0", c.T, c.N, c.Dim, c.Runs)
	}
	for _, p := range c.P {
		if !(p > 1) || math.IsInf(p, 1) {
			return fmt.Errorf("tail: tail index p = %v, want a finite p > 1", p)
		}
		for _, m := range c.Methods {
			if _, _, err := m.build(p); err != nil {
				return fmt.Errorf("tail: %s: %w", m.Label, err)
			}
		}
	}
	return nil
}

// build returns a fresh estimator for m at tail index p, and its step size.
func (m Method) build(p float64) (estimator.Estimator, float64, error) {
	spec, eta := m.Spec, m.Eta
	if m.Tuned {
		h, ok := quadratic.TunedParams[p]["ps-clip-sgd"]
		if !ok {
			return nil, 0, fmt.Errorf("the paper has no tuned ps-clip-sgd at p = %v", p)
		}
		spec.Alpha, spec.Beta, eta = h.Alpha, h.Beta, h.Eta
	}
	if !(eta > 0) || math.IsInf(eta, 1) {
		return nil, 0, fmt.Errorf("step size η = %v, want a finite η > 0", eta)
	}
	e, err := spec.New()
	return e, eta, err
}

// Row is one method's result at one p: the paper's metrics and, for
// ps-clip-auto, its estimates over time.
type Row struct {
	P           float64 `json:"p"`
	Label       string  `json:"method"`
	MinGradNorm float64 `json:"min_grad_norm"`
	AvgGradNorm float64 `json:"avg_grad_norm"`
	// Curve[t] is |x_{t+1}| averaged over the runs.
	Curve []float64 `json:"-"`
	// PHat and SigmaHat are the automatic threshold's estimates after step
	// t+1 averaged over the runs (NaN during the warm-up); PHatSD is the sd
	// of p̂ across runs. Only ps-clip-auto rows have them.
	PHat     []float64 `json:"-"`
	PHatSD   []float64 `json:"-"`
	SigmaHat []float64 `json:"-"`
}

// Result is the outcome of Run; rows are ordered by Config.P, then Methods.
type Result struct {
	Rows   []Row  `json:"rows"`
	Config Config `json:"config"`
	// Provenance is the command's record (package provenance), set by
	// the command that ran it; absent from a result of Run alone.
	Provenance *provenance.Record `json:"provenance,omitempty"`
}

// Run runs the evaluation on all cores.
func Run(c Config) (Result, error) {
	if err := c.Validate(); err != nil {
		return Result{}, err
	}
	nm := len(c.Methods)
	type runOut struct{ norm, phat, sigma [][]float64 } // by method, then t
	outs := make([]runOut, len(c.P)*c.Runs)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range max(1, min(runtime.GOMAXPROCS(0), len(outs))) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(outs) {
					return
				}
				o := &outs[i]
				o.norm, o.phat, o.sigma = grid(nm, c.T), grid(nm, c.T), grid(nm, c.T)
				simulate(c, c.P[i/c.Runs], i%c.Runs, o.norm, o.phat, o.sigma, nil)
			}
		})
	}
	wg.Wait()
	res := Result{Config: c}
	for pi, p := range c.P {
		for m, meth := range c.Methods {
			row := Row{P: p, Label: meth.Label, MinGradNorm: math.Inf(1), Curve: make([]float64, c.T)}
			auto := meth.Estimator == "ps-clip-auto" || meth.AutoAlpha || meth.AutoBeta
			if auto {
				row.PHat, row.PHatSD, row.SigmaHat = make([]float64, c.T), make([]float64, c.T), make([]float64, c.T)
			}
			for t := range c.T {
				var sn, sp, sp2, ss float64
				for r := range c.Runs {
					o := &outs[pi*c.Runs+r]
					sn += o.norm[m][t]
					sp += o.phat[m][t]
					sp2 += o.phat[m][t] * o.phat[m][t]
					ss += o.sigma[m][t]
				}
				n := float64(c.Runs)
				row.Curve[t] = sn / n
				row.MinGradNorm = min(row.MinGradNorm, row.Curve[t])
				row.AvgGradNorm += row.Curve[t] / float64(c.T)
				if auto {
					row.PHat[t], row.SigmaHat[t] = sp/n, ss/n
					row.PHatSD[t] = math.Sqrt(max(0, sp2/n-(sp/n)*(sp/n)))
				}
			}
			res.Rows = append(res.Rows, row)
		}
	}
	return res, nil
}

func grid(m, t int) [][]float64 {
	g := make([][]float64, m)
	for i := range g {
		g[i] = make([]float64, t)
	}
	return g
}

// simulate runs every method of c for run r at tail index p, recording
// |x_t| and, for automatic thresholds, p̂ and σ̂ (NaN during the warm-up).
// If sampleNorms is not nil it is called with every step's batch of
// stochastic gradients y (n rows of d) of every method.
func simulate(c Config, p float64, r int, norms, phat, sigma [][]float64, sampleNorms func(m, t int, y []float64) error) error {
	rng := rand.New(rand.NewPCG(c.Seed, splitmix(splitmix(math.Float64bits(p))^uint64(r))))
	d, n := c.Dim, c.N
	ests := make([]estimator.Estimator, len(c.Methods))
	etas := make([]float64, len(c.Methods))
	xs := make([][]float64, len(c.Methods))
	x1 := make([]float64, d)
	for j := range x1 {
		x1[j] = rng.NormFloat64()
	}
	for m, meth := range c.Methods {
		ests[m], etas[m], _ = meth.build(p) // checked by Validate
		xs[m] = slices.Clone(x1)
	}
	xi := make([]float64, n*d)
	y := make([]float64, n*d)
	dir := make([]float64, d)
	var ws estimator.Workspace[float64]
	for t := range c.T {
		paretoNoise(rng, p, xi)
		for m, x := range xs {
			norms[m][t] = l2(x)
			for k := range y {
				y[k] = x[k%d] + xi[k]
			}
			if sampleNorms != nil {
				if err := sampleNorms(m, t, y); err != nil {
					return err
				}
			}
			if _, err := ws.Direction(ests[m], y, dir); err != nil {
				return err
			}
			for j := range x {
				x[j] -= etas[m] * dir[j]
			}
			phat[m][t], sigma[m][t] = math.NaN(), math.NaN()
			if a, ok := ests[m].(*estimator.PSAuto); ok {
				if est, ok := a.Estimate(); ok {
					phat[m][t], sigma[m][t] = est.P, est.Sigma
				}
			}
		}
	}
	return nil
}

// WriteNormsLog runs run 0 of c at tail index p and writes the per-sample
// gradient norms |x_t + ξ_k| that method number m sees as a JSON-lines log
// of NormsRecord, one line per step: a training log Trace can read, from a
// problem whose tail index is known.
func WriteNormsLog(w io.Writer, c Config, p float64, m int) error {
	if err := c.Validate(); err != nil {
		return err
	}
	if m < 0 || m >= len(c.Methods) {
		return fmt.Errorf("tail: method %d of %d", m, len(c.Methods))
	}
	nm := len(c.Methods)
	bw := bufio.NewWriter(w)
	var line []byte
	err := simulate(c, p, 0, grid(nm, c.T), grid(nm, c.T), grid(nm, c.T), func(mi, t int, y []float64) error {
		if mi != m {
			return nil
		}
		line = fmt.Appendf(line[:0], `{"step":%d,"sample_norms":[`, t+1)
		for k := 0; k < len(y); k += c.Dim {
			if k > 0 {
				line = append(line, ',')
			}
			line = strconv.AppendFloat(line, l2(y[k:k+c.Dim]), 'g', -1, 64)
		}
		line = append(line, "]}\n"...)
		_, err := bw.Write(line)
		return err
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}

// paretoNoise fills xi with symmetrized Pareto(1, p) values ±exp(E/p), E
// standard exponential: the distribution of experiments/quadratic's noise,
// drawn directly (its table-based sampler is not exported).
func paretoNoise(rng *rand.Rand, p float64, xi []float64) {
	for i := range xi {
		v := math.Exp(rng.ExpFloat64() / p)
		if rng.Uint64()&1 == 0 {
			v = -v
		}
		xi[i] = v
	}
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

func l2(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v * v
	}
	return math.Sqrt(s)
}
