// Package train runs training steps: forward, backward, per-sample norm
// collection, the estimator's clipping and the optimizer's update, with
// gradient accumulation over micro-batches.
//
// A Trainer is configured with a model (any nn.Layer), a loss, an estimator
// and an optimizer. Step takes one or more micro-batches and performs exactly
// one optimizer update:
//
//   - an estimator that works per sample (estimator.PerSample) runs the model's
//     backward pass in the nn per-sample mode: every sample's gradient norm is
//     collected during the ordinary backward pass, the estimator turns the
//     norms into clip factors, and the clipped gradient is formed with no
//     second pass;
//   - any other estimator runs the plain backward pass;
//   - the estimator's batch-level Scale (Clip-SGD's clip, normalized SGD's
//     normalisation) is applied once to the accumulated gradient (Global), or
//     to every micro-batch's part before it is accumulated (MicroBatch, the
//     paper's MB-Clip on the micro-batch's share of the step's gradient;
//     MicroBatchMean on its own mean gradient).
//
// The micro-batches of one Step are one batch: every sample enters the
// average with weight 1/N (N the step's samples), a per-sample estimator's
// k counts the samples of the whole step, and an adaptive estimator learns
// once per step from all its norms, so K micro-batches give the update of
// one batch of the same samples in the same order (up to rounding), except
// for the per-micro-batch Scale of the MicroBatch scopes.
//
// Step checks its input before it runs anything and refuses a bad
// micro-batch with a *BatchError, leaving the parameters, the optimizer and
// the estimator as they were. Stats reports what the step did, with a
// summary of the per-sample gradient norms (and the norms themselves with
// Config.KeepNorms) and per-group gradient norms (Config.Groups) to tune
// thresholds from. Evaluate measures loss and accuracy with dropout off.
//
// # Differential privacy
//
// A noisy estimator (estimator.NoisyOf: DP-SGD) changes four things:
// its steps are PrivateStep's, given the step's whole Poisson sample and
// cutting it into micro-batches itself (Step refuses it, ErrPrivateStep,
// so that the noise cannot be added once per micro-batch); every sample's
// clipped gradient enters with weight 1/Config.ExpectedBatch (q·N under
// Poisson sampling) instead of 1/N, no weight is raised for a dropped
// sample, and the estimator's noise is added to the sum once per step,
// by rank 0 before the ranks' sums are added (so the job's sum holds it
// once); and Stats withhold what the step computed from the samples
// outside the noised gradient unless Config.SampleStats asks for it. An
// empty Poisson sample is an update by the noise alone. A step's memory
// is the per-sample engine's: the noise is drawn into the gradients in
// place, with no per-sample gradient formed. Package dp drives such a
// Trainer over a Dataset, with the sampler and the accountant.
//
// # Data parallelism
//
// With Config.Comm, the Trainer is one rank of a job that trains one model
// on several processes (package dist). Every rank's Step receives all K
// micro-batches of the step, checks all of them (so every rank refuses bad
// input alike) and computes only its share, dist.Share(K, rank, size),
// keeping every sample's global index: its weight 1/N, its k for an
// increasing threshold and its dropout masks (Config.Rand) are the ones one
// process gives it. The MicroBatch scopes clip each micro-batch on the rank
// that computes it, before adding it to the rank's running sum, so nothing
// more than the gradient is sent. One dist.Comm.AllReduce per step then sums
// the ranks' gradients (the running sums of clipped micro-batches in the
// MicroBatch scopes) together with the step's counts and its per-sample
// losses and norms, each at its place in the step; every rank then takes
// the rest of the step (a skipped step, the Global scope's Scale, the
// adaptive estimator's Update with every rank's norms in step order, the
// optimizer's update) from the same bits, so the ranks stay equal without
// ever sending weights. The update is one process's up to the order of the
// float32 additions of the gradients, and from equal weights Stats' counts,
// losses and norms are one process's exactly. A Loss that fails on one rank
// fails the step on every rank (the error from dist.AgreeError), leaving
// the state as it was.
//
// Memory. Global and per-sample clipping accumulate in place in Param.Grad.
// The MicroBatch scopes keep one running-sum buffer the size of the
// gradients: a micro-batch's gradient norm is known only once its gradient
// is complete,
// and once that gradient has been added in place to a running sum its own
// part can no longer be scaled, so clipping it needs either a second buffer
// or a second backward pass. psclip spends the buffer (the paper's
// implementation kept one too) and little time: per micro-batch, one pass
// takes the norm (kernels.SqNorm) and one adds the scaled gradient into the
// running sum while clearing it (kernels.AxpyZero), walking the spans
// backwards so that it starts on those the norm pass left in cache; the
// final move into Param.Grad replaces the paper's copy-back. On 917,504
// weights shaped like the small GPT's (BenchmarkMicroBatchPasses, 2 cores,
// load ≈ 5) the two passes take 0.62–0.77 ms a micro-batch, against
// 1.97–2.41 ms for the scalar loops they replaced.
package train

import (
	"encoding"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"

	"github.com/psclip/psclip/dist"
	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/internal/isnil"
	"github.com/psclip/psclip/kernels"
	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/setting"
	"github.com/psclip/psclip/tensor"
)

// Loss computes each sample's loss from the model's output and the targets,
// and the gradient of Σ_i loss_i with respect to the output (so each sample's
// slice of dout is the gradient of its own loss). Targets that do not fit the
// output are an error.
//
// Targets are class indices, nn.CrossEntropy's convention: one per row of
// the output's last dimension (one per sample for [B,C] outputs, one per
// position for [B,T,V]), each in [0, C). Step checks them against the
// model's output shape before it runs anything (see Trainer.Step). For
// float targets (regression) see FloatLoss.
type Loss func(out *tensor.Tensor, targets []int32) (losses []float32, dout *tensor.Tensor, err error)

// FloatLoss is Loss for float targets, regression's: one target per value
// of the output, in its order (Batch.T), each finite. nn.MSE is one. Step
// checks their number and finiteness before it runs anything.
type FloatLoss func(out *tensor.Tensor, targets []float32) (losses []float32, dout *tensor.Tensor, err error)

// Optimizer updates the parameters from their gradients (Param.Grad).
// optim.SGD and optim.AdamW are Optimizers.
type Optimizer interface {
	Step()
	// Params lists the parameters Step updates. New refuses an optimizer
	// with none, or with one that is not the model's.
	Params() []*nn.Param
}

