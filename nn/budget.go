package nn

import (
	"cmp"
	"slices"
)

// The per-sample memory budget.
//
// A layer whose per-sample gradients g_i have T > 1 rows behind them can
// take their norms two ways (rule.choose): the ghost norm, which costs two
// T×T Gram matrices a sample and no memory, or materialised gradients,
// which cost a pass over in·out floats a sample (the weighted sum; the norm
// is summed as the GEMM writes them) and their memory until
// Context.Finish. Left to itself (Context.PerSampleMemory 0), each layer
// materialises only where that is cheaper and its per-sample gradients
// take no more memory than the activations it holds anyway, which bounds a
// per-sample step's extra memory layer by layer. A budget bounds it for the
// whole step instead: the plan ranks the layers of one forward pass by the
// time materialising saves per byte it takes and materialises the best
// until the budget is spent. Given the same layers, shapes and budget the
// plan is the same, so a run's results do not depend on when it was
// planned (the first step, after a resume).
//
// The plan needs every layer of the pass before any of them decides:
// layers offer themselves in Forward and decide in Backward, when the
// forward pass is complete. Forward may act on the previous plan's
// decision (Linear forms its input's Gram matrices there, while the input
// is in cache); a layer whose decision turns out otherwise does that work
// in Backward instead, with the same result.

// NoMaterialise as Context.PerSampleMemory keeps every layer on the ghost
// norm: a per-sample step then holds no per-sample gradient of any layer.
const NoMaterialise int64 = -1

// offer is one layer of a forward pass as the plan sees it: n samples whose
// per-sample gradient is the product of t positions of in inputs and out
// outputs, the ghost norm costing gram flops a sample (rule.choose).
type offer struct {
	key           any
	n, t, in, out int
	gram          float64
}

// bytes is what the layer's materialised per-sample gradients take.
func (o offer) bytes() int64 { return 4 * int64(o.n) * int64(o.in) * int64(o.out) }

// saving is the time materialising saves, in GEMM flops a byte of the
// per-sample gradients it takes: the Gram matrices' flops less the passes'
// (passCost a float).
func (o offer) saving() float64 {
	g := float64(o.in) * float64(o.out)
	return (o.gram - passCost*g) / (4 * g)
}

// planner holds the offers of the latest forward pass and the plan made
// from them.
type planner struct {
	offers  []offer
	planned bool         // the plan below is made from offers
	budget  int64        // the budget it was made for
	mat     map[any]bool // layers it materialises
	// spent is the bytes of per-sample gradients the layers of the current
	// per-sample step materialise, whatever decided it.
	spent int64
}

// offer registers, in Forward, a layer whose per-sample choice is the
// plan's when Context.PerSampleMemory sets a budget, and returns the
// latest plan's choice for it, which Backward may revise.
func (c *Context) offer(o offer, r rule) (ghost bool) {
	p := &c.plan
	if c.PerSampleMemory <= 0 {
		return c.decide(o, r)
	}
	if p.planned || slices.ContainsFunc(p.offers, func(q offer) bool { return q.key == o.key }) {
		// A new forward pass: the previous plan stays for the hint.
		p.offers, p.planned = p.offers[:0], false
	}
	p.offers = append(p.offers, o)
	if o.t == 1 {
		return true
	}
	return !p.mat[o.key]
}

// choose returns, in a per-sample Backward, whether the layer of o uses the
// ghost norm: by the layer's rule r (its own, or one a test forces) without
// a budget, by the plan of the current forward pass with one. It counts what
// a materialising layer takes in PerSampleBytes.
func (c *Context) choose(o offer, r rule) (ghost bool) {
	ghost = c.decide(o, r)
	if !ghost {
		c.plan.spent += o.bytes()
	}
	return ghost
}

// decide is choose without the count.
func (c *Context) decide(o offer, r rule) (ghost bool) {
	switch {
	case c.PerSampleMemory == 0:
		return r.choose(o.t, o.in, o.out, o.gram)
	case c.PerSampleMemory < 0 || o.t == 1:
		return true
	}
	p := &c.plan
	if !p.planned || p.budget != c.PerSampleMemory {
		p.make(c.PerSampleMemory)
	}
	return !p.mat[o.key]
}

// make plans the offers under budget: the layers whose materialising
// saves time, best saving a byte first (the earlier offer first among
// equals), each while the bytes of those taken stay within the budget.
func (p *planner) make(budget int64) {
	order := make([]offer, 0, len(p.offers))
	for _, o := range p.offers {
		if o.t > 1 && o.saving() > 0 {
			order = append(order, o)
		}
	}
	slices.SortStableFunc(order, func(a, b offer) int { return cmp.Compare(b.saving(), a.saving()) })
	if p.mat == nil {
		p.mat = make(map[any]bool)
	}
	clear(p.mat)
	var spent int64
	for _, o := range order {
		if b := o.bytes(); spent+b <= budget {
			spent += b
			p.mat[o.key] = true
		}
	}
	p.planned, p.budget = true, budget
}

// PerSampleBytes returns the bytes of per-sample gradients that the layers
// of the current (or latest) per-sample step materialised: what the step
// held beyond a plain step's gradients, apart from small per-sample
// buffers (bias gradients, Gram matrices of one sample per goroutine).
func (c *Context) PerSampleBytes() int64 { return c.plan.spent }
