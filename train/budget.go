package train

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/setting"
)

// MemoryBudget is a per-sample memory budget as a user states it
// (ParseMemoryBudget): a ratio of the per-sample step's memory to the
// plain step's, each layer's own rule, none, or a number of bytes.
// Config.PerSampleMemory takes the bytes it comes to (Bytes). The zero
// value is the default, DefaultMemoryRatio.
type MemoryBudget struct {
	// Size is the budget in bytes when Ratio is 0 and Size is not:
	// nn.NoMaterialise none. Both 0: the default ratio.
	Size int64
	// Ratio, when not 0, bounds the per-sample step's memory to about
	// Ratio times the plain step's: the budget is (Ratio − 1) times the
	// plain step's memory (the norms' other buffers, Gram matrices and
	// the like, add a few per cent). It is at least 1.
	Ratio float64
	// Auto leaves each layer to its own rule (Config.PerSampleMemory 0):
	// per-sample gradients held only where they take no more memory than
	// the activations the layer keeps anyway.
	Auto bool
}

// DefaultMemoryRatio is the ratio of the zero MemoryBudget: per-sample
// gradients may take 0.3 times the memory a plain step holds
// (PlainStepBytes). On the GPTs of README's speed table that holds nearly
// every layer's, where the ghost norm's Gram matrices cost the most time.
const DefaultMemoryRatio = 1.3

// Bytes returns the budget in bytes for Config.PerSampleMemory, given the
// plain step's memory in bytes: PlainStepBytes' measure, or a lower bound
// (a model's TrainingBytes) where a check must come before the model is
// built, so that a ratio errs on the side of less.
func (m MemoryBudget) Bytes(plain float64) int64 {
	switch {
	case m.Auto:
		return 0
	case m.Ratio == 0 && m.Size != 0:
		return m.Size
	}
	r := m.Ratio
	if r == 0 {
		r = DefaultMemoryRatio
	}
	b := math.Floor((r - 1) * plain)
	switch {
	case b < 1:
		return nn.NoMaterialise
	case b >= math.MaxInt64:
		return math.MaxInt64
	}
	return int64(b)
}

// Measured reports whether Bytes needs the plain step's memory: whether
// the budget is a ratio, the default's included.
func (m MemoryBudget) Measured() bool { return !m.Auto && (m.Ratio != 0 || m.Size == 0) }

// For returns the bytes for cfg.PerSampleMemory: a ratio's of the plain
// step measured on micro-batches shaped like b (PlainStepBytes, before cfg
// has trained); 0 for the default budget where cfg's estimator is not
// per-sample, which has no use for one (a budget stated otherwise is
// returned as it is, for New to refuse).
func (m MemoryBudget) For(cfg Config, b Batch) (int64, error) {
	if cfg.Estimator == nil || !cfg.Estimator.PerSample() {
		if m == (MemoryBudget{}) {
			return 0, nil
		}
		return m.Bytes(0), nil
	}
	if !m.Measured() {
		return m.Bytes(0), nil
	}
	plain, err := PlainStepBytes(cfg, b)
	if err != nil {
		return 0, err
	}
	return m.Bytes(float64(plain)), nil
}

// String returns the budget as ParseMemoryBudget reads it, a size in the
// largest binary unit that divides it; the zero value's is its ratio.
func (m MemoryBudget) String() string {
	switch {
	case m.Auto:
		return "auto"
	case m.Ratio != 0:
		return strconv.FormatFloat(m.Ratio, 'g', -1, 64) + "x"
	case m.Size == 0:
		return strconv.FormatFloat(DefaultMemoryRatio, 'g', -1, 64) + "x"
	case m.Size == nn.NoMaterialise:
		return "none"
	}
	for _, u := range []struct {
		suffix string
		scale  int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if m.Size%u.scale == 0 {
			return strconv.FormatInt(m.Size/u.scale, 10) + u.suffix
		}
	}
	return strconv.FormatInt(m.Size, 10)
}

// units are the byte units ParseMemoryBudget reads, decimal and binary.
var units = []struct {
	suffix string
	scale  float64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"kB", 1e3}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1},
}

// ParseMemoryBudget reads a per-sample memory budget: a ratio to the plain
// step's memory such as "1.3x" (the default's), "auto" (each layer's own
// rule), "none" or "0" (no per-sample gradient materialised), or a size
// such as "512MiB", "1.5GB" or "300000000" (a whole number of bytes: "1.35"
// is refused, not read as 1 byte). Anything else is a *setting.Error for
// the field PerSampleMemory.
func ParseMemoryBudget(s string) (MemoryBudget, error) {
	bad := func() (MemoryBudget, error) {
		return MemoryBudget{}, setting.Errorf("PerSampleMemory", strconv.Quote(s), "a ratio to the plain step's memory such as 1.3x, auto, none, or a size such as 512MiB or 2GB")
	}
	switch s {
	case "auto":
		return MemoryBudget{Auto: true}, nil
	case "none", "0":
		return MemoryBudget{Size: nn.NoMaterialise}, nil
	}
	if r, ok := strings.CutSuffix(s, "x"); ok {
		v, err := strconv.ParseFloat(r, 64)
		if err != nil || !(v >= 1) || math.IsInf(v, 1) {
			return bad()
		}
		return MemoryBudget{Ratio: v}, nil
	}
	num, scale, unit := s, 1.0, false
	for _, u := range units {
		if r, ok := strings.CutSuffix(s, u.suffix); ok {
			num, scale, unit = r, u.scale, true
			break
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	b := math.Floor(v * scale)
	if err != nil || !(b >= 0) || b >= math.MaxInt64 {
		return bad()
	}
	if !unit && b != v { // "1.35": a ratio without its x, not 1 byte
		return MemoryBudget{}, setting.Errorf("PerSampleMemory", strconv.Quote(s), "a whole number of bytes, a size with its unit (512MiB) or a ratio with its x (%sx)", s)
	}
	if b == 0 {
		return MemoryBudget{Size: nn.NoMaterialise}, nil
	}
	return MemoryBudget{Size: int64(b)}, nil
}

// PlainStepBytes measures the memory a plain step of cfg's model holds on
// micro-batches shaped like b: it runs the model forward and backward on
// b as a plain (not per-sample) step does and returns nn.HeldBytes of the
// model and cfg.Optimizer. The layers, the shapes and the optimizer decide
// it, not GOMAXPROCS, b's values or what ran before, provided no
// per-sample step did (the buffers a model keeps from one would count), so
// a budget planned from it is the same on a resume and on any number of
// threads. Dropout draws from a source of its own, not cfg.Rand, and the
// parameters' gradients are left zero: a run that measures trains as one
// that does not; the loss is called once, on b. cfg needs only Model, Loss
// or FloatLoss, and Optimizer.
func PlainStepBytes(cfg Config, b Batch) (int64, error) {
	_, guard, err := check(cfg.Model, []Batch{b}, cfg.FloatLoss != nil)
	if err != nil {
		return 0, err
	}
	ctx := nn.Context{Train: true, Rand: rand.New(rand.NewPCG(0, 0))}
	out, err := forward(&ctx, cfg.Model, b.X, guard)
	if err != nil {
		return 0, &BatchError{Err: err}
	}
	_, dout, err := cfg.loss(out, b)
	if err != nil {
		return 0, &BatchError{Err: err}
	}
	nn.BackwardParams(&ctx, cfg.Model, dout)
	for _, p := range nn.Trainable(cfg.Model.Params()) {
		clear(p.Grad.Data)
	}
	return nn.HeldBytes(cfg.Model, cfg.Optimizer), nil
}