// Scope says where the estimator's batch-level Scale is applied when a step
// accumulates several micro-batches.
type Scope int

const (
	// Global scales the accumulated gradient once: the usual practice.
	Global Scope = iota
	// MicroBatch scales every micro-batch's share of the step's gradient
	// before accumulating it: the paper's MB-Clip-SGD. Micro-batch j of m_j
	// samples, out of N in the step, contributes its share (m_j/N)·g_j of
	// the step's mean gradient (g_j/K for K micro-batches of equal size,
	// g_j its own mean gradient), and Clip-SGD's threshold γ bounds that
	// share: the update is Σ_j min(1, γ/|(m_j/N)·g_j|)·(m_j/N)·g_j. This is
	// what nanoGPT's loop does when it backpropagates loss/K and calls
	// clip_grad_norm_ per micro-batch, so the paper's γ carries over as is.
	MicroBatch
	// MicroBatchMean scales every micro-batch's own mean gradient g_j
	// instead, then takes the share: Σ_j (m_j/N)·min(1, γ/|g_j|)·g_j. For K
	// micro-batches of equal size it clips K times harder than MicroBatch
	// with the same γ (MicroBatch with K·γ is the same update), and K
	// identical micro-batches step as one batch clipped to γ.
	MicroBatchMean
)

func (s Scope) String() string {
	switch s {
	case Global:
		return "global"
	case MicroBatch:
		return "micro-batch"
	case MicroBatchMean:
		return "micro-batch-mean"
	}
	return fmt.Sprintf("Scope(%d)", int(s))
}

// Batch is one micro-batch: the model input and the targets of the loss,
// class indices (Y, for Config.Loss) or float targets (T, for
// Config.FloatLoss); the other is nil.
type Batch struct {
	X *tensor.Tensor
	Y []int32
	T []float32
}

// Config configures a Trainer.
type Config struct {
	Model nn.Layer
	// Loss scores class-index targets (Batch.Y); FloatLoss scores float
	// targets (Batch.T). Exactly one is set.
	Loss      Loss
	FloatLoss FloatLoss
	Estimator estimator.Estimator
	Optimizer Optimizer
	Scope     Scope
	// Rand drives training randomness inside the model (dropout): Step
	// draws one seed from it per step, and micro-batch j of the step draws
	// its dropout masks from a PCG generator seeded with (seed, j). nil
	// means a generator of the Trainer's own with a fixed seed, the same
	// dropout masks on every run, whose state Trainer.State carries (and
	// package checkpoint saves), so that a resumed run draws what the
	// uninterrupted one would. A Rand given here is the caller's to save:
	// its source is out of the Trainer's reach.
	Rand *rand.Rand
	// Comm makes the Trainer one rank of a data-parallel job (see
	// "Data parallelism" in the package documentation); nil means
	// dist.Local{}, one process. Every rank's Trainer must be configured
	// alike, with equal parameters, optimizer and estimator state and
	// Rand, and be given the same micro-batches.
	Comm dist.Comm
	// KeepNorms makes Step report every sample's gradient norm in
	// Stats.Norms. Only per-sample estimators have such norms: New refuses
	// KeepNorms with any other.
	KeepNorms bool
	// Groups are parameter groups, each a list of the model's parameters
	// (one group per layer, say), whose gradient norms Step reports in
	// Stats.GroupNorms, in this order.
	Groups [][]*nn.Param
	// ExpectedBatch is the divisor of a noisy estimator's
	// (estimator.NoisyOf, DP-SGD) sum of clipped gradients and noise: the
	// expected number of samples per step, q·N under Poisson sampling
	// (Opacus' convention), not the realised one, which would depend on
	// the data. It is required with a noisy estimator and refused with
	// any other (*setting.Error).
	ExpectedBatch float64
	// PerSampleMemory bounds the bytes of per-sample gradients that the
	// layers of a per-sample micro-batch may materialise
	// (nn.Context.PerSampleMemory): 0 leaves each layer to its own rule,
	// nn.NoMaterialise keeps every layer on the ghost norm. It decides how
	// the norms are computed, not what they are (the clipped gradient's
	// float32 sums run in another order). It is refused with an estimator
	// that has no per-sample norms.
	PerSampleMemory int64
	// SampleStats makes a noisy estimator's (DP-SGD's) steps report
	// what they computed from the private samples outside the noised
	// gradient: Stats' Loss, Samples, Clipped, Dropped, MeanSampleNorm,
	// SampleNorms, Norms (with KeepNorms), SkippedBatches and
	// PerSampleBytes. ε does not cover them: without SampleStats they are
	// zero, and KeepNorms is refused. Other estimators always report them.
	SampleStats bool
	// Progress is the caller's position in its data: a sampler of package
	// data/dataset, or a dp.Trainer's sampler and accountant. The Trainer
	// does not use it; its State carries Progress's, so that
	// checkpoint.SaveTrainer saves it with the rest and RestoreTrainer
	// puts it back. nil: the caller saves its position itself.
	Progress interface {
		encoding.BinaryMarshaler
		encoding.BinaryUnmarshaler
	}
}

