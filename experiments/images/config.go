package images

import (
	"cmp"
	"strconv"
	"strings"

	cifardata "github.com/psclip/psclip/data/cifar"
	"github.com/psclip/psclip/data/labelnoise"
	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/models"
	"github.com/psclip/psclip/privacy"
	"github.com/psclip/psclip/run"
	"github.com/psclip/psclip/setting"
)

// Config is one training run. The zero value is not valid; start from
// Default.
type Config struct {
	// Spec is the gradient estimator and its settings ("sgd",
	// "clip-sgd", "ps-clip-sgd" with a constant threshold Clip or an
	// increasing one α·k^(1/β), …); a setting the estimator does not read
	// must be unset. Its JSON keys are the configuration's own
	// ("estimator", "clip", "alpha", "beta", …), as older checkpoints hold
	// them.
	estimator.Spec

	// SGD with momentum and weight decay at a constant learning rate.
	LR          float64 `json:"lr"`
	Momentum    float64 `json:"momentum"`
	WeightDecay float64 `json:"weight_decay"`

	Batch  int `json:"batch"`
	Epochs int `json:"epochs"`
	// EvalEvery evaluates the validation and the test set after every
	// EvalEvery-th epoch and after the last one (0 or 1: after every
	// epoch); the other epochs log null for them. Evaluating the 16,000
	// validation and test images of Fashion-MNIST costs more than an
	// epoch on a small training subset, which long runs on one make cheap.
	EvalEvery int `json:"eval_every,omitempty"`
	// Accum cuts every batch into that many micro-batches (gradient
	// accumulation; 0 is 1), of sizes that differ by at most one: the
	// same update up to rounding, with the activations of a micro-batch,
	// and what the ranks of a data-parallel run (RunOptions.Comm) share.
	Accum int `json:"accum,omitempty"`
	// Model is the network: "" for AlexNet-CIFAR (the paper's),
	// ModelSmallCNN for quick runs (models.NewSmallCNN), either on RGB or
	// grey 32×32 images, as the data holds them; or ModelTanhCNN, Tramèr &
	// Boneh's CNN for 28×28 grey images (models.NewTanhCNN on data/idx's
	// 32×32 canvas, which needs Normalize NormalizeNone).
	Model string `json:"model,omitempty"`
	// Normalize is how pixels become inputs: "" (NormalizeChannel on the
	// command line) subtracts the training split's channel mean and
	// divides by its standard deviation; NormalizeNone keeps them on the
	// [0, 1] scale, v/255.
	Normalize string `json:"normalize,omitempty"`
	// WidthDiv divides the model's widths (1: the paper's AlexNet, or
	// SmallCNN's default width 16, which it must then divide); Dropout is
	// AlexNet's classifier dropout probability (SmallCNN has none: 0).
	WidthDiv int     `json:"width_div"`
	Dropout  float64 `json:"dropout"`
	// TrainSubset, if positive, trains on TrainSubset images of the
	// training split only, chosen at random from Seed (the validation
	// split is unchanged), for short runs.
	TrainSubset int `json:"train_subset,omitempty"`
	// ValFraction, if set, is the share of the data set's training set
	// held out for validation, at random from Seed: ⌊ValFraction·n⌋ of its
	// n images, in [0, 1). 0 holds out none: every training image trains
	// (N = 60,000 on Fashion-MNIST, as Tramèr & Boneh's DP-SGD accounts
	// it), and the validation figures (EpochRecord.ValAcc, ValLoss,
	// Summary.ValAcc) are null; the test set is still evaluated. Unset
	// (nil) is the default split, cifar.ValidationSize: a tenth, at least
	// one image.
	ValFraction *float64 `json:"val_fraction,omitempty"`
	// LabelNoise is the share of the training split's labels replaced on
	// purpose (data/labelnoise, seeded with Seed; never the validation or
	// test labels), and LabelNoiseKind how: NoiseUniform (each by a class
	// drawn uniformly from the others) or NoiseNext (class k by k+1 mod
	// C). LabelNoiseKind is set exactly when LabelNoise is positive.
	LabelNoise     float64 `json:"label_noise,omitempty"`
	LabelNoiseKind string  `json:"label_noise_kind,omitempty"`
	// Augment is the training augmentation: "autoaugment" (the paper's),
	// "cropflip", "cropflip+autoaugment" or "none".
	Augment string `json:"augment"`

	// Seed determines the train/validation split, the initialisation, the
	// data order, the augmentations and the dropout masks; nothing else
	// does, so runs that differ only in the estimator start from the same
	// weights and see the same batches.
	Seed uint64 `json:"seed"`

	// MaxBadSteps stops the run after that many consecutive steps without
	// an update because of non-finite gradients (0: never).
	MaxBadSteps int `json:"max_bad_steps"`

	// Sampling is how training batches are drawn: SamplingShuffle (a
	// fresh order every epoch, cut into batches of Batch) or
	// SamplingPoisson (each training image joins each batch independently
	// with probability q = Batch/N, as DP-SGD's accounting assumes; an
	// epoch is ⌈N/Batch⌉ batches). "" is Poisson for dp-sgd, shuffle for
	// the others; Poisson is for dp-sgd only, and its samples are drawn
	// from a secret key (privacy.Secret), never from Seed. dp-sgd with
	// shuffled batches is accounted as if they were Poisson samples, which
	// they are not: only a run marked not private (NoiseSeed or
	// ReleaseUnprotected) may shuffle.
	Sampling string `json:"sampling,omitempty"`
	// MicroBatch bounds the micro-batches a Poisson batch, of varying
	// size, is cut into: ⌈B/MicroBatch⌉ of sizes that differ by at most
	// one (Opacus' BatchMemoryManager; 0: the batch in one), which the
	// ranks of a data-parallel run share. Poisson sampling only (shuffled
	// batches use Accum).
	MicroBatch int `json:"micro_batch,omitempty"`
	// Delta is dp-sgd's δ, at which the run reports its ε
	// (EpochRecord.Epsilon, Summary.Epsilon: privacy.Epsilon of the
	// steps' history, RDP with Balle et al.'s conversion). Required by
	// dp-sgd, which New refuses unless it is below 1/N (N training
	// images); unset for the other estimators.
	Delta float64 `json:"delta,omitempty"`
	// ReleaseUnprotected, for dp-sgd, writes what a private run withholds
	// (run.Released): the training loss and accuracy, the validation
	// figures, per-sample norms and their statistics, clipped counts,
	// detection statistics, the noisy labels. Every output then lists
	// them as "unprotected", and the run is not private.
	ReleaseUnprotected bool `json:"release_unprotected,omitempty"`
}

