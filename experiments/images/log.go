package images

import (
	"math"

	cifardata "github.com/psclip/psclip/data/cifar"
	"github.com/psclip/psclip/data/labelnoise"
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
	// TestLoss and TestAcc are the test set's, on its true labels, with
	// the model at the end of the epoch.
	TestLoss Float `json:"test_loss"`
	TestAcc  Float `json:"test_acc"`
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
	// TailIndex is Hill's estimate p̂ of the tail index of the per-sample
	// norms (estimator.Tail) over the epoch's last
	// estimator.DefaultWindow samples; null for estimators that do not
	// compute per-sample norms, or with fewer than
	// estimator.MinTailSamples samples.
	TailIndex Float `json:"tail_index"`
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
	// Detection scores per-sample clipping as a detector of the labels
	// replaced on purpose (Config.LabelNoise), over the epoch's samples;
	// absent without label noise or a per-sample estimator, and in a
	// data-parallel run (each rank sees only its share's decisions).
	Detection *Detection `json:"detection,omitempty"`
	// Augment counts the epoch's clipped samples by the AutoAugment
	// operations and sub-policy they received; absent without AutoAugment
	// or a per-sample estimator, and in a data-parallel run.
	Augment *AugmentClipping `json:"augment_clipping,omitempty"`
	// Epsilon is dp-sgd's ε after this epoch at Config.Delta (RDP,
	// Balle et al.'s conversion), written whatever its value; absent for
	// the other estimators.
	Epsilon *Float `json:"epsilon,omitempty"`
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
	// Noisy marks, with label noise, the samples whose label was
	// replaced, in the order of SampleNorms.
	Noisy []bool `json:"noisy,omitempty"`
}

// Detection is an epoch's clipping as a detector of mislabelled samples:
// the counts, precision (the share of clipped samples that were
// mislabelled), recall (the share of mislabelled samples that were
// clipped) and NoisyShare (the share of samples that were mislabelled:
// the precision of clipping at random), and the mean per-sample gradient
// norm of the clean and of the mislabelled samples.
type Detection struct {
	labelnoise.Detection
	Precision     Float `json:"precision"`
	Recall        Float `json:"recall"`
	NoisyShare    Float `json:"noisy_share"`
	MeanNormClean Float `json:"mean_norm_clean"`
	MeanNormNoisy Float `json:"mean_norm_noisy"`
	// HistClean and HistNoisy count the clean and the mislabelled samples'
	// finite norms in the bins of NormBin.
	HistClean []int `json:"norm_hist_clean,omitempty"`
	HistNoisy []int `json:"norm_hist_noisy,omitempty"`
}

// The bins of the per-sample norm histograms: NormBins bins of equal width
// in log10 of the norm, from 10^NormBinLow; the first and the last also
// count the norms below and above the range.
const (
	NormBins       = 40
	NormBinLow     = -2.0
	NormBinsPerDec = 8
)

// NormBin is the histogram bin of a positive norm x.
func NormBin(x float64) int {
	b := int(math.Floor((math.Log10(x) - NormBinLow) * NormBinsPerDec))
	return min(max(b, 0), NormBins-1)
}

// NormBinCentre is the norm at the centre (in log10) of bin b.
func NormBinCentre(b int) float64 {
	return math.Pow(10, NormBinLow+(float64(b)+0.5)/NormBinsPerDec)
}

// detectionAcc accumulates an epoch's Detection.
type detectionAcc struct {
	labelnoise.Detection
	NormClean  float64 `json:"norm_clean_sum"`
	NormCleanN int     `json:"norm_clean_n"`
	NormNoisy  float64 `json:"norm_noisy_sum"`
	NormNoisyN int     `json:"norm_noisy_n"`
	HistClean  []int   `json:"norm_hist_clean,omitempty"`
	HistNoisy  []int   `json:"norm_hist_noisy,omitempty"`
}

// add counts a step: sample j, image images[j] of the training split, was
// clipped if clipped[j], and its gradient norm is norms[j]; noisy marks
// the split's mislabelled images. A step whose decisions or norms do not
// cover its batch (a micro-batch left out before clipping) is not
// counted.
func (d *detectionAcc) add(clipped []bool, norms []float64, images []int, noisy []bool) {
	if len(clipped) != len(images) || len(norms) != len(images) {
		return
	}
	d.Detection.Add(clipped, images, noisy)
	if d.HistClean == nil {
		d.HistClean, d.HistNoisy = make([]int, NormBins), make([]int, NormBins)
	}
	for j, n := range norms {
		switch {
		case !finite(n):
		case noisy[images[j]]:
			d.NormNoisy += n
			d.NormNoisyN++
			d.HistNoisy[NormBin(n)]++
		default:
			d.NormClean += n
			d.NormCleanN++
			d.HistClean[NormBin(n)]++
		}
	}
}