// Stats describes one training step. Under a noisy estimator (DP-SGD)
// without Config.SampleStats it holds only what the noised gradient
// determines (GradNorm, GroupNorms, Skipped) and AllDropped.
type Stats struct {
	// Loss is the mean loss over the samples with a finite loss.
	Loss float64
	// Samples is the number of samples in the step, over all micro-batches.
	Samples int
	// Clipped and Dropped count samples whose gradient was clipped or left
	// out as non-finite by a per-sample estimator. MeanSampleNorm is the mean
	// per-sample gradient norm over finite samples.
	Clipped, Dropped int
	MeanSampleNorm   float64
	// SampleNorms summarises the finite per-sample gradient norms of the
	// step, the figures to choose a per-sample threshold γ from.
	SampleNorms NormSummary
	// Norms holds every sample's gradient norm in step order (NaN or Inf
	// for a dropped sample) when Config.KeepNorms is set. It is the
	// Trainer's buffer, reused by the next Step: copy it to keep it.
	//
	// Per-sample norms are computed only for per-sample estimators
	// (estimator.Estimator.PerSample); with the others SampleNorms,
	// MeanSampleNorm and Norms are zero.
	Norms []float64
	// GroupNorms[g] is the norm of Config.Groups[g]'s gradient as handed to
	// the optimizer (nil without Groups, or when the step was skipped). It
	// is the Trainer's buffer, reused by the next Step.
	GroupNorms []float64
	// GradNorm is the norm the batch-level Scale saw: the accumulated
	// gradient's (Global; torch's clip_grad_norm_ return value), or the mean
	// over micro-batches of their shares' norms (MicroBatch) or of their
	// mean gradients' norms (MicroBatchMean).
	GradNorm float64
	// ClippedBatches counts the gradients the batch-level Scale shrank: 0 or
	// 1 with Global, up to the number of micro-batches otherwise.
	ClippedBatches int
	// SkippedBatches counts micro-batches left out because their loss or
	// gradient was not finite.
	SkippedBatches int
	// Skipped reports that no update was made: every micro-batch was bad,
	// or the accumulated gradient was not finite.
	Skipped bool
	// AllDropped reports that the step had samples and every one was
	// left out as non-finite: the model no longer gives finite values
	// on its data. Without noise the step is then Skipped; with noise the
	// update is the noise alone, and a run counts the step as bad (it
	// stops after Options.MaxBadSteps of them in a row). It is reported
	// under DP too: one bit, what stops a diverged run.
	AllDropped bool
	// PerSampleBytes is the most bytes of per-sample gradients that one
	// of this process's micro-batches materialised
	// (nn.Context.PerSampleBytes; Config.PerSampleMemory bounds it).
	PerSampleBytes int64
}

// NormSummary is the minimum, median, 90th percentile and maximum of a set
// of norms (quantiles interpolated linearly between order statistics, as
// numpy.quantile does by default); all 0 for an empty set.
type NormSummary struct {
	Min, Median, P90, Max float64
}

// ErrNoBatches is the error of Step and Evaluate when they are given no
// micro-batch.
var ErrNoBatches = errors.New("train: no micro-batch given, want at least one")

// ErrNotBuilt is the error of a Trainer's methods when it was not made by
// New (a zero Trainer).
var ErrNotBuilt = errors.New("train: the Trainer was not made by train.New")

// RanksError is Step's error in a data-parallel job (Config.Comm) given
// fewer micro-batches than ranks: a rank would have none to compute and
// sit idle, so the step is refused on every rank alike, before anything
// runs. Give each step at least as many micro-batches as ranks (Split cuts
// a batch into them). A noisy estimator's steps are exempt: Poisson
// samples vary in size, down to none, and a rank without a micro-batch
// adds nothing (or only rank 0's noise).
type RanksError struct {
	Batches, Ranks int
}

func (e *RanksError) Error() string {
	return fmt.Sprintf("train: %d micro-batches for %d ranks: every rank needs at least one", e.Batches, e.Ranks)
}

// CheckRanks returns the *RanksError Step would return for steps of the
// given number of micro-batches on comm (nil: one process), so that a run
// can refuse its configuration before it starts.
func CheckRanks(batches int, comm dist.Comm) error {
	if isnil.IsNil(comm) {
		return nil
	}
	if ranks := comm.Size(); batches < ranks {
		return &RanksError{Batches: batches, Ranks: ranks}
	}
	return nil
}

// BatchError is Step's error for a micro-batch it refuses. Step returns it
// before it runs anything, with the parameters, the optimizer's and the
// estimator's state unchanged.
type BatchError struct {
	Batch int   // the micro-batch's index among Step's arguments
	Err   error // what is wrong with it (an *nn.InputError for its input)
}

func (e *BatchError) Error() string { return fmt.Sprintf("train: micro-batch %d: %v", e.Batch, e.Err) }
func (e *BatchError) Unwrap() error { return e.Err }

// Trainer runs training steps. It is not safe for concurrent use.
type Trainer struct {
	cfg     Config
	noisy   estimator.Noisy // the estimator, if it adds noise
	own     *rand.PCG       // the generator of Config.Rand when it was nil, else nil
	comm    dist.Comm
	pcg     *rand.PCG     // the generator of a micro-batch's dropout masks
	mbRand  *rand.Rand    // pcg's Rand, nn.Context.Rand
	grads   [][]float32   // the parameters' gradients, what Global scope reduces
	params  []*nn.Param   // the parameters to train
	all     []*nn.Param   // the model's parameters, frozen ones included, each once
	groups  [][]*nn.Param // Config.Groups, each parameter once
	ctx     nn.Context
	acc     [][]float32 // MicroBatch scopes: the running sum of scaled micro-batch gradients
	dirty   bool        // acc holds part of a step that did not finish
	spans   []span      // the gradients cut into chunks for the passes over them
	partial []float64   // gradNorm: one partial sum per span
	sums    stepSums    // the step's counts, losses and norms, reduced over the ranks
	sorted  []float64   // the finite norms, sorted for SampleNorms
	cs      []float64   // one micro-batch's clip factors
	factors []float32   // the factors handed to nn.Context.Finish
	gnorms  []float64   // Stats.GroupNorms
}

