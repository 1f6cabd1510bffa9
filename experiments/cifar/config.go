package cifar

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	cifardata "github.com/psclip/psclip/data/cifar"
	"github.com/psclip/psclip/estimator"
)

// Config is one training run. The zero value is not valid; start from
// Default.
type Config struct {
	// Estimator is the gradient estimator's command-line name ("sgd",
	// "clip-sgd", "ps-clip-sgd", …). Clip is the threshold γ of Clip-SGD and
	// of PS-Clip-SGD's constant threshold. Beta > 0 selects PS-Clip-SGD's
	// increasing threshold α·k^(1/β) instead, with Alpha = α.
	Estimator string  `json:"estimator"`
	Clip      float64 `json:"clip"`
	Alpha     float64 `json:"alpha"`
	Beta      float64 `json:"beta"`
	// AutoAlpha and AutoBeta estimate PS-Clip-SGD's α = σ̂ and β = p̂ while
	// training ("--alpha auto", "--beta auto"; they override Alpha and
	// Beta) from the last Window per-sample norms (0:
	// estimator.DefaultWindow), which "ps-clip-auto" also reads.
	// TargetQuantile and QuantileRate are ps-clip-quantile's target
	// fraction of unclipped samples and rate, whose initial threshold is
	// Clip (0: the first batch's median); AutoClipR is auto-clip's r. Zero
	// selects the estimator package's default. They are left out of the
	// JSON when zero, so a run without them keeps the configuration older
	// checkpoints hold.
	AutoAlpha      bool    `json:"auto_alpha,omitempty"`
	AutoBeta       bool    `json:"auto_beta,omitempty"`
	Window         int     `json:"window,omitempty"`
	TargetQuantile float64 `json:"target_quantile,omitempty"`
	QuantileRate   float64 `json:"quantile_rate,omitempty"`
	AutoClipR      float64 `json:"auto_clip_r,omitempty"`

	// SGD with momentum and weight decay at a constant learning rate.
	LR          float64 `json:"lr"`
	Momentum    float64 `json:"momentum"`
	WeightDecay float64 `json:"weight_decay"`

	Batch  int `json:"batch"`
	Epochs int `json:"epochs"`
	// WidthDiv divides AlexNet's widths (1: the paper's model); Dropout is
	// its classifier's dropout probability.
	WidthDiv int     `json:"width_div"`
	Dropout  float64 `json:"dropout"`
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
		Estimator: "ps-clip-sgd", Clip: PaperPSClipSGD,
		LR: 0.01, Momentum: 0.9, WeightDecay: 1e-4,
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
	return cifardata.Augment{}, fmt.Errorf("--augment = %q, want one of %s", s, strings.Join(Augments, ", "))
}

// SetEstimator sets the estimator and its settings from its command-line
// name and parameters, as estimator.Flags parses them.
func (c *Config) SetEstimator(name string, p estimator.Params) {
	c.Estimator, c.Clip, c.Alpha, c.Beta = name, p.Gamma, p.Alpha, p.Beta
	c.AutoAlpha, c.AutoBeta, c.Window = p.AutoAlpha, p.AutoBeta, p.Window
	c.TargetQuantile, c.QuantileRate, c.AutoClipR = p.TargetQuantile, p.QuantileRate, p.R
}

// increasing reports whether the run uses PS-Clip-SGD's increasing
// threshold (with a given or an automatic β).
func (c *Config) increasing() bool { return c.Beta != 0 || c.AutoBeta }

// automatic reports whether the threshold is estimated from a window of
// norms (PSAuto), the only user of Window.
func (c *Config) automatic() bool {
	return c.Estimator == "ps-clip-auto" || (c.Estimator == "ps-clip-sgd" && (c.AutoAlpha || c.AutoBeta))
}

// usesClip reports whether the estimator needs Clip as its threshold.
func (c *Config) usesClip() bool {
	return c.Estimator == "clip-sgd" || (c.Estimator == "ps-clip-sgd" && !c.increasing())
}

// PerSample reports whether the estimator computes per-sample gradient
// norms, as RunOptions.LogNorms needs.
func (c *Config) PerSample() bool {
	e, err := c.estimator()
	return err == nil && e.PerSample()
}

// readsClip reports whether the estimator reads Clip at all:
// ps-clip-quantile takes it as its initial threshold.
func (c *Config) readsClip() bool { return c.usesClip() || c.Estimator == "ps-clip-quantile" }