// The values of Config.Sampling.
const (
	SamplingPoisson = "poisson"
	SamplingShuffle = "shuffle"
)

// DPSGD reports whether the run trains with DP-SGD (Estimator dp-sgd) and
// accounts its ε. Whether that run is private also depends on its noise
// seed (estimator.DPSGD.Private), its sampling and what it releases
// (run.Privacy).
func (c *Config) DPSGD() bool { return c.Estimator == "dp-sgd" }

// privacy is what the run layer must know of a dp-sgd run: a fresh secret
// (of NoiseSeed, if fixed), the sampling and the release; nil without
// dp-sgd.
func (c *Config) privacy() *run.Privacy {
	if !c.DPSGD() {
		return nil
	}
	return &run.Privacy{Secret: privacy.NewSecret(c.NoiseSeed), Shuffled: c.sampling() == SamplingShuffle, ReleaseUnprotected: c.ReleaseUnprotected}
}

// sampling is Config.Sampling with "" resolved: Poisson for dp-sgd,
// shuffle otherwise.
func (c *Config) sampling() string {
	if c.Sampling == "" && c.DPSGD() {
		return SamplingPoisson
	}
	if c.Sampling == "" {
		return SamplingShuffle
	}
	return c.Sampling
}

// Paper thresholds for the real AlexNet on CIFAR-100 (the paper's section
// "Training AlexNet with per-sample clipping" and its appendix).
const (
	PaperClipSGD   = 15.0 // Clip-SGD's γ
	PaperPSClipSGD = 45.0 // PS-Clip-SGD's constant γ
	PaperAlpha     = 15.0 // the best increasing threshold: α = 15, β = 2
	PaperBeta      = 2.0
)