// New validates cfg and returns a Trainer. Every error is a *setting.Error
// naming the Config field at fault. It refuses a missing (nil, or typed
// nil) model, loss or optimizer, an estimator estimator.Validate refuses
// (nil, or one built as a struct literal with invalid settings), a model
// with a nil layer or without a parameter to train, and groups with
// parameters the model does not train.
//
// The Trainer trains the model's parameters that are not frozen
// (nn.Param.Frozen), and the optimizer must update exactly those: New
// refuses one that updates a frozen parameter or another model's, and one
// that leaves out a parameter the model trains (freeze it: a parameter
// the optimizer does not update would still count in every clipping
// norm). Frozen parameters take no gradient and no part in any norm.
//
// Like estimator.Spec, it refuses settings that would have no effect: a
// Scope other than Global with a per-sample estimator or SGD (their Scale
// is 1, so where it is applied changes nothing), and KeepNorms with an
// estimator that has no per-sample norms.
func New(cfg Config) (*Trainer, error) {
	switch {
	case isnil.IsNil(cfg.Model):
		return nil, setting.Errorf("Model", nil, "a model (an nn.Layer)")
	case isnil.IsNil(cfg.Loss) == isnil.IsNil(cfg.FloatLoss):
		return nil, setting.Errorf("Loss", "both or neither of Loss and FloatLoss", "exactly one of Loss (class targets) and FloatLoss (float targets)")
	case isnil.IsNil(cfg.Optimizer):
		return nil, setting.Errorf("Optimizer", nil, "an optimizer (optim.SGD, optim.AdamW)")
	case cfg.Scope != Global && cfg.Scope != MicroBatch && cfg.Scope != MicroBatchMean:
		return nil, setting.Errorf("Scope", cfg.Scope, "Global, MicroBatch or MicroBatchMean")
	}
	if err := estimator.Validate(cfg.Estimator); err != nil {
		var se *setting.Error
		if !errors.As(err, &se) {
			err = setting.Errorf("Estimator", cfg.Estimator, "a valid estimator: %v", err)
		}
		return nil, fmt.Errorf("train: %w", err)
	}
	_, sgd := cfg.Estimator.(estimator.SGD)
	switch per := cfg.Estimator.PerSample(); {
	case cfg.Scope != Global && (per || sgd):
		return nil, setting.Unread("Scope", cfg.Scope, cfg.Estimator.Name()+" has no batch-level Scale to apply per micro-batch (its Scale is 1); use Global")
	case cfg.KeepNorms && estimator.NoisyOf(cfg.Estimator) != nil && !cfg.SampleStats:
		return nil, setting.Errorf("KeepNorms", true, "per-sample norms of a noisy estimator (%s) only with SampleStats: ε does not cover them", cfg.Estimator.Name())
	case !per && cfg.KeepNorms:
		return nil, setting.Unread("KeepNorms", true, "only a per-sample estimator has per-sample norms, not "+cfg.Estimator.Name())
	case !per && cfg.PerSampleMemory != 0:
		return nil, setting.Unread("PerSampleMemory", cfg.PerSampleMemory, "only a per-sample estimator forms per-sample gradients, not "+cfg.Estimator.Name())
	case cfg.PerSampleMemory < nn.NoMaterialise:
		return nil, setting.Errorf("PerSampleMemory", cfg.PerSampleMemory, "a budget of bytes ≥ 0, or nn.NoMaterialise")
	}
	switch noisy := estimator.NoisyOf(cfg.Estimator) != nil; {
	case !noisy && cfg.ExpectedBatch != 0:
		return nil, setting.Unread("ExpectedBatch", cfg.ExpectedBatch, "only a noisy estimator (dp-sgd) divides by an expected batch size, not "+cfg.Estimator.Name())
	case noisy && !(cfg.ExpectedBatch > 0 && !math.IsInf(cfg.ExpectedBatch, 1)):
		return nil, setting.Errorf("ExpectedBatch", cfg.ExpectedBatch, "a finite expected batch size > 0 for %s", cfg.Estimator.Name())
	case !noisy && cfg.SampleStats:
		return nil, setting.Unread("SampleStats", true, "only a noisy estimator (dp-sgd) withholds sample statistics, not "+cfg.Estimator.Name())
	}
	if l := nilLayer(cfg.Model); l != "" {
		return nil, setting.Errorf("Model", "a nil layer at "+l, "a model without nil layers")
	}
	// A tied parameter (GPT's wte and lm_head) is listed by both its users;
	// it must be zeroed, measured and scaled once (nn.Trainable lists it
	// once).
	all := cfg.Model.Params()
	t := &Trainer{cfg: cfg, params: nn.Trainable(all), all: uniqueParams(all)}
	t.noisy = estimator.NoisyOf(cfg.Estimator)
	t.ctx.PerSampleMemory = cfg.PerSampleMemory
	if t.cfg.Rand == nil {
		t.own = rand.NewPCG(0, 0x747261696e) // "train"
		t.cfg.Rand = rand.New(t.own)
	}
	t.comm = cfg.Comm
	if isnil.IsNil(t.comm) {
		t.comm = dist.Local{}
	}
	t.pcg = rand.NewPCG(0, 0)
	t.mbRand = rand.New(t.pcg)
	if len(t.params) == 0 {
		what := "no parameters"
		if len(all) > 0 {
			what = "every parameter frozen"
		}
		return nil, setting.Errorf("Model", what, "a model with a parameter to train")
	}
	own := make(map[*nn.Param]bool, len(t.params))
	for _, p := range all {
		if p == nil || p.Value == nil || p.Grad == nil || !p.Value.SameShape(p.Grad) || len(p.Value.Data) != len(p.Grad.Data) {
			return nil, setting.Errorf("Model", "parameter "+strconv.Quote(paramName(p)), "parameters with a value and a gradient of its shape")
		}
		own[p] = !p.Frozen
	}
	if err := belongs("Optimizer", cfg.Optimizer.Params(), own); err != nil {
		return nil, err
	}
	updated := make(map[*nn.Param]bool)
	for _, p := range cfg.Optimizer.Params() {
		updated[p] = true
	}
	for _, p := range t.params {
		if !updated[p] {
			return nil, setting.Errorf("Optimizer", "without "+strconv.Quote(p.Name), "an optimizer over every parameter the model trains: freeze %q (nn.Param.Frozen) or give it to the optimizer", p.Name)
		}
	}
	for g, ps := range cfg.Groups {
		if err := belongs(fmt.Sprintf("Groups[%d]", g), ps, own); err != nil {
			return nil, err
		}
		t.groups = append(t.groups, nn.Trainable(ps))
	}
	if cfg.Scope != Global {
		t.acc = make([][]float32, len(t.params))
		for i, p := range t.params {
			t.acc[i] = make([]float32, p.Grad.Len())
		}
	}
	for i, p := range t.params {
		t.grads = append(t.grads, p.Grad.Data)
		for lo := 0; lo < p.Grad.Len(); lo += spanLen {
			t.spans = append(t.spans, span{i, lo, min(lo+spanLen, p.Grad.Len())})
		}
	}
	t.partial = make([]float64, len(t.spans))
	return t, nil
}

// belongs checks that ps, the parameters of field, is a non-empty list of
// the model's parameters to train (own: true for those, false for the
// frozen ones).
func belongs(field string, ps []*nn.Param, own map[*nn.Param]bool) error {
	if len(ps) == 0 {
		return setting.Errorf(field, "no parameters", "a list of the model's parameters to train")
	}
	for _, p := range ps {
		trained, ok := own[p]
		switch {
		case !ok:
			return setting.Errorf(field, "parameter "+strconv.Quote(paramName(p)), "only the model's parameters: it is not one of them")
		case !trained:
			return setting.Errorf(field, "parameter "+strconv.Quote(paramName(p)), "only the model's parameters to train: it is frozen")
		}
	}
	return nil
}

