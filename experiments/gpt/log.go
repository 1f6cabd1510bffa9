package gpt

import (
	"github.com/psclip/psclip/internal/stats"
	"github.com/psclip/psclip/run"
)

// Float is a float64 that JSON-encodes NaN and ±Inf as null (and decodes
// null as NaN), so that a diverged run still writes valid JSON.
type Float = stats.Float

// RunRecord is the first line of a run's log: the configuration and the
// threshold mean gradients are clipped to (Config.ClipThreshold: each
// micro-batch's g_j in micro-batch mode, the accumulated ḡ in global mode,
// each sequence's g_i in per-sample mode; null without clipping). A resumed
// run writes none, so that its log is that of an uninterrupted run.
type RunRecord struct {
	Step          int    `json:"step"` // always 0
	Config        Config `json:"config"`
	ClipThreshold Float  `json:"clip_threshold"`
	// Ranks is the number of processes the run started on
	// (RunOptions.Comm).
	Ranks int `json:"ranks"`
}

// StepRecord is the log line of one training step.
type StepRecord struct {
	Step int   `json:"step"` // steps completed, including this one
	LR   Float `json:"lr"`
	// Loss is the mean training loss of the step's finite samples.
	Loss Float `json:"loss"`
	// GradNorm is the norm the clip saw (train.Stats.GradNorm): the
	// accumulated gradient's (global), the mean of the micro-batch shares'
	// g_j/K (micro-batch, nanogpt convention) or of their mean gradients'
	// (mean convention).
	GradNorm Float `json:"grad_norm"`
	// ClippedBatches counts clipped gradients (0 or 1 in global mode, up to
	// --accum in micro-batch mode); ClippedSamples and DroppedSamples count
	// sequences clipped or left out as non-finite in per-sample mode.
	ClippedBatches int `json:"clipped_batches"`
	ClippedSamples int `json:"clipped_samples"`
	DroppedSamples int `json:"dropped_samples"`
	// SkippedBatches counts micro-batches left out as non-finite; Skipped
	// says that the step made no update at all.
	SkippedBatches int     `json:"skipped_batches"`
	Skipped        bool    `json:"skipped"`
	TokensPerSec   float64 `json:"tokens_per_s"`
	Elapsed        float64 `json:"elapsed_s"`
	// Diagnostics are the adaptive per-sample estimator's state after the
	// step (ps-clip-auto, ps-clip-sgd with an automatic α or β,
	// ps-clip-quantile).
	run.Diagnostics
	// SampleNorms are the step's per-sample gradient norms, in batch order
	// (RunOptions.LogNorms; null for a non-finite one), as "psclip tail
	// --from" reads them (experiments/tail.NormsRecord).
	SampleNorms []Float `json:"sample_norms,omitempty"`
	// Detection is the step's clipping as a detector of its corrupted
	// sequences (corrupted data, micro-batch or per-sample mode, one
	// process).
	Detection *Detection `json:"detection,omitempty"`
	// Sequences is the step's number of records under Poisson sampling,
	// Binomial(N, q), 0 for a noise-only step; absent otherwise (every
	// step has MicroBatch·Accum windows).
	Sequences *int `json:"sequences,omitempty"`
}

// EvalRecord is the log line of one validation-loss estimate.
type EvalRecord struct {
	Step    int     `json:"step"`
	ValLoss Float   `json:"val_loss"`
	Elapsed float64 `json:"elapsed_s"`
	// Epsilon is dp-sgd's ε at Config.Delta after Step steps; absent for
	// the other estimators.
	Epsilon *Float `json:"epsilon,omitempty"`
}

// EvalPoint is one point of a validation-loss curve.
type EvalPoint struct {
	Step    int   `json:"step"`
	ValLoss Float `json:"val_loss"`
}