// Default is the paper's run: full-width AlexNet-CIFAR, PS-Clip-SGD with
// γ = 45, learning rate 0.01, momentum 0.9, weight decay 1e-4, batch 64,
// 300 epochs, AutoAugment with the CIFAR-10 policy.
func Default() Config {
	return Config{
		Spec: estimator.Spec{Estimator: "ps-clip-sgd", Clip: PaperPSClipSGD},
		LR:   0.01, Momentum: 0.9, WeightDecay: 1e-4,
		Batch: 64, Epochs: 300, WidthDiv: 1, Dropout: 0.5, Augment: "autoaugment",
		Seed: 1, MaxBadSteps: 10,
	}
}

// PaperClip returns the paper's threshold for an estimator: 15 for
// Clip-SGD, 45 for PS-Clip-SGD, 0 for the others.
func PaperClip(estimatorName string) float64 {
	switch estimatorName {
	case "clip-sgd":
		return PaperClipSGD
	case "ps-clip-sgd":
		return PaperPSClipSGD
	}
	return 0
}

// The models Config.Model names, besides "" (AlexNet-CIFAR).
const (
	ModelAlexNet  = "alexnet" // the command line's name of ""
	ModelSmallCNN = "small-cnn"
	ModelTanhCNN  = "tanh-cnn"
)

// The values of Config.Normalize, besides "" (by channel).
const (
	NormalizeChannel = "channel" // the command line's name of ""
	NormalizeNone    = "none"
)

// ModelNormalize is the default Config.Normalize of a model: NormalizeNone
// for ModelTanhCNN, whose paper trains on pixels in [0, 1] and whose
// first convolution takes the canvas's black border as its zero padding;
// "" (by channel) for the others.
func ModelNormalize(model string) string {
	if model == ModelTanhCNN {
		return NormalizeNone
	}
	return ""
}

// The kinds of label noise of Config.LabelNoiseKind.
const (
	NoiseUniform = "uniform"
	NoiseNext    = "next"
)

// ModelDropout is the default classifier dropout of a model: AlexNet's
// 0.5, SmallCNN's and TanhCNN's 0 (they have none).
func ModelDropout(model string) float64 {
	if model == ModelSmallCNN || model == ModelTanhCNN {
		return 0
	}
	return Default().Dropout
}

// ImagesDefault is the base configuration of "psclip train images": the
// paper's optimiser (learning rate 0.01, momentum 0.9, weight decay 1e-4,
// batch 64) on SmallCNN, 10 epochs without augmentation, PS-Clip-SGD with
// the threshold of ImagesClip.
func ImagesDefault() Config {
	c := Default()
	c.Model, c.Dropout, c.Epochs, c.Augment = ModelSmallCNN, 0, 10, "none"
	c.Clip = ImagesClip(c.Estimator)
	return c
}

// ImagesClip is the default threshold of an estimator on SmallCNN and
// Fashion-MNIST (see README.md for how it was chosen): ImagesThresholds'
// Clip-SGD and PS-Clip-SGD γ, 0 for the other estimators.
func ImagesClip(estimatorName string) float64 {
	switch estimatorName {
	case "clip-sgd":
		return ImagesThresholds().ClipSGD
	case "ps-clip-sgd":
		return ImagesThresholds().PSClipSGD
	}
	return 0
}

// Augments lists the accepted values of Config.Augment.
var Augments = []string{"autoaugment", "cropflip", "cropflip+autoaugment", "none"}