// Params returns the model's parameters, frozen ones included, in the
// model's order, each once: what a checkpoint saves.
func (t *Trainer) Params() []*nn.Param { return t.all }

// Optimizer returns the optimizer the Trainer updates the parameters with
// (Config.Optimizer).
func (t *Trainer) Optimizer() Optimizer { return t.cfg.Optimizer }

// State is what a Trainer carries from one step to the next besides the
// model's weights and the optimizer's state: what a checkpoint must hold
// for a resumed run to continue bit for bit (package checkpoint's
// SaveTrainer and RestoreTrainer save and restore it with the rest).
type State struct {
	// Method is the estimator's method and settings (estimator.Describe):
	// SetState restores a State only into the method that saved it.
	Method string `json:"method,omitempty"`
	// Estimator is the adaptive estimator's state (estimator.State), nil
	// for a stateless estimator.
	Estimator []byte `json:"estimator,omitempty"`
	// Rand is the state of the Trainer's own generator (Config.Rand nil),
	// nil when Config.Rand was given.
	Rand []byte `json:"rand,omitempty"`
	// Progress is Config.Progress's state, nil without one.
	Progress []byte `json:"progress,omitempty"`
}

// State returns the Trainer's State after the steps made so far.
func (t *Trainer) State() (State, error) {
	if t == nil || t.cfg.Model == nil {
		return State{}, ErrNotBuilt
	}
	s := State{Method: estimator.Describe(t.cfg.Estimator)}
	var err error
	if s.Estimator, err = estimator.State(t.cfg.Estimator); err != nil {
		return State{}, fmt.Errorf("train: %w", err)
	}
	if t.own != nil {
		if s.Rand, err = t.own.MarshalBinary(); err != nil {
			return State{}, fmt.Errorf("train: %w", err)
		}
	}
	if !isnil.IsNil(t.cfg.Progress) {
		if s.Progress, err = t.cfg.Progress.MarshalBinary(); err != nil {
			return State{}, fmt.Errorf("train: %w", err)
		}
	}
	return s, nil
}

// SetState restores a State returned by State, so that the next Step is
// the one the saving Trainer would have made. It refuses a State saved by
// another estimator method or settings (another estimator, threshold, γ,
// σ: an *estimator.MismatchError), a State without an adaptive estimator's
// state, or with one for a stateless estimator, one whose generator does
// not fit Config.Rand (a state for the Trainer's own generator when
// Config.Rand was given, or none when it was nil), and one whose progress
// does not fit Config.Progress (one without the other, or one it
// refuses). On error the Trainer and Config.Progress are unchanged.
func (t *Trainer) SetState(s State) error {
	if t == nil || t.cfg.Model == nil {
		return ErrNotBuilt
	}
	var own rand.PCG
	if have := estimator.Describe(t.cfg.Estimator); s.Method != "" && s.Method != have {
		return fmt.Errorf("train: %w", &estimator.MismatchError{Saved: s.Method, Have: have})
	}
	progress := !isnil.IsNil(t.cfg.Progress)
	switch {
	case progress != (s.Progress != nil):
		return fmt.Errorf("train: the state has progress %v, the Trainer's Config.Progress is set %v: a state saved with another Progress", s.Progress != nil, progress)
	case t.own != nil && s.Rand == nil:
		return errors.New("train: the state has no generator, and Config.Rand is nil: the dropout masks would restart (a state saved with Config.Rand given?)")
	case t.own == nil && s.Rand != nil:
		return errors.New("train: the state holds the Trainer's own generator, and Config.Rand is given: set Config.Rand nil, as the saving Trainer had it")
	case t.own != nil:
		if err := own.UnmarshalBinary(s.Rand); err != nil {
			return fmt.Errorf("train: the state's generator: %w", err)
		}
	}
	var old []byte
	if progress {
		var err error
		if old, err = t.cfg.Progress.MarshalBinary(); err != nil {
			return fmt.Errorf("train: %w", err)
		}
		if err := t.cfg.Progress.UnmarshalBinary(s.Progress); err != nil {
			return fmt.Errorf("train: the state's progress: %w", err)
		}
	}
	if err := estimator.SetState(t.cfg.Estimator, s.Estimator); err != nil {
		if progress {
			err = errors.Join(err, t.cfg.Progress.UnmarshalBinary(old))
		}
		return fmt.Errorf("train: %w", err)
	}
	if t.own != nil {
		*t.own = own
	}
	return nil
}

// Step performs one optimizer update from the given micro-batches, which
// together are one batch: the update is that of one batch of the same
// samples in the same order, up to rounding, for every estimator (an
// increasing threshold's k counts the samples of the whole step; see
// estimator.Estimator.Factors for the adaptive estimators' warm-ups), except
// that the MicroBatch scopes apply Scale per micro-batch.
//
// Step first checks every micro-batch (at least one; an input the model
// accepts, nn.CheckInput, with no empty dimension; the same sample shape in
// every micro-batch; targets that fit the output, see Loss and FloatLoss) and refuses a
// bad one with a *BatchError (ErrNoBatches for none; a *RanksError for
// fewer micro-batches than Config.Comm's ranks) before it runs anything:
// the parameters, the optimizer's and the estimator's state are then
// unchanged. A non-finite loss or gradient is not an error: it is
// reported in Stats and kept out of the update.
//
// With Config.Comm, every rank calls Step with the same micro-batches and
// computes its share of them (see "Data parallelism"); a Loss error on any
// rank makes every rank's Step fail with dist.AgreeError's *dist.RankError
// (wrapping the *BatchError on the failing rank), its state unchanged.
//
// A noisy estimator's (DP-SGD's) step is refused with ErrPrivateStep:
// its noise is added once per call, so a call per micro-batch would add
// it once per micro-batch. Its steps are PrivateStep's, given the whole
// Poisson sample.
func (t *Trainer) Step(batches ...Batch) (Stats, error) {
	if t == nil || t.cfg.Model == nil {
		return Stats{}, ErrNotBuilt
	}
	if t.noisy != nil {
		return Stats{}, ErrPrivateStep
	}
	return t.step(batches)
}