// record is the epoch's Detection.
func (d *detectionAcc) record() *Detection {
	return &Detection{
		Detection: d.Detection, Precision: Float(d.Precision()), Recall: Float(d.Recall()), NoisyShare: Float(d.NoisyShare()),
		MeanNormClean: ratio(d.NormClean, d.NormCleanN), MeanNormNoisy: ratio(d.NormNoisy, d.NormNoisyN),
		HistClean: d.HistClean, HistNoisy: d.HistNoisy,
	}
}

// AugmentClipping is an epoch's per-sample clipping by what AutoAugment
// did to the samples: Ops by operation name (cifar.Op's String, for the
// operations some sample received) and AugmentNone (the samples it left
// unchanged: no operation of their sub-policy ran); SubPolicies by the
// index of the sub-policy drawn in cifar.CIFAR10Policy. A sample whose
// sub-policy ran two operations counts for both.
type AugmentClipping struct {
	Ops         map[string]AugmentCount `json:"ops"`
	SubPolicies []AugmentCount          `json:"sub_policies"`
}

// AugmentNone is the AugmentClipping.Ops key of the samples AutoAugment
// left unchanged.
const AugmentNone = "none"

// AugmentCount is how many samples received an augmentation, how many of
// them per-sample clipping shrank, and their mean finite per-sample
// gradient norm.
type AugmentCount struct {
	Samples  int   `json:"samples"`
	Clipped  int   `json:"clipped"`
	MeanNorm Float `json:"mean_norm"`
}

// augmentAcc accumulates an epoch's AugmentClipping: Ops by cifar.Op,
// then the unchanged samples; SubPolicies by index.
type augmentAcc struct {
	Ops         []augmentSums `json:"ops,omitempty"`
	SubPolicies []augmentSums `json:"sub_policies,omitempty"`
}

type augmentSums struct {
	Samples int     `json:"samples"`
	Clipped int     `json:"clipped"`
	NormSum float64 `json:"norm_sum"`
	NormN   int     `json:"norm_n"`
}

func (s *augmentSums) add(clipped bool, norm float64) {
	s.Samples++
	if clipped {
		s.Clipped++
	}
	if finite(norm) {
		s.NormSum += norm
		s.NormN++
	}
}

func (s augmentSums) count() AugmentCount {
	return AugmentCount{Samples: s.Samples, Clipped: s.Clipped, MeanNorm: ratio(s.NormSum, s.NormN)}
}

// add counts a step: sample j received applied[j], was clipped if
// clipped[j], and its gradient norm is norms[j]. A step whose decisions,
// norms or augmentations do not cover its batch is not counted, as in
// detectionAcc.add.
func (a *augmentAcc) add(clipped []bool, norms []float64, applied []cifardata.Applied) {
	if len(clipped) != len(applied) || len(norms) != len(applied) {
		return
	}
	if a.Ops == nil {
		a.Ops = make([]augmentSums, cifardata.NumOps+1)
		a.SubPolicies = make([]augmentSums, len(cifardata.CIFAR10Policy))
	}
	for j, ap := range applied {
		if ap.SubPolicy < 0 || ap.SubPolicy >= len(a.SubPolicies) {
			continue
		}
		a.SubPolicies[ap.SubPolicy].add(clipped[j], norms[j])
		if ap.Ops == 0 {
			a.Ops[cifardata.NumOps].add(clipped[j], norms[j])
		}
		for op := range cifardata.NumOps {
			if ap.Ops.Has(cifardata.Op(op)) {
				a.Ops[op].add(clipped[j], norms[j])
			}
		}
	}
}

// record is the epoch's AugmentClipping; nil if no step was counted.
func (a *augmentAcc) record() *AugmentClipping {
	if a.Ops == nil {
		return nil
	}
	r := &AugmentClipping{Ops: map[string]AugmentCount{AugmentNone: a.Ops[cifardata.NumOps].count()}}
	for op, s := range a.Ops[:cifardata.NumOps] {
		if s.Samples > 0 {
			r.Ops[cifardata.Op(op).String()] = s.count()
		}
	}
	for _, s := range a.SubPolicies {
		r.SubPolicies = append(r.SubPolicies, s.count())
	}
	return r
}