// ParseAugment turns an augmentation name into the data/cifar setting.
func ParseAugment(s string) (cifardata.Augment, error) {
	switch s {
	case "autoaugment":
		return cifardata.Augment{AutoAugment: true}, nil
	case "cropflip":
		return cifardata.Augment{CropFlip: true}, nil
	case "cropflip+autoaugment":
		return cifardata.Augment{CropFlip: true, AutoAugment: true}, nil
	case "none":
		return cifardata.Augment{}, nil
	}
	return cifardata.Augment{}, setting.Errorf("Augment", strconv.Quote(s), "one of %s", strings.Join(Augments, ", "))
}

// Validate checks the configuration: the estimator's Spec, and every
// other setting in the precision it is used in (the network trains in
// float32). Its errors are *setting.Error values naming the field.
func (c *Config) Validate() error {
	if err := c.Spec.Validate(); err != nil {
		return err
	}
	for _, p := range []struct {
		field string
		v     int
	}{{"Batch", c.Batch}, {"Epochs", c.Epochs}, {"WidthDiv", c.WidthDiv}} {
		if err := setting.Positive(p.field, p.v); err != nil {
			return err
		}
	}
	if err := setting.First(
		setting.NonNegative("Accum", c.Accum),
		setting.NonNegative("EvalEvery", c.EvalEvery),
		setting.NonNegative("MaxBadSteps", c.MaxBadSteps),
		setting.Positive32("LR", c.LR),
		setting.Fraction("Momentum", c.Momentum),
		setting.NonNegative32("WeightDecay", c.WeightDecay),
		setting.Fraction("Dropout", c.Dropout),
	); err != nil {
		return err
	}
	if c.Accum > c.Batch {
		return setting.Errorf("Accum", c.Accum, "at most the batch of %d: every micro-batch needs a sample", c.Batch)
	}
	if _, err := ParseAugment(c.Augment); err != nil {
		return err
	}
	if err := c.validatePrivacy(); err != nil {
		return err
	}
	return c.validateModelData()
}

// validatePrivacy checks the sampling and dp-sgd's settings.
func (c *Config) validatePrivacy() error {
	switch {
	case c.Sampling != "" && c.Sampling != SamplingPoisson && c.Sampling != SamplingShuffle:
		return setting.Errorf("Sampling", strconv.Quote(c.Sampling), "%s or %s", SamplingPoisson, SamplingShuffle)
	case c.sampling() == SamplingPoisson && !c.DPSGD():
		return setting.Unread("Sampling", strconv.Quote(c.Sampling), "Poisson sampling is dp-sgd's, not "+c.Label()+"'s")
	case c.MicroBatch != 0 && c.sampling() != SamplingPoisson:
		return setting.Unread("MicroBatch", c.MicroBatch, "it bounds Poisson batches' micro-batches; shuffled batches use Accum")
	case c.Accum != 0 && c.sampling() == SamplingPoisson:
		return setting.Unread("Accum", c.Accum, "a Poisson batch's micro-batches are bounded by MicroBatch")
	case c.Delta != 0 && !c.DPSGD():
		return setting.Unread("Delta", c.Delta, "δ is dp-sgd's")
	case c.ReleaseUnprotected && !c.DPSGD():
		return setting.Unread("ReleaseUnprotected", true, "a run without dp-sgd releases everything")
	case c.DPSGD() && c.sampling() == SamplingShuffle && c.NoiseSeed == 0 && !c.ReleaseUnprotected:
		return setting.Errorf("Sampling", strconv.Quote(c.Sampling), "%s for a private dp-sgd run: shuffled batches are not the Poisson samples its ε is accounted for (only a run marked not private, by NoiseSeed or ReleaseUnprotected, may shuffle)", SamplingPoisson)
	case c.DPSGD() && !(c.Delta > 0 && c.Delta < 1):
		return setting.Errorf("Delta", c.Delta, "a δ strictly between 0 and 1 (below 1/N) for dp-sgd")
	case c.DPSGD() && c.Normalize != NormalizeNone:
		// The training split's statistics would be a release the
		// accountant does not count.
		return setting.Errorf("Normalize", strconv.Quote(cmp.Or(c.Normalize, NormalizeChannel)), "%s for dp-sgd: normalising by the training images' statistics spends privacy the accountant does not count", NormalizeNone)
	}
	return setting.NonNegative("MicroBatch", c.MicroBatch)
}