// ErrPrivateStep is Step's error with a noisy estimator (DP-SGD): a
// private step is PrivateStep's, given the step's whole Poisson sample.
var ErrPrivateStep = errors.New("train: a noisy estimator's (dp-sgd's) step takes the whole Poisson sample at once: use PrivateStep (or Private.Step), not Step")

// ErrNotPrivate is PrivateStep's error with an estimator that adds no
// noise.
var ErrNotPrivate = errors.New("train: PrivateStep needs a noisy estimator (dp-sgd); use Step")

// PrivateStep performs one DP-SGD step on sample, the step's whole
// Poisson sample as one batch (a batch of no sample, Batch{}, for an empty
// one), computed in micro-batches of at most microBatch samples (0: all at
// once) to bound the step's memory. It needs a noisy estimator
// (ErrNotPrivate otherwise). Every sample's clipped gradient enters with
// weight 1/Config.ExpectedBatch, the estimator's noise is added to the sum
// once (by rank 0, before the ranks' gradients are summed), no weight is
// raised for dropped samples, and the update is made whatever the sample:
// an empty one is an update by the noise alone. The micro-batches are
// Step's (its checks, its errors, its data parallelism, each rank
// computing its share of them). A step that fails has still drawn its
// noise: the estimator's noise stream is not restored (fresh noise is as
// private).
func (t *Trainer) PrivateStep(sample Batch, microBatch int) (Stats, error) {
	if t == nil || t.cfg.Model == nil {
		return Stats{}, ErrNotBuilt
	}
	if t.noisy == nil {
		return Stats{}, ErrNotPrivate
	}
	if microBatch < 0 {
		return Stats{}, setting.Errorf("microBatch", microBatch, "a micro-batch size ≥ 0 (0: the whole sample at once)")
	}
	if sample.X == nil || len(sample.X.Shape) > 0 && sample.X.Shape[0] == 0 { // an empty sample
		if len(sample.Y) > 0 || len(sample.T) > 0 {
			return Stats{}, &BatchError{Batch: 0, Err: errors.New("targets without samples")}
		}
		return t.step(nil)
	}
	k := 1
	if microBatch > 0 && len(sample.X.Shape) > 0 {
		k = (sample.X.Shape[0] + microBatch - 1) / microBatch
	}
	batches, err := Split(sample, k)
	if err != nil {
		return Stats{}, &BatchError{Batch: 0, Err: err}
	}
	return t.step(batches)
}

// step is Step and PrivateStep: one update from the micro-batches.
func (t *Trainer) step(batches []Batch) (Stats, error) {
	n, guard, err := check(t.cfg.Model, batches, t.cfg.FloatLoss != nil)
	if err != nil && !(t.noisy != nil && errors.Is(err, ErrNoBatches)) {
		return Stats{}, err
	}
	if err := CheckRanks(len(batches), t.comm); err != nil && t.noisy == nil {
		return Stats{}, err
	}
	if t.dirty {
		t.clearAcc() // left by a Step that did not finish
	}
	t.zeroGrads()
	// Micro-batch j draws its dropout masks from PCG(seed, j), seed one
	// draw per step from Config.Rand on every rank, so the masks do not
	// depend on which rank computes it.
	seed := t.cfg.Rand.Uint64()
	t.ctx.Train, t.ctx.Rand = true, t.mbRand
	perSample := t.cfg.Estimator.PerSample()
	sums := &t.sums
	sums.reset(len(batches), n, perSample, t.cfg.Scope != Global)
	// Every micro-batch's gradient enters with weight 1/n, so that the sum
	// is the step's mean; samples left out are made up for at the end.
	inv := 1 / float32(n)
	if t.noisy != nil {
		inv = float32(1 / t.cfg.ExpectedBatch)
	}
	lo, hi := dist.Share(len(batches), t.comm.Rank(), t.comm.Size())
	k0 := 0 // the micro-batch's first sample's index in the step
	for _, b := range batches[:lo] {
		k0 += b.X.Shape[0]
	}
	var failed error
	var psBytes int64
	for j := lo; j < hi; j++ {
		b := batches[j]
		t.pcg.Seed(seed, uint64(j))
		if perSample {
			// Before the forward pass, so that layers can form per-sample
			// quantities of their inputs while those are in cache.
			t.ctx.BeginPerSample(b.X.Shape[0])
		}
		var losses []float32
		var dout *tensor.Tensor
		out, err := forward(&t.ctx, t.cfg.Model, b.X, guard)
		if err == nil {
			losses, dout, err = t.cfg.loss(out, b)
		}
		if err == nil && len(losses) != b.X.Shape[0] {
			err = fmt.Errorf("the loss gave %d losses for %d samples", len(losses), b.X.Shape[0])
		}
		if err != nil {
			t.ctx.EndPerSample()
			failed = &BatchError{Batch: j, Err: err}
			sums.count[countFailed]++
			break
		}
		m, good := len(losses), 0
		for i, l := range losses {
			sums.losses[k0+i] = float64(l)
			if isFinite(float64(l)) {
				good++
			}
		}
		kept := 0 // the micro-batch's samples in the gradient
		if perSample {
			es := t.perSampleBackward(dout, k0, m, inv)
			psBytes = max(psBytes, t.ctx.PerSampleBytes())
			sums.count[countClipped] += float64(es.Clipped)
			sums.count[countDropped] += float64(es.Dropped)
			kept = m - es.Dropped
		} else if good == m {
			// A plain backward pass cannot keep one sample's NaN out of
			// the others' gradient: a micro-batch with one is left out.
			kernels.Scale(inv, dout.Data)
			nn.BackwardParams(&t.ctx, t.cfg.Model, dout)
			kept = m
		}
		k0 += m
		if kept == 0 {
			sums.count[countSkippedBatches]++
			continue
		}
		if t.cfg.Scope != Global {
			g := t.gradNorm() // the micro-batch's share of the step's gradient
			if !isFinite(g) {
				sums.count[countSkippedBatches]++
				t.zeroGrads()
				continue
			}
			if t.cfg.Scope == MicroBatchMean {
				g *= float64(n) / float64(kept) // its own mean gradient
			}
			s := t.cfg.Estimator.Scale(g)
			if s < 1 {
				sums.count[countClippedBatches]++
			}
			sums.scaleNorms[j] = g
			t.accumulate(float32(s))
		}
		sums.count[countUsed] += float64(kept)
		sums.count[countUsedBatches]++
	}
	// The one collective operation of the step: the ranks' gradients (the
	// running sum of clipped micro-batches in the MicroBatch scopes) and
	// their sums, in one vector.
	grads := t.acc
	if t.cfg.Scope == Global {
		grads = t.grads
	}
	if t.noisy != nil && t.comm.Rank() == 0 && failed == nil {
		// Once per step, on one rank: the sum then holds it once.
		t.noisy.AddNoise(grads, 1/t.cfg.ExpectedBatch)
	}
	t.comm.AllReduce(dist.Bufs{F32: grads, F64: [][]float64{sums.buf}})
	if sums.count[countFailed] != 0 {
		t.abort()
		return Stats{}, dist.AgreeError(t.comm, failed)
	}
	st := sums.stats()
	st.PerSampleBytes = psBytes
	if perSample {
		t.cfg.Estimator.Update(sums.norms)
		t.summarise(&st)
	}
	used := int(sums.count[countUsed])
	st.AllDropped = n > 0 && used == 0
	if t.noisy != nil {
		used = max(n, 1) // the noise is an update even without a sample; no rescaling
		if !t.cfg.SampleStats {
			st = Stats{AllDropped: st.AllDropped}
		}
	}
	if used == 0 {
		st.Skipped = true
		st.GradNorm = math.NaN() // no gradient was formed
		t.zeroGrads()
		return st, nil
	}
	rescale := float32(1)
	if used < n {
		rescale = float32(n) / float32(used)
	}
	if t.cfg.Scope != Global {
		t.takeAccumulated(rescale)
		st.GradNorm = sums.scaleNorm()
	} else {
		if rescale != 1 {
			t.scaleGrads(rescale)
		}
		g := t.gradNorm()
		st.GradNorm = g
		if !isFinite(g) {
			st.Skipped = true
			t.zeroGrads()
			return st, nil
		}
		if s := t.cfg.Estimator.Scale(g); s != 1 {
			if s < 1 {
				st.ClippedBatches = 1
			}
			t.scaleGrads(float32(s))
		}
	}
	t.groupNorms(&st)
	t.cfg.Optimizer.Step()
	return st, nil
}

