package quadratic

import (
	"fmt"
	"math"
	"sync"
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
	// sums[pi·nm + m] is the sum over the runs of method m's curve at
	// c.P[pi], the runs added in run order whichever worker finishes first.
	sums := make([][]float64, len(c.P)*nm)
	for i := range sums {
		sums[i] = make([]float64, c.T)
	}
	fold := orderedSum{size: nm * c.T, add: func(job int, curves []float64) {
		pi := job / c.Runs
		for m := range nm {
			sum := sums[pi*nm+m]
			for t, v := range curves[m*c.T : (m+1)*c.T] {
				sum[t] += v
			}
		}
	}}
	sims := make([]*sim, workers(c))
	for w := range sims {
		sims[w] = newSim(c)
	}
	forEach(c, len(sims), func(w, pi, r int) {
		curves := fold.buffer()
		sims[w].run(c.P[pi], r, noise[pi], plan[pi], func(m, t int, n float64) { curves[m*c.T+t] = n })
		fold.done(pi*c.Runs+r, curves)
	})
	res := Result{Config: c}
	for pi, p := range c.P {
		for m, name := range c.Methods {
			curve := sums[pi*nm+m]
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

// An orderedSum adds the outputs of forEach's jobs, numbered pi·Runs + r
// in the order forEach hands them out, in that order, whichever finishes
// first: a job's output waits in its buffer until the jobs before it are
// added, and only as many buffers exist as outputs have waited at once (a
// few, not one per run). So sums over runs do not depend on the scheduling.
type orderedSum struct {
	size int                          // of a job's output
	add  func(job int, out []float64) // adds a job's output, called in job order

	mu      sync.Mutex
	next    int               // the job whose output is added next
	waiting map[int][]float64 // the outputs of jobs after next, by job
	free    [][]float64
}

// buffer returns a buffer for a job's output.
func (o *orderedSum) buffer() []float64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	if n := len(o.free); n > 0 {
		b := o.free[n-1]
		o.free = o.free[:n-1]
		return b
	}
	return make([]float64, o.size)
}

// done hands over job's output, in a buffer from buffer, and adds what is
// now next in job order.
func (o *orderedSum) done(job int, out []float64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.waiting == nil {
		o.waiting = make(map[int][]float64)
	}
	o.waiting[job] = out
	for {
		b, ok := o.waiting[o.next]
		if !ok {
			return
		}
		delete(o.waiting, o.next)
		o.add(o.next, b)
		o.free = append(o.free, b)
		o.next++
	}
}
