package gpt

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/psclip/psclip/data/text"
	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/models"
	"github.com/psclip/psclip/train"
)

// ClipMode says how gradients are clipped when a step accumulates several
// micro-batches.
type ClipMode string

const (
	// ClipGlobal sums the micro-batch gradients, then clips once: the usual
	// practice, and nanoGPT's.
	ClipGlobal ClipMode = "global"
	// ClipMicroBatch clips every micro-batch's gradient, then accumulates
	// (MB-Clip).
	ClipMicroBatch ClipMode = "micro-batch"
	// ClipPerSample clips every sequence's gradient before averaging
	// (PS-Clip-SGD with a constant threshold, by book-keeping).
	ClipPerSample ClipMode = "per-sample"
	// ClipNone does not clip.
	ClipNone ClipMode = "none"
)

// ClipModes lists the modes in their command-line spelling.
var ClipModes = []ClipMode{ClipGlobal, ClipMicroBatch, ClipPerSample, ClipNone}

// ParseClipMode parses a command-line clip mode.
func ParseClipMode(s string) (ClipMode, error) {
	for _, m := range ClipModes {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("unknown clip mode %q (want global, micro-batch, per-sample or none)", s)
}

// Estimator returns the estimator and the train.Scope that implement the
// mode with the paper's threshold clip: on the step's mean gradient ḡ
// (global), each micro-batch's share g_j/K of it (micro-batch,
// train.MicroBatch), each sequence's gradient g_i (per-sample).
func (m ClipMode) Estimator(clip float64) (estimator.Estimator, train.Scope, error) {
	switch m {
	case ClipNone:
		return estimator.SGD{}, train.Global, nil
	case ClipGlobal, ClipMicroBatch:
		e, err := estimator.NewClipSGD(clip)
		if err != nil {
			return nil, 0, err
		}
		if m == ClipMicroBatch {
			return e, train.MicroBatch, nil
		}
		return e, train.Global, nil
	case ClipPerSample:
		t, err := estimator.Constant(clip)
		if err != nil {
			return nil, 0, err
		}
		return estimator.NewPSClip(t), train.Global, nil
	}
	return nil, 0, fmt.Errorf("unknown clip mode %q", string(m))
}

// ClipConvention says which micro-batch gradient the threshold --clip
// bounds in micro-batch mode. It changes nothing in the other modes.
type ClipConvention string

const (
	// ConventionNanoGPT holds each micro-batch's share of the accumulated
	// gradient, g_j/K, to the threshold γ: nanoGPT's loop backpropagates
	// loss/K, and the paper's MB-Clip-SGD clips those gradients. In mean
	// gradients, MB-Clip clips each g_j to K·γ, and global clipping (which
	// clips the sum of the shares, ḡ, to γ) is the same as in the paper, so
	// one γ for both modes compares them as the paper did. It is
	// train.MicroBatch.
	ConventionNanoGPT ClipConvention = "nanogpt"
	// ConventionMean holds each micro-batch's mean gradient g_j to γ, so
	// that K identical micro-batches step as one batch clipped to γ: a
	// stronger clip than the paper's by the factor K: train.MicroBatchMean.
	ConventionMean ClipConvention = "mean"
)

// ClipConventions lists the conventions in their command-line spelling.
var ClipConventions = []ClipConvention{ConventionNanoGPT, ConventionMean}

// ParseClipConvention parses a command-line clip convention.
func ParseClipConvention(s string) (ClipConvention, error) {
	for _, c := range ClipConventions {
		if string(c) == s {
			return c, nil
		}
	}
	return "", fmt.Errorf("unknown clip convention %q (want nanogpt or mean)", s)
}

// Config is one training run: the model, the nanoGPT optimisation recipe
// and the run's bookkeeping. The zero value is not valid; start from
// Default or Preset.
type Config struct {
	// The model: nanoGPT's GPTConfig. VocabSize 0 takes the corpus's
	// vocabulary size; a larger one pads the embedding (GPT-2's 50304).
	NLayer    int     `json:"n_layer"`
	NHead     int     `json:"n_head"`
	NEmbd     int     `json:"n_embd"`
	BlockSize int     `json:"block_size"`
	VocabSize int     `json:"vocab_size"`
	Dropout   float64 `json:"dropout"`
	Bias      bool    `json:"bias"`
	ExactGELU bool    `json:"exact_gelu"`

	// A step accumulates Accum micro-batches of MicroBatch sequences.
	MicroBatch int `json:"micro_batch"`
	Accum      int `json:"accum"`
	Steps      int `json:"steps"`

	// AdamW with linear warm-up over Warmup steps, then cosine decay from LR
	// to MinLR at the last step.
	LR          float64 `json:"lr"`
	MinLR       float64 `json:"min_lr"`
	Warmup      int     `json:"warmup"`
	WeightDecay float64 `json:"weight_decay"`
	Beta1       float64 `json:"beta1"`
	Beta2       float64 `json:"beta2"`
	Eps         float64 `json:"eps"`

	// ClipMode clips with threshold Clip under ClipConvention; see
	// ClipThreshold.
	ClipMode       ClipMode       `json:"clip_mode"`
	Clip           float64        `json:"clip"`
	ClipConvention ClipConvention `json:"clip_convention"`
	// PSEstimator is per-sample mode's estimator, by its estimator-package
	// name: "ps-clip-sgd" (or empty) clips to the constant Clip, or with
	// Beta > 0 or AutoBeta to α·k^(1/β); "ps-clip-auto" sets α = σ̂, β = p̂
	// from the last Window per-sample norms; "ps-clip-quantile" moves its
	// threshold (initially Clip, 0: the first step's median) toward the
	// TargetQuantile of unclipped sequences at QuantileRate; "auto-clip" is
	// g/(|g| + AutoClipR). Zero values select the estimator package's
	// defaults, and are left out of the JSON so that checkpoints of runs
	// without them keep their configuration.
	PSEstimator    string  `json:"ps_estimator,omitempty"`
	Alpha          float64 `json:"alpha,omitempty"`
	Beta           float64 `json:"beta,omitempty"`
	AutoAlpha      bool    `json:"auto_alpha,omitempty"`
	AutoBeta       bool    `json:"auto_beta,omitempty"`
	Window         int     `json:"window,omitempty"`
	TargetQuantile float64 `json:"target_quantile,omitempty"`
	QuantileRate   float64 `json:"quantile_rate,omitempty"`
	AutoClipR      float64 `json:"auto_clip_r,omitempty"`

	// Validation loss is estimated on EvalIters batches every EvalInterval
	// steps (and at the first and last step); a JSON record is logged every
	// LogInterval steps; a checkpoint is written every CkptInterval steps (0:
	// only at the end and on interrupt).
	EvalInterval int `json:"eval_interval"`
	EvalIters    int `json:"eval_iters"`
	LogInterval  int `json:"log_interval"`
	CkptInterval int `json:"ckpt_interval"`
	// MaxBadSteps stops the run after that many consecutive steps without
	// an update because of non-finite gradients (0: never).
	MaxBadSteps int `json:"max_bad_steps"`

	// Seed determines the initialisation, the data order and the dropout
	// masks; nothing else does, so runs that differ only in ClipMode or LR
	// see the same data in the same order from the same initial weights.
	Seed uint64 `json:"seed"`
}

// Default is nanoGPT's published CPU configuration for character-level
// Shakespeare (README, "I only have a macbook"), with the paper's AdamW
// betas: 4 layers, 4 heads, width 128, block 64, batch 12, 2000 steps,
// learning rate 1e-3 decaying to 1e-4 after 100 warm-up steps, no dropout.
func Default() Config {
	return Config{
		NLayer: 4, NHead: 4, NEmbd: 128, BlockSize: 64,
		MicroBatch: 12, Accum: 1, Steps: 2000,
		LR: 1e-3, MinLR: 1e-4, Warmup: 100,
		WeightDecay: 0.1, Beta1: 0.9, Beta2: 0.95, Eps: 1e-8,
		ClipMode: ClipGlobal, Clip: 1, ClipConvention: ConventionNanoGPT,
		EvalInterval: 250, EvalIters: 20, LogInterval: 1, CkptInterval: 250,
		MaxBadSteps: 10,
		Seed:        1337,
	}
}

// ExperimentDefault is the base configuration of "psclip experiment gpt":
// a GPT small enough that the default grid (3 learning rates × 2 clip modes
// × 3 seeds) trains in about 15 minutes on a 2-core machine, on byte-level
// Go source, with 8 micro-batches accumulated per step and γ = 1, the
// paper's threshold (see experiments/gpt/README.md).
func ExperimentDefault() Config {
	c := Default()
	c.NLayer, c.NHead, c.NEmbd, c.BlockSize = 2, 4, 64, 64
	c.MicroBatch, c.Accum, c.Steps, c.Warmup = 4, 8, 250, 25
	c.Clip = 1
	c.EvalInterval, c.EvalIters, c.CkptInterval = 25, 50, 0
	return c
}

// PSEstimators lists the accepted values of Config.PSEstimator.
var PSEstimators = []string{"ps-clip-sgd", "ps-clip-auto", "ps-clip-quantile", "auto-clip"}

// SetPSEstimator sets per-sample mode's estimator and its settings from its
// name and parameters as estimator.Flags parses them; p.Gamma is left to
// Clip.
func (c *Config) SetPSEstimator(name string, p estimator.Params) {
	c.PSEstimator, c.Alpha, c.Beta, c.AutoAlpha, c.AutoBeta = name, p.Alpha, p.Beta, p.AutoAlpha, p.AutoBeta
	c.Window, c.TargetQuantile, c.QuantileRate, c.AutoClipR = p.Window, p.TargetQuantile, p.QuantileRate, p.R
}

// psEstimator is PSEstimator with its default.
func (c *Config) psEstimator() string {
	if c.PSEstimator == "" {
		return "ps-clip-sgd"
	}
	return c.PSEstimator
}

// increasing reports whether PS-Clip-SGD's threshold is α·k^(1/β).
func (c *Config) increasing() bool { return c.Beta != 0 || c.AutoBeta }

// Adaptive reports whether per-sample mode clips to a threshold other than
// the constant Clip: an increasing, estimated or automatic one.
func (c *Config) Adaptive() bool {
	return c.ClipMode == ClipPerSample && (c.psEstimator() != "ps-clip-sgd" || c.increasing())
}

// readsClip reports whether the clip mode reads Clip.
func (c *Config) readsClip() bool {
	return c.ClipMode != ClipNone && (!c.Adaptive() || c.psEstimator() == "ps-clip-quantile")
}

// ClipThreshold is the threshold the clip mode holds mean gradients to, as
// the log reports it: K·Clip in micro-batch mode under the nanogpt
// convention (train.MicroBatch clips each share g_j/K to Clip), Clip
// otherwise, and 0 in mode none and with an adaptive per-sample threshold
// (Adaptive).
func (c *Config) ClipThreshold() float64 {
	switch {
	case c.ClipMode == ClipNone || c.Adaptive():
		return 0
	case c.ClipMode == ClipMicroBatch && c.ClipConvention == ConventionNanoGPT:
		return float64(c.Accum) * c.Clip
	}
	return c.Clip
}

// estimator returns the estimator and scope of the configuration's clipping.
// Its errors name the flag, as estimator.Flags's do.
func (c *Config) estimator() (estimator.Estimator, train.Scope, error) {
	if !c.Adaptive() {
		e, scope, err := c.ClipMode.Estimator(c.Clip)
		if scope == train.MicroBatch && c.ClipConvention == ConventionMean {
			scope = train.MicroBatchMean
		}
		return e, scope, err
	}
	p := estimator.Params{
		Alpha: c.Alpha, Beta: c.Beta, AutoAlpha: c.AutoAlpha, AutoBeta: c.AutoBeta, Window: c.Window,
		TargetQuantile: c.TargetQuantile, QuantileRate: c.QuantileRate, R: c.AutoClipR,
	}
	if c.readsClip() {
		p.Gamma = c.Clip
	}
	e, err := estimator.New(c.psEstimator(), p)
	if err != nil {
		return nil, 0, fmt.Errorf("--ps-estimator %s: %s", c.psEstimator(), strings.TrimPrefix(err.Error(), "estimator: "))
	}
	return e, train.Global, nil
}

// validatePS checks per-sample mode's estimator settings, refusing those
// the configured estimator does not read rather than ignoring them, as
// estimator.Flags does.
func (c *Config) validatePS() error {
	name := c.psEstimator()
	automatic := name == "ps-clip-auto" || (name == "ps-clip-sgd" && (c.AutoAlpha || c.AutoBeta))
	switch {
	case !slices.Contains(PSEstimators, name):
		return fmt.Errorf("--ps-estimator = %q, want one of %s", name, strings.Join(PSEstimators, ", "))
	case c.ClipMode != ClipPerSample && (c.PSEstimator != "" && c.PSEstimator != "ps-clip-sgd" || c.increasing() || c.Alpha != 0 || c.AutoAlpha):
		return fmt.Errorf("--ps-estimator, --alpha and --beta need --clip-mode per-sample, not %s", c.ClipMode)
	case !(c.Beta >= 0) || math.IsInf(c.Beta, 0):
		return fmt.Errorf("--beta = %v, want a finite β > 0 or auto", c.Beta)
	case c.increasing() && name != "ps-clip-sgd":
		return fmt.Errorf("--alpha/--beta (increasing threshold) need --ps-estimator ps-clip-sgd, not %s", name)
	case c.increasing() && !c.AutoAlpha && !(finite(c.Alpha) && c.Alpha > 0):
		return fmt.Errorf("--alpha = %v with --beta, want a finite α > 0 or auto", c.Alpha)
	case !c.increasing() && (c.Alpha != 0 || c.AutoAlpha):
		return errors.New("--alpha needs --beta (the increasing threshold α·k^(1/β))")
	}
	for _, s := range []struct {
		flag, reader string
		set, reads   bool
	}{
		{"window", "ps-clip-auto, or ps-clip-sgd with --alpha or --beta auto", c.Window != 0, automatic},
		{"target-quantile", "ps-clip-quantile", c.TargetQuantile != 0, name == "ps-clip-quantile"},
		{"quantile-rate", "ps-clip-quantile", c.QuantileRate != 0, name == "ps-clip-quantile"},
		{"auto-clip-r", "auto-clip", c.AutoClipR != 0, name == "auto-clip"},
	} {
		if s.set && !(s.reads && c.ClipMode == ClipPerSample) {
			return fmt.Errorf("--%s applies only to --clip-mode per-sample with --ps-estimator %s", s.flag, s.reader)
		}
	}
	if name == "ps-clip-quantile" && !(finite(c.Clip) && c.Clip >= 0) {
		return fmt.Errorf("--clip = %v with --ps-estimator ps-clip-quantile, want a finite initial threshold > 0, or 0 for the first step's median", c.Clip)
	}
	return nil
}

// Presets lists the names Preset accepts.
var Presets = []string{"gpt2-124m"}

// Preset returns a named configuration. "gpt2-124m" is the paper's GPT-2
// run on OpenWebText (GPT-3 paper's 124M recipe, nanoGPT's
// train_gpt2.py): 12 layers, 12 heads, width 768, block 1024, vocabulary
// 50304, 8 sequences × 64 accumulation steps (≈ 0.5 M tokens a step), 5000
// steps with 500 warm-up, peak learning rate 6e-4, clipping at 1.
func Preset(name string) (Config, error) {
	switch name {
	case "gpt2-124m":
		c := Default()
		c.NLayer, c.NHead, c.NEmbd, c.BlockSize, c.VocabSize = 12, 12, 768, 1024, 50304
		c.MicroBatch, c.Accum, c.Steps, c.Warmup = 8, 64, 5000, 500
		c.LR, c.MinLR = 6e-4, 6e-5
		c.EvalInterval, c.EvalIters, c.CkptInterval = 250, 200, 250
		return c, nil
	}
	return Config{}, fmt.Errorf("unknown preset %q (want gpt2-124m)", name)
}

// model is the configuration of the model.
func (c *Config) model() models.GPTConfig {
	return models.GPTConfig{NLayer: c.NLayer, NHead: c.NHead, NEmbd: c.NEmbd, BlockSize: c.BlockSize,
		VocabSize: c.VocabSize, Dropout: c.Dropout, Bias: c.Bias, ExactGELU: c.ExactGELU}
}

// TokensPerStep is the number of target tokens one optimizer step trains on.
func (c *Config) TokensPerStep() int { return c.MicroBatch * c.Accum * c.BlockSize }

// Validate checks the configuration on its own; Run also checks it against
// the corpus (block size, vocabulary). The error names the offending
// setting by its command-line flag.
func (c *Config) Validate() error {
	pos := []struct {
		flag string
		v    int
	}{
		{"n-layer", c.NLayer}, {"n-head", c.NHead}, {"n-embd", c.NEmbd}, {"block-size", c.BlockSize},
		{"micro-batch", c.MicroBatch}, {"accum", c.Accum}, {"steps", c.Steps},
		{"eval-interval", c.EvalInterval}, {"eval-iters", c.EvalIters}, {"log-interval", c.LogInterval},
	}
	for _, p := range pos {
		if p.v <= 0 {
			return fmt.Errorf("--%s = %d, want > 0", p.flag, p.v)
		}
	}
	nonNeg := []struct {
		flag string
		v    int
	}{{"vocab-size", c.VocabSize}, {"warmup", c.Warmup}, {"ckpt-interval", c.CkptInterval}, {"max-bad-steps", c.MaxBadSteps}}
	for _, p := range nonNeg {
		if p.v < 0 {
			return fmt.Errorf("--%s = %d, want ≥ 0", p.flag, p.v)
		}
	}
	switch {
	case c.NEmbd%c.NHead != 0:
		return fmt.Errorf("--n-embd = %d is not a multiple of --n-head = %d", c.NEmbd, c.NHead)
	case c.VocabSize > text.MaxVocab:
		return fmt.Errorf("--vocab-size = %d exceeds the %d tokens of uint16 token files", c.VocabSize, text.MaxVocab)
	case !finite(c.Dropout) || c.Dropout < 0 || c.Dropout >= 1:
		return fmt.Errorf("--dropout = %v, want 0 ≤ dropout < 1", c.Dropout)
	case !finite(c.LR) || c.LR <= 0:
		return fmt.Errorf("--lr = %v, want > 0", c.LR)
	case !finite(c.MinLR) || c.MinLR < 0 || c.MinLR > c.LR:
		return fmt.Errorf("--min-lr = %v, want 0 ≤ min-lr ≤ lr = %v", c.MinLR, c.LR)
	case c.Warmup > c.Steps:
		return fmt.Errorf("--warmup = %d exceeds --steps = %d", c.Warmup, c.Steps)
	case !finite(c.WeightDecay) || c.WeightDecay < 0:
		return fmt.Errorf("--weight-decay = %v, want ≥ 0", c.WeightDecay)
	case !(c.Beta1 >= 0 && c.Beta1 < 1):
		return fmt.Errorf("--beta1 = %v, want 0 ≤ beta1 < 1", c.Beta1)
	case !(c.Beta2 >= 0 && c.Beta2 < 1):
		return fmt.Errorf("--beta2 = %v, want 0 ≤ beta2 < 1", c.Beta2)
	case !finite(c.Eps) || c.Eps <= 0:
		return fmt.Errorf("--eps = %v, want > 0", c.Eps)
	}
	if _, err := ParseClipMode(string(c.ClipMode)); err != nil {
		return errors.New("--clip-mode: " + err.Error())
	}
	if _, err := ParseClipConvention(string(c.ClipConvention)); err != nil {
		return errors.New("--clip-convention: " + err.Error())
	}
	if err := c.validatePS(); err != nil {
		return err
	}
	if c.readsClip() && !c.Adaptive() && !(finite(c.Clip) && c.Clip > 0 && finite(c.ClipThreshold())) {
		return fmt.Errorf("--clip = %v with --clip-mode %s, want a finite threshold > 0", c.Clip, c.ClipMode)
	}
	_, _, err := c.estimator()
	return err
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// PSMethod names per-sample mode's threshold as the CIFAR trainer names its
// methods: "PS-Clip-SGD γ=1", "Increasing-PS-Clip-SGD α=auto β=2",
// "Auto-PS-Clip-SGD", "Quantile-PS-Clip-SGD q=0.5", "Auto-Clip r=0.01".
func (c *Config) PSMethod() string {
	switch c.psEstimator() {
	case "ps-clip-auto":
		return "Auto-PS-Clip-SGD"
	case "ps-clip-quantile":
		return fmt.Sprintf("Quantile-PS-Clip-SGD q=%g", orDefault(c.TargetQuantile, estimator.DefaultTargetQuantile))
	case "auto-clip":
		return fmt.Sprintf("Auto-Clip r=%g", orDefault(c.AutoClipR, estimator.DefaultAutoClipR))
	}
	if c.increasing() {
		return fmt.Sprintf("Increasing-PS-Clip-SGD α=%s β=%s", autoNum(c.Alpha, c.AutoAlpha), autoNum(c.Beta, c.AutoBeta))
	}
	return fmt.Sprintf("PS-Clip-SGD γ=%g", c.Clip)
}

// autoNum is x as a flag value: "auto" if auto.
func autoNum(x float64, auto bool) string {
	if auto {
		return "auto"
	}
	return fmt.Sprintf("%g", x)
}

func orDefault(x, def float64) float64 {
	if x == 0 {
		return def
	}
	return x
}