// loss scores the micro-batch b with the configured loss.
func (c *Config) loss(out *tensor.Tensor, b Batch) ([]float32, *tensor.Tensor, error) {
	if c.FloatLoss != nil {
		return c.FloatLoss(out, b.T)
	}
	return c.Loss(out, b.Y)
}

// check validates the micro-batches of one step or evaluation of model
// (see Step), with float targets (Batch.T) or class targets (Batch.Y), and
// returns their number of samples, and guard: whether the model's output
// shape could not be known without running it (a layer on the way is not
// an nn.Shaper), so that its forward pass must be guarded (forward).
func check(model nn.Layer, batches []Batch, float bool) (n int, guard bool, err error) {
	if len(batches) == 0 {
		return 0, false, ErrNoBatches
	}
	for j, b := range batches {
		out, err := nn.CheckInput(model, b.X)
		if err != nil {
			return 0, false, &BatchError{Batch: j, Err: err}
		}
		if first := batches[0].X.Shape; !slices.Equal(b.X.Shape[1:], first[1:]) {
			return 0, false, &BatchError{Batch: j, Err: fmt.Errorf("input %v does not match micro-batch 0's %v: every sample of a step has one shape", b.X.Shape, first)}
		}
		if err := checkTargets(out, b, float); err != nil {
			return 0, false, &BatchError{Batch: j, Err: err}
		}
		guard = guard || out == nil
		n += b.X.Shape[0]
	}
	return n, guard, nil
}

// checkTargets checks b's targets against the output shape out, if it is
// known (nil otherwise): float targets one finite value per output value
// (FloatLoss), class indices one per row of [rows…, classes] (Loss). The
// other kind must be absent.
func checkTargets(out []int, b Batch, float bool) error {
	if float {
		if b.Y != nil {
			return fmt.Errorf("%d class targets (Y) for a FloatLoss, which reads float targets (T)", len(b.Y))
		}
		for k, v := range b.T {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return fmt.Errorf("float target %v at position %d is not finite", v, k)
			}
		}
		if out != nil && len(b.T) != tensor.Numel(out) {
			return fmt.Errorf("%d float targets for an output %v, want %d", len(b.T), out, tensor.Numel(out))
		}
		return nil
	}
	if b.T != nil {
		return fmt.Errorf("%d float targets (T) for a Loss, which reads class targets (Y)", len(b.T))
	}
	y := b.Y
	if len(out) < 2 {
		return nil
	}
	classes, rows := out[len(out)-1], tensor.Numel(out[:len(out)-1])
	if len(y) != rows {
		return fmt.Errorf("%d targets for an output %v, want %d", len(y), out, rows)
	}
	for k, c := range y {
		if c < 0 || int(c) >= classes {
			return fmt.Errorf("target %d at position %d is outside [0,%d)", c, k, classes)
		}
	}
	return nil
}

// abort undoes a step that failed part-way, after its all-reduce: the
// running sum holds the other ranks' parts even where this rank added none.
func (t *Trainer) abort() {
	t.zeroGrads()
	if t.acc != nil {
		t.clearAcc()
	}
}

// summarise fills the per-sample norm statistics from the step's norms.
func (t *Trainer) summarise(st *Stats) {
	s := t.sorted[:0]
	var sum float64
	for _, x := range t.sums.norms {
		if isFinite(x) {
			s = append(s, x)
			sum += x
		}
	}
	t.sorted = s
	if t.cfg.KeepNorms {
		st.Norms = t.sums.norms
	}
	if len(s) == 0 {
		return
	}
	slices.Sort(s)
	st.MeanSampleNorm = sum / float64(len(s))
	st.SampleNorms = NormSummary{Min: s[0], Median: quantile(s, 0.5), P90: quantile(s, 0.9), Max: s[len(s)-1]}
}

// quantile is the q-quantile of the sorted s, linear between order
// statistics.
func quantile(s []float64, q float64) float64 {
	pos := q * float64(len(s)-1)
	i := int(pos)
	if i+1 >= len(s) {
		return s[len(s)-1]
	}
	f := pos - float64(i)
	return s[i] + f*(s[i+1]-s[i])
}

