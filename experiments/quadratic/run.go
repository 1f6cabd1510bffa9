package quadratic

import (
	"fmt"
	"math"
)

// Row is one line of the paper's table: the minimal and the average over
// t = 1..T of the run-averaged gradient norm.
type Row struct {
	P           float64 `json:"p"`
	Method      string  `json:"method"`
	MinGradNorm float64 `json:"min_grad_norm"`
	AvgGradNorm float64 `json:"avg_grad_norm"`
	// Curve is the gradient norm |∇F(x_t)| averaged over the runs, for
	// t = 1..T (Curve[t-1]).
	Curve []float64 `json:"-"`
}

// Result is the outcome of Run. Rows are ordered by Config.P, then by
// Config.Methods.
type Result struct {
	Rows   []Row  `json:"rows"`
	Config Config `json:"config"`
}

// Run runs the convergence experiment on all cores. The result depends only
// on c, not on GOMAXPROCS.
func Run(c Config) (Result, error) {
	if err := c.Validate(); err != nil {
		return Result{}, fmt.Errorf("quadratic: %w", err)
	}
	plan, _ := c.plan()
	noise := make([]*pareto, len(c.P))
	for pi, p := range c.P {
		noise[pi] = newPareto(p)
	}
	nm := len(c.Methods)
	// norms[(pi·Runs + r)·nm + m][t]: each run writes only its own curves,
	// and the average over runs below is summed in run order.
	norms := make([][]float64, len(c.P)*c.Runs*nm)
	for i := range norms {
		norms[i] = make([]float64, c.T)
	}
	sims := make([]*sim, workers(c))
	for w := range sims {
		sims[w] = newSim(c)
	}
	forEach(c, len(sims), func(w, pi, r int) {
		base := (pi*c.Runs + r) * nm
		sims[w].run(c.P[pi], r, noise[pi], plan[pi], func(m, t int, n float64) { norms[base+m][t] = n })
	})
	res := Result{Config: c}
	for pi, p := range c.P {
		for m, name := range c.Methods {
			curve := make([]float64, c.T)
			for r := range c.Runs {
				for t, v := range norms[(pi*c.Runs+r)*nm+m] {
					curve[t] += v
				}
			}
			row := Row{P: p, Method: name, MinGradNorm: math.Inf(1), Curve: curve}
			for t := range curve {
				curve[t] /= float64(c.Runs)
				row.MinGradNorm = min(row.MinGradNorm, curve[t])
				row.AvgGradNorm += curve[t]
			}
			row.AvgGradNorm /= float64(c.T)
			res.Rows = append(res.Rows, row)
		}
	}
	return res, nil
}