// validateModelData checks the model and the data settings.
func (c *Config) validateModelData() error {
	switch c.Model {
	case "":
	case ModelSmallCNN:
		if c.Dropout != 0 {
			return setting.Errorf("Dropout", c.Dropout, "0: %s has no dropout", ModelSmallCNN)
		}
		if models.DefaultSmallCNN.Width%c.WidthDiv != 0 {
			return setting.Errorf("WidthDiv", c.WidthDiv, "a divisor of %s's width %d", ModelSmallCNN, models.DefaultSmallCNN.Width)
		}
	case ModelTanhCNN:
		if c.Dropout != 0 {
			return setting.Errorf("Dropout", c.Dropout, "0: %s has no dropout", ModelTanhCNN)
		}
		if c.WidthDiv != 1 {
			return setting.Errorf("WidthDiv", c.WidthDiv, "1: %s has one width", ModelTanhCNN)
		}
		if c.Normalize != NormalizeNone {
			return setting.Errorf("Normalize", strconv.Quote(cmp.Or(c.Normalize, NormalizeChannel)), "%s: %s pads its first convolution with the 32×32 canvas's black border, which must be 0", NormalizeNone, ModelTanhCNN)
		}
	default:
		return setting.Errorf("Model", strconv.Quote(c.Model), "%s, %s or %s", ModelAlexNet, ModelSmallCNN, ModelTanhCNN)
	}
	if c.Normalize != "" && c.Normalize != NormalizeNone {
		return setting.Errorf("Normalize", strconv.Quote(c.Normalize), "%s or %s", NormalizeChannel, NormalizeNone)
	}
	if err := setting.First(setting.NonNegative("TrainSubset", c.TrainSubset), setting.Fraction("LabelNoise", c.LabelNoise)); err != nil {
		return err
	}
	if c.ValFraction != nil {
		if err := setting.Fraction("ValFraction", *c.ValFraction); err != nil {
			return err
		}
	}
	if float32(c.LabelNoise) >= 1 {
		return setting.Errorf("LabelNoise", c.LabelNoise, "in [0, 1) in float32 as well (it rounds to 1)")
	}
	switch {
	case c.LabelNoise == 0 && c.LabelNoiseKind != "":
		return setting.Errorf("LabelNoiseKind", strconv.Quote(c.LabelNoiseKind), "unset without label noise")
	case c.LabelNoise > 0 && c.LabelNoiseKind != NoiseUniform && c.LabelNoiseKind != NoiseNext:
		return setting.Errorf("LabelNoiseKind", strconv.Quote(c.LabelNoiseKind), "%s or %s", NoiseUniform, NoiseNext)
	}
	return nil
}

// evaluates reports whether the run evaluates the validation and the test
// set after epoch (1-based): every EvalEvery-th and the last.
func (c *Config) evaluates(epoch int) bool {
	return c.EvalEvery <= 1 || epoch%c.EvalEvery == 0 || epoch == c.Epochs
}

// noise is the label noise of the run, seeded with its seed.
func (c *Config) noise() labelnoise.Config {
	return labelnoise.Config{Fraction: c.LabelNoise, Asymmetric: c.LabelNoiseKind == NoiseNext, Seed: c.Seed}
}

// ExperimentDefault is the base configuration of "psclip experiment
// cifar": the paper's optimiser (learning rate 0.01, momentum 0.9, weight
// decay 1e-4, batch 64) on an AlexNet 16 times narrower, for 8 epochs
// without augmentation, so that four methods over three seeds train in
// about ten minutes on a 2-core machine on a 5,000-image synthetic set
// (see README.md).
func ExperimentDefault() Config {
	c := Default()
	c.WidthDiv, c.Epochs, c.Augment = 16, 8, "none"
	return c
}