// groupNorms fills Stats.GroupNorms from the gradients.
func (t *Trainer) groupNorms(st *Stats) {
	if len(t.groups) == 0 {
		return
	}
	t.gnorms = resize(t.gnorms, len(t.groups))
	for g, ps := range t.groups {
		var sq float64
		for _, p := range ps {
			sq += kernels.SqNorm(p.Grad.Data)
		}
		t.gnorms[g] = math.Sqrt(sq)
	}
	st.GroupNorms = t.gnorms
}

// perSampleBackward runs the backward pass in the per-sample mode (begun
// before the forward pass for the micro-batch's m samples), puts the
// micro-batch's norms at positions k0..k0+m−1 of the step's, and adds
// weight·Σ_i c_i g_i into the gradients, where c are the estimator's clip
// factors for samples k0+1..k0+m of the step.
func (t *Trainer) perSampleBackward(dout *tensor.Tensor, k0, m int, weight float32) estimator.Stats {
	defer t.ctx.EndPerSample()
	nn.BackwardParams(&t.ctx, t.cfg.Model, dout)
	norms := t.sums.norms[k0 : k0+m]
	for i, sq := range t.ctx.SqNorms() {
		norms[i] = math.Sqrt(sq)
	}
	t.cs = resize(t.cs, m)
	es := t.cfg.Estimator.Factors(k0, norms, t.cs)
	t.factors = resize(t.factors, m)
	for i, c := range t.cs {
		t.factors[i] = float32(c) * weight
	}
	t.ctx.Finish(t.factors)
	return es
}

func (t *Trainer) zeroGrads() {
	t.eachRun(func(i, lo, hi int) { clear(t.params[i].Grad.Data[lo:hi]) })
}

func (t *Trainer) scaleGrads(s float32) {
	t.each(false, func(_ int, sp span) { kernels.Scale(s, t.params[sp.param].Grad.Data[sp.lo:sp.hi]) })
}

// gradNorm is the Euclidean norm of all gradients: a partial sum per span,
// added in span order, so the rounding does not depend on GOMAXPROCS.
func (t *Trainer) gradNorm() float64 {
	t.each(false, func(j int, sp span) { t.partial[j] = kernels.SqNorm(t.params[sp.param].Grad.Data[sp.lo:sp.hi]) })
	var s float64
	for _, v := range t.partial {
		s += v
	}
	return math.Sqrt(s)
}

// accumulate adds s·grad into the running sum and clears the gradients for
// the next micro-batch, in one pass. It follows gradNorm and walks the spans
// backwards, so that it starts on the spans gradNorm left in cache.
func (t *Trainer) accumulate(s float32) {
	t.dirty = true
	t.each(true, func(_ int, sp span) {
		kernels.AxpyZero(s, t.params[sp.param].Grad.Data[sp.lo:sp.hi], t.acc[sp.param][sp.lo:sp.hi])
	})
}

// takeAccumulated moves s·(running sum) into the gradients and clears the
// sum; s = 1, a step without dropped samples, skips the product (x·1 = x).
func (t *Trainer) takeAccumulated(s float32) {
	t.each(false, func(_ int, sp span) {
		acc := t.acc[sp.param][sp.lo:sp.hi]
		g := t.params[sp.param].Grad.Data[sp.lo:sp.hi]
		copy(g, acc)
		if s != 1 {
			kernels.Scale(s, g)
		}
		clear(acc)
	})
	t.dirty = false
}

// clearAcc empties the running sum.
func (t *Trainer) clearAcc() {
	t.eachRun(func(i, lo, hi int) { clear(t.acc[i][lo:hi]) })
	t.dirty = false
}

// spanLen is the length of the chunks the passes over all gradients work
// on: large enough to amortise a goroutine's share, small enough to balance
// the work of models with one huge parameter.
const spanLen = 1 << 15

// span is elements [lo,hi) of the gradient of parameter param.
type span struct{ param, lo, hi int }

// each runs f on every span, the spans split evenly among up to GOMAXPROCS
// goroutines, each goroutine's share in order or, with reverse, backwards.
// Every span is one fixed piece of work whichever goroutine runs it, so
// results do not depend on GOMAXPROCS.
func (t *Trainer) each(reverse bool, f func(j int, sp span)) {
	t.shares(func(lo, hi int) {
		for k := lo; k < hi; k++ {
			j := k
			if reverse {
				j = lo + hi - 1 - k
			}
			f(j, t.spans[j])
		}
	})
}

// eachRun is each for passes whose result does not depend on how the
// elements are grouped (clearing): f gets elements [lo,hi) of parameter i,
// the runs of a goroutine's consecutive spans of one parameter joined into
// one call. A clear of tens of megabytes then streams past the cache
// (the runtime's clear uses non-temporal stores for large lengths) instead
// of reading every line before overwriting it.
func (t *Trainer) eachRun(f func(i, lo, hi int)) {
	t.shares(func(lo, hi int) {
		for k := lo; k < hi; {
			sp := t.spans[k]
			end := sp.hi
			for k++; k < hi && t.spans[k].param == sp.param; k++ {
				end = t.spans[k].hi
			}
			f(sp.param, sp.lo, end)
		}
	})
}

// shares splits the span indices evenly among up to GOMAXPROCS goroutines
// (kernels.Parallel) and runs run on each goroutine's range [lo,hi).
func (t *Trainer) shares(run func(lo, hi int)) {
	n := len(t.spans)
	nw := max(1, min(n, runtime.GOMAXPROCS(0)))
	kernels.Parallel(nw, func(w int) { run(w*n/nw, (w+1)*n/nw) })
}

func uniqueParams(ps []*nn.Param) []*nn.Param {
	var out []*nn.Param
	for i, p := range ps {
		if !slices.Contains(ps[:i], p) {
			out = append(out, p)
		}
	}
	return out
}

// nilLayer returns the position of a nil layer inside l's containers
// (nn.Sequential, nn.Residual), "" if there is none.
func nilLayer(l nn.Layer) string {
	switch l := l.(type) {
	case nn.Sequential:
		for i, c := range l {
			if isnil.IsNil(c) {
				return fmt.Sprintf("[%d]", i)
			}
			if p := nilLayer(c); p != "" {
				return fmt.Sprintf("[%d]%s", i, p)
			}
		}
	case *nn.Residual:
		if isnil.IsNil(l.F) {
			return ".F"
		}
		if p := nilLayer(l.F); p != "" {
			return ".F" + p
		}
	}
	return ""
}

func paramName(p *nn.Param) string {
	if p == nil {
		return "<nil>"
	}
	return p.Name
}

func isFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
