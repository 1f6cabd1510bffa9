package cifar

import (
	"github.com/psclip/psclip/internal/stats"
	"github.com/psclip/psclip/run"
)

// The log (run.LogFile) of a run holds one EpochRecord per completed epoch
// and, with RunOptions.LogNorms, a line of per-sample norms after every
// step, in the order they happened.

// Float is a float64 that JSON-encodes NaN and ±Inf as null (and decodes
// null as NaN), so that a diverged run still writes valid JSON.
type Float = stats.Float

// EpochRecord is the log line of one training epoch. Accuracies are
// fractions in [0, 1].
type EpochRecord struct {
	Epoch int `json:"epoch"` // epochs completed, including this one
	// TrainLoss and TrainAcc are the running loss and accuracy over the
	// epoch's training batches as the model saw them (augmented, with
	// dropout, before each step's update), as PyTorch training loops
	// report them; samples with a non-finite loss are left out of the loss.
	TrainLoss Float `json:"train_loss"`
	TrainAcc  Float `json:"train_acc"`
	ValLoss   Float `json:"val_loss"`
	ValAcc    Float `json:"val_acc"`
	// Elapsed is the run's wall time up to the end of this epoch,
	// evaluations included; EpochSeconds is this epoch's share.
	Elapsed      float64 `json:"elapsed_s"`
	EpochSeconds float64 `json:"epoch_s"`
	// ImagesPerSec is the training throughput of the epoch, evaluation
	// excluded.
	ImagesPerSec float64 `json:"img_per_s"`
	// MeanSampleNorm is the average per-sample gradient norm over the
	// epoch's samples (the paper's appendix figure); null for estimators
	// that do not compute per-sample norms.
	MeanSampleNorm Float `json:"mean_sample_norm"`
	// ClippedPerBatch is the average number of samples per batch whose
	// gradient per-sample clipping shrank.
	ClippedPerBatch float64 `json:"clipped_per_batch"`
	// ClippedStepFraction is the fraction of steps whose batch gradient
	// Clip-SGD (or normalized SGD) shrank.
	ClippedStepFraction float64 `json:"clipped_step_fraction"`
	// MeanGradNorm is the average norm of the update direction before the
	// batch-level clip (what Clip-SGD compares with γ) over finite steps.
	MeanGradNorm Float `json:"mean_grad_norm"`
	// SkippedSteps made no update (Clip-SGD and SGD skip a batch with a
	// non-finite sample); DroppedSamples were left out of the average by a
	// per-sample estimator because their gradient was not finite.
	SkippedSteps   int `json:"skipped_steps"`
	DroppedSamples int `json:"dropped_samples"`
	// Diagnostics are the adaptive estimator's state at the end of the
	// epoch (ps-clip-auto, ps-clip-sgd with an automatic α or β,
	// ps-clip-quantile).
	run.Diagnostics
}

// normsRecord is the log line of one step's per-sample norms
// (RunOptions.LogNorms), in the form "psclip tail --from" reads
// (experiments/tail.NormsRecord). Step counts the steps done, this one
// included.
type normsRecord struct {
	Step        int     `json:"step"`
	SampleNorms []Float `json:"sample_norms"`
}
