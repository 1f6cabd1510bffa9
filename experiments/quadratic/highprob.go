package quadratic

import (
	"fmt"
	"slices"

	"github.com/psclip/psclip/internal/detmath"
)

// DefaultHighProbConfig is the paper's untuned high-probability experiment:
// 10⁴ runs of T = 100 iterations.
func DefaultHighProbConfig() Config {
	c := DefaultConfig()
	c.T, c.Runs = 100, 10000
	return c
}

// LogInvDeltas are the failure probabilities of HighProb, as log(1/δ).
var LogInvDeltas = []int{1, 2, 3, 4, 5, 6, 7, 8, 9}

// Quantile is one point of the paper's high-probability figure: the
// (1−δ)-quantile over the runs of the average gradient norm
// (1/T) Σ_t |∇F(x_t)|.
type Quantile struct {
	P           float64 `json:"p"`
	Method      string  `json:"method"`
	LogInvDelta int     `json:"log_inv_delta"`
	Quantile    float64 `json:"quantile"`
}

// HighProbResult is the outcome of HighProb. Rows are ordered by Config.P,
// then Config.Methods, then LogInvDeltas.
type HighProbResult struct {
	Rows   []Quantile `json:"rows"`
	Config Config     `json:"config"`
}

// HighProb runs the high-probability experiment on all cores. The result
// depends only on c, not on GOMAXPROCS.
func HighProb(c Config) (HighProbResult, error) {
	if err := c.Validate(); err != nil {
		return HighProbResult{}, fmt.Errorf("quadratic: %w", err)
	}
	plan, _ := c.plan()
	noise := make([]*pareto, len(c.P))
	for pi, p := range c.P {
		noise[pi] = newPareto(p)
	}
	nm := len(c.Methods)
	// avg[(pi·nm + m)·Runs + r] is run r's average gradient norm.
	avg := make([]float64, len(c.P)*nm*c.Runs)
	sims := make([]*sim, workers(c))
	for w := range sims {
		sims[w] = newSim(c)
	}
	sums := make([][]float64, len(sims))
	for w := range sums {
		sums[w] = make([]float64, nm)
	}
	forEach(c, len(sims), func(w, pi, r int) {
		sum := sums[w]
		clear(sum)
		sims[w].run(c.P[pi], r, noise[pi], plan[pi], func(m, _ int, n float64) { sum[m] += n })
		for m, s := range sum {
			avg[(pi*nm+m)*c.Runs+r] = s / float64(c.T)
		}
	})
	res := HighProbResult{Config: c}
	for pi, p := range c.P {
		for m, name := range c.Methods {
			runs := avg[(pi*nm+m)*c.Runs : (pi*nm+m+1)*c.Runs]
			slices.Sort(runs)
			for _, k := range LogInvDeltas {
				res.Rows = append(res.Rows, Quantile{P: p, Method: name, LogInvDelta: k, Quantile: quantile(runs, 1-detmath.Exp(-float64(k)))})
			}
		}
	}
	return res, nil
}

// quantile returns the q-quantile of the sorted values, interpolating
// linearly between order statistics (NumPy's default, Hyndman–Fan type 7).
func quantile(sorted []float64, q float64) float64 {
	h := float64(q * float64(len(sorted)-1)) // see roundProducts
	i := int(h)
	if i >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + float64((h-float64(i))*(sorted[i+1]-sorted[i])) // see roundProducts
}