// Validate checks the configuration. The error names the offending setting
// by its command-line flag.
func (c *Config) Validate() error {
	if !slices.Contains(estimator.Names, c.Estimator) {
		return fmt.Errorf("--estimator = %q, want one of %s", c.Estimator, strings.Join(estimator.Names, ", "))
	}
	for _, p := range []struct {
		flag string
		v    int
	}{{"batch", c.Batch}, {"epochs", c.Epochs}, {"width-div", c.WidthDiv}} {
		if p.v <= 0 {
			return fmt.Errorf("--%s = %d, want > 0", p.flag, p.v)
		}
	}
	switch {
	case c.MaxBadSteps < 0:
		return fmt.Errorf("--max-bad-steps = %d, want ≥ 0", c.MaxBadSteps)
	case !(finite(c.LR) && c.LR > 0):
		return fmt.Errorf("--lr = %v, want > 0", c.LR)
	case !(c.Momentum >= 0 && c.Momentum < 1):
		return fmt.Errorf("--momentum = %v, want 0 ≤ momentum < 1", c.Momentum)
	case !(finite(c.WeightDecay) && c.WeightDecay >= 0):
		return fmt.Errorf("--weight-decay = %v, want ≥ 0", c.WeightDecay)
	case !(c.Dropout >= 0 && c.Dropout < 1):
		return fmt.Errorf("--dropout = %v, want 0 ≤ dropout < 1", c.Dropout)
	case !(c.Beta >= 0) || math.IsInf(c.Beta, 0):
		return fmt.Errorf("--beta = %v, want a finite β > 0", c.Beta)
	case c.increasing() && c.Estimator != "ps-clip-sgd":
		return fmt.Errorf("--alpha/--beta (increasing threshold) need --estimator ps-clip-sgd, not %s", c.Estimator)
	case c.increasing() && !c.AutoAlpha && !(finite(c.Alpha) && c.Alpha > 0):
		return fmt.Errorf("--alpha = %v with --beta %s, want a finite α > 0 or auto", c.Alpha, autoNum(c.Beta, c.AutoBeta))
	case !c.increasing() && (c.Alpha != 0 || c.AutoAlpha):
		return errors.New("--alpha needs --beta (the increasing threshold α·k^(1/β))")
	case c.usesClip() && !(finite(c.Clip) && c.Clip > 0):
		return fmt.Errorf("--clip = %v with --estimator %s, want a finite threshold > 0", c.Clip, c.Estimator)
	case c.Estimator == "ps-clip-quantile" && !(finite(c.Clip) && c.Clip >= 0):
		return fmt.Errorf("--clip = %v with --estimator ps-clip-quantile, want a finite initial threshold > 0, or 0 for the first batch's median", c.Clip)
	}
	// The settings only one estimator reads are refused by the others
	// rather than ignored, as estimator.Flags does.
	for _, s := range c.ownSettings() {
		if s.set && !s.reads {
			return fmt.Errorf("--%s applies only to --estimator %s, not to %s", s.flag, s.reader, c.Method())
		}
	}
	if _, err := ParseAugment(c.Augment); err != nil {
		return err
	}
	_, err := c.estimator()
	return err
}

// ownSetting is a setting only some estimators read.
type ownSetting struct {
	flag, reader string // its flag; who reads it
	set, reads   bool   // whether it is set; whether the estimator reads it
}

// ownSettings lists the settings only some estimators read, by flag:
// "window", "target-quantile", "quantile-rate" and "auto-clip-r".
func (c *Config) ownSettings() []ownSetting {
	return []ownSetting{
		{"window", "ps-clip-auto, or ps-clip-sgd with --alpha or --beta auto", c.Window != 0, c.automatic()},
		{"target-quantile", "ps-clip-quantile", c.TargetQuantile != 0, c.Estimator == "ps-clip-quantile"},
		{"quantile-rate", "ps-clip-quantile", c.QuantileRate != 0, c.Estimator == "ps-clip-quantile"},
		{"auto-clip-r", "auto-clip", c.AutoClipR != 0, c.Estimator == "auto-clip"},
	}
}

// estimator builds the configured estimator; its errors name the estimator
// as estimator.Flags's do.
func (c *Config) estimator() (estimator.Estimator, error) {
	p := estimator.Params{
		Alpha: c.Alpha, Beta: c.Beta, AutoAlpha: c.AutoAlpha, AutoBeta: c.AutoBeta, Window: c.Window,
		TargetQuantile: c.TargetQuantile, QuantileRate: c.QuantileRate, R: c.AutoClipR,
	}
	if c.readsClip() {
		p.Gamma = c.Clip
	}
	e, err := estimator.New(c.Estimator, p)
	if err != nil {
		return nil, fmt.Errorf("--estimator %s: %s", c.Estimator, strings.TrimPrefix(err.Error(), "estimator: "))
	}
	return e, nil
}

// Method is the paper's name for the configured estimator, e.g.
// "PS-Clip-SGD γ=45" or "Increasing-PS-Clip-SGD α=15 β=2", and a name in
// the same style for the others: "Increasing-PS-Clip-SGD α=auto β=2",
// "Auto-PS-Clip-SGD" (α = σ̂, β = p̂), "Quantile-PS-Clip-SGD q=0.5",
// "Auto-Clip r=0.01".
func (c *Config) Method() string {
	var name string
	switch {
	case c.Estimator == "sgd":
		return "SGD"
	case c.Estimator == "clip-sgd":
		return fmt.Sprintf("Clip-SGD γ=%g", c.Clip)
	case c.Estimator == "nsgd":
		return "Normalized-SGD"
	case c.Estimator == "auto-clip":
		return fmt.Sprintf("Auto-Clip r=%g", orDefault(c.AutoClipR, estimator.DefaultAutoClipR))
	case c.Estimator == "ps-clip-quantile":
		name = fmt.Sprintf("Quantile-PS-Clip-SGD q=%g", orDefault(c.TargetQuantile, estimator.DefaultTargetQuantile))
		if c.QuantileRate != 0 {
			name += fmt.Sprintf(" rate=%g", c.QuantileRate)
		}
		if c.Clip != 0 {
			name += fmt.Sprintf(" γ0=%g", c.Clip)
		}
		return name
	case c.Estimator == "ps-clip-auto":
		name = "Auto-PS-Clip-SGD"
	case c.increasing():
		name = fmt.Sprintf("Increasing-PS-Clip-SGD α=%s β=%s", autoNum(c.Alpha, c.AutoAlpha), autoNum(c.Beta, c.AutoBeta))
	default:
		return fmt.Sprintf("PS-Clip-SGD γ=%g", c.Clip)
	}
	if c.Window != 0 {
		name += fmt.Sprintf(" window=%d", c.Window)
	}
	return name
}

// autoNum is x as a flag value: "auto" if auto.
func autoNum(x float64, auto bool) string {
	if auto {
		return "auto"
	}
	return num(x)
}

func orDefault(x, def float64) float64 {
	if x == 0 {
		return def
	}
	return x
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

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
