package gpt

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/psclip/psclip/data/text"
	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/internal/jsonkeys"
	"github.com/psclip/psclip/models"
	"github.com/psclip/psclip/privacy"
	"github.com/psclip/psclip/run"
	"github.com/psclip/psclip/setting"
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
	return "", setting.Errorf("ClipMode", strconv.Quote(s), "global, micro-batch, per-sample or none")
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

// ClipConvention says which micro-batch gradient the threshold Clip bounds
// in micro-batch mode, the only mode that reads it; unset is
// ConventionNanoGPT.
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

// ParseClipConvention parses a clip convention; "" is unset.
func ParseClipConvention(s string) (ClipConvention, error) {
	if s == "" {
		return "", nil
	}
	for _, c := range ClipConventions {
		if string(c) == s {
			return c, nil
		}
	}
	return "", setting.Errorf("ClipConvention", strconv.Quote(s), "nanogpt or mean (or unset: nanogpt)")
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
	// to MinLR at step DecaySteps (0: the last step), and MinLR after it
	// (nanoGPT's lr_decay_iters): a run of fewer Steps with the DecaySteps
	// of a longer one takes that run's first steps exactly.
	LR          float64 `json:"lr"`
	MinLR       float64 `json:"min_lr"`
	Warmup      int     `json:"warmup"`
	DecaySteps  int     `json:"decay_steps,omitempty"`
	WeightDecay float64 `json:"weight_decay"`
	Beta1       float64 `json:"beta1"`
	Beta2       float64 `json:"beta2"`
	Eps         float64 `json:"eps"`

	// ClipMode clips with threshold Clip under ClipConvention (micro-batch
	// mode only); see ClipThreshold.
	ClipMode       ClipMode       `json:"clip_mode"`
	ClipConvention ClipConvention `json:"clip_convention"`
	// Spec holds the threshold Clip of every clip mode but none, and
	// per-sample mode's estimator and its settings: Estimator
	// "ps-clip-sgd" (or unset) clips to the constant Clip, or with Beta or
	// AutoBeta to α·k^(1/β); "ps-clip-auto" sets α = σ̂, β = p̂ from the
	// last Window per-sample norms; "ps-clip-quantile" moves its threshold
	// (initially Clip, 0: the first step's median) toward the
	// TargetQuantile of unclipped sequences at QuantileRate; "auto-clip" is
	// g/(|g| + AutoClipR). The other modes read only Clip, and a setting
	// the mode does not read must be unset. In JSON the estimator is
	// "ps_estimator", and unset settings other than "clip" are left out,
	// so that checkpoints of older runs keep their configuration.
	estimator.Spec

	// Corruption corrupts round(Corrupt·n) of each step's n training
	// sequences (CorruptPerStep), laid out and filled as CorruptLayout and
	// CorruptKind say, drawn from Seed on a stream of their own: the clean
	// sequences are those of the same run without corruption, and Corrupt
	// 0 is that run bit for bit; a share that rounds to none or all of them
	// is refused (setting.Share). Validation and test text stay clean. It
	// is part of the run's data identity, so a resume with another
	// corruption is refused.
	Corruption

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

	// Sampling is how a step's training sequences are drawn:
	// SamplingWindows (MicroBatch·Accum windows at random offsets,
	// nanoGPT's get_batch) or SamplingPoisson (the training split cut
	// into N disjoint records of BlockSize+1 tokens, text.Records, each
	// joining a step independently with probability q =
	// MicroBatch·Accum/N; the step's records are cut into ⌈B/MicroBatch⌉
	// micro-batches of sizes that differ by at most one). "" is Poisson
	// for dp-sgd, windows otherwise; Poisson is for dp-sgd only, and
	// dp-sgd refuses windows, since a token would sit in many samples.
	Sampling string `json:"sampling,omitempty"`
	// Delta is dp-sgd's δ, at which the run reports its ε
	// (EvalRecord.Epsilon, Summary.Epsilon: privacy.Epsilon of the steps'
	// history, RDP with Balle et al.'s conversion) for adding or removing
	// one record: a window of BlockSize+1 tokens, not a document (which
	// spans many records; see README.md). Required by dp-sgd, which New
	// refuses unless it is below 1/N (N records); unset for the other
	// estimators.
	Delta float64 `json:"delta,omitempty"`
	// ReleaseUnprotected, for dp-sgd, writes what a private run withholds
	// (run.Released): the training and validation loss, per-sample norms,
	// clipped counts, realised batch sizes. Every output then lists them
	// as "unprotected", and the run is not private.
	ReleaseUnprotected bool `json:"release_unprotected,omitempty"`

	// Seed determines the initialisation, the data order, the dropout
	// masks and the corruption; nothing else does, so runs that differ only in ClipMode or LR
	// see the same data in the same order from the same initial weights.
	Seed uint64 `json:"seed"`

	// Init, if set, is a Hugging Face GPT-2 directory (config.json and
	// model.safetensors, models.ReadGPT2) whose weights replace Seed's
	// initialisation: fine-tuning. Its architecture must be the model's
	// (UseGPT2 sets it), with BlockSize at most its positions. The
	// weights' SHA-256 is part of the run's data identity, so a resume
	// from other weights is refused; the directory itself may move.
	Init string `json:"init,omitempty"`
	// LoRARank, if > 0, fine-tunes Init's weights by low-rank adaptation
	// (models.GPT.AdaptLoRA): every weight of the model is frozen, and the
	// LoRATargets of every block (models.LoRATargets) are adapted at this
	// rank with scale LoRAAlpha/LoRARank, the adapters drawn from Seed;
	// only they train. It needs Init. Checkpoints hold the base weights
	// and the adapters; LoadModel rebuilds the adapted model.
	LoRARank    int      `json:"lora_rank,omitempty"`
	LoRAAlpha   float64  `json:"lora_alpha,omitempty"`
	LoRATargets []string `json:"lora_targets,omitempty"`
	// Freeze lists patterns (path.Match, e.g. "transformer.wte.weight" or
	// "transformer.h.0.*") of the parameters to freeze (nn.Param.Frozen:
	// no gradient, no per-sample work, no part in any norm) beside what
	// LoRA freezes; each must match a parameter, and one must be left to
	// train.
	Freeze []string `json:"freeze,omitempty"`
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
		ClipMode: ClipGlobal, Spec: estimator.Spec{Clip: 1},
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

// PSEstimators lists the estimators per-sample mode accepts.
var PSEstimators = []string{"ps-clip-sgd", "ps-clip-auto", "ps-clip-quantile", "auto-clip", "dp-sgd"}

// The values of Config.Sampling.
const (
	SamplingWindows = "windows"
	SamplingPoisson = "poisson"
)

// DPSGD reports whether the run trains with DP-SGD (per-sample mode's
// dp-sgd) and accounts its ε. Whether that run is private also depends on
// its noise seed (estimator.DPSGD.Private), its sampling and what it releases
// (run.Privacy).
func (c *Config) DPSGD() bool { return c.ClipMode == ClipPerSample && c.Estimator == "dp-sgd" }

// privacy is what the run layer must know of a dp-sgd run: a fresh secret
// (of NoiseSeed, if fixed) and the release; nil without dp-sgd.
func (c *Config) privacy() *run.Privacy {
	if !c.DPSGD() {
		return nil
	}
	return &run.Privacy{Secret: privacy.NewSecret(c.NoiseSeed), ReleaseUnprotected: c.ReleaseUnprotected}
}

// sampling is Config.Sampling with "" resolved: Poisson for dp-sgd,
// windows otherwise.
func (c *Config) sampling() string {
	switch {
	case c.Sampling != "":
		return c.Sampling
	case c.DPSGD():
		return SamplingPoisson
	}
	return SamplingWindows
}

// ExpectedBatch is the number of sequences a step trains on:
// MicroBatch·Accum, the expected number under Poisson sampling.
func (c *Config) ExpectedBatch() int { return c.MicroBatch * c.Accum }

// validatePrivacy checks the sampling and dp-sgd's settings.
func (c *Config) validatePrivacy() error {
	switch {
	case c.Sampling != "" && c.Sampling != SamplingWindows && c.Sampling != SamplingPoisson:
		return setting.Errorf("Sampling", strconv.Quote(c.Sampling), "%s or %s", SamplingPoisson, SamplingWindows)
	case c.sampling() == SamplingPoisson && !c.DPSGD():
		return setting.Unread("Sampling", strconv.Quote(c.Sampling), "Poisson sampling of records is dp-sgd's, not "+c.Label()+"'s")
	case c.DPSGD() && c.sampling() != SamplingPoisson:
		return setting.Errorf("Sampling", strconv.Quote(c.Sampling), "%s for dp-sgd: windows at random offsets overlap, so one token sits in many samples and the accountant's record-level guarantee does not hold", SamplingPoisson)
	case c.Delta != 0 && !c.DPSGD():
		return setting.Unread("Delta", c.Delta, "δ is dp-sgd's")
	case c.ReleaseUnprotected && !c.DPSGD():
		return setting.Unread("ReleaseUnprotected", true, "a run without dp-sgd releases everything")
	case c.DPSGD() && !(c.Delta > 0 && c.Delta < 1):
		return setting.Errorf("Delta", c.Delta, "a δ strictly between 0 and 1 (below 1/N) for dp-sgd")
	case c.DPSGD() && c.Corrupt != 0:
		return setting.Errorf("Corrupt", c.Corrupt, "0 for dp-sgd: the corruption is laid out over steps of a fixed size, which Poisson steps are not")
	}
	return nil
}

// checkDelta refuses a δ that is not below 1/n, n the records: at δ ≥ 1/n
// a mechanism that publishes one random record is (0, δ)-private.
func (c *Config) checkDelta(n int) error {
	if err := privacy.CheckDelta(c.Delta, n, fmt.Sprintf("records of block size + 1 = %d tokens", c.BlockSize+1)); err != nil {
		return err
	}
	return nil
}

// jsonRename maps the keys of estimator.Spec to the configuration's own.
var jsonRename = map[string]string{"estimator": "ps_estimator"}

// MarshalJSON writes c with the keys gpt configurations have always had:
// "ps_estimator" for the per-sample estimator, and no "alpha" or "beta"
// when they are unset.
func (c Config) MarshalJSON() ([]byte, error) {
	type plain Config
	b, err := json.Marshal(plain(c))
	if err != nil {
		return nil, err
	}
	return jsonkeys.Rewrite(b, jsonRename, "alpha", "beta")
}

// UnmarshalJSON reads what MarshalJSON writes.
func (c *Config) UnmarshalJSON(b []byte) error {
	b, err := jsonkeys.Rewrite(b, jsonkeys.Invert(jsonRename))
	if err != nil {
		return err
	}
	type plain Config
	return json.Unmarshal(b, (*plain)(c))
}

// psSpec is per-sample mode's Spec, with its default estimator.
func (c *Config) psSpec() estimator.Spec {
	s := c.Spec
	if s.Estimator == "" {
		s.Estimator = "ps-clip-sgd"
	}
	return s
}

// Adaptive reports whether per-sample mode clips to a threshold other than
// the constant Clip (ps-clip-sgd's or dp-sgd's): an increasing, estimated
// or automatic one.
func (c *Config) Adaptive() bool {
	e := c.psSpec().Estimator
	return c.ClipMode == ClipPerSample && !((e == "ps-clip-sgd" || e == "dp-sgd") && c.psSpec().Reads("Clip"))
}

// Reads reports whether the clip mode reads field: ClipConvention (micro-batch
// mode) or a field of estimator.Spec (Clip in every mode but none; the
// others, per-sample mode's, as its estimator reads them).
func (c *Config) Reads(field string) bool {
	switch {
	case field == "ClipConvention":
		return c.ClipMode == ClipMicroBatch
	case c.ClipMode == ClipPerSample:
		return c.psSpec().Reads(field)
	case field == "Clip":
		return c.ClipMode != ClipNone
	}
	return false
}

// Trim returns c with the settings its clip mode does not read unset: the
// defaults of other modes.
func (c Config) Trim() Config {
	c.Spec = c.Spec.Only(c.Reads)
	if !c.Reads("Estimator") {
		c.Estimator = ""
	}
	if !c.Reads("ClipConvention") {
		c.ClipConvention = ""
	}
	return c
}

// Unread returns the JSON keys of the settings the clip mode does not
// read: a resumed run may differ in them, since they cannot change it.
func (c *Config) Unread() []string {
	var keys []string
	if !c.Reads("ClipConvention") {
		keys = append(keys, "clip_convention")
	}
	if c.ClipMode == ClipPerSample {
		return append(keys, estimator.Keys(c.psSpec().Unread())...)
	}
	keys = append(keys, "ps_estimator")
	for _, k := range estimator.Keys((estimator.Spec{Estimator: "sgd"}).Unread()) {
		if k != "clip" || c.ClipMode == ClipNone {
			keys = append(keys, k)
		}
	}
	return keys
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
	case c.ClipMode == ClipMicroBatch && c.ClipConvention != ConventionMean:
		return float64(c.Accum) * c.Clip
	}
	return c.Clip
}

// estimator returns the estimator and scope of the configuration's clipping.
func (c *Config) estimator() (estimator.Estimator, train.Scope, error) {
	switch {
	case c.DPSGD():
		// E[B] = q·N: a Poisson sample's expected size (privacy.NewPoisson
		// refuses an expected batch above N).
		e, err := c.psSpec().NewPrivate(float64(c.ExpectedBatch()))
		return e, train.Global, err
	case c.ClipMode == ClipPerSample:
		e, err := c.psSpec().New()
		return e, train.Global, err
	}
	e, scope, err := c.ClipMode.Estimator(c.Clip)
	if scope == train.MicroBatch && c.ClipConvention == ConventionMean {
		scope = train.MicroBatchMean
	}
	return e, scope, err
}

// validateClip checks the clip mode and its settings: a known mode and
// convention, no setting the mode does not read, per-sample mode's Spec,
// and the threshold in float32 (K·Clip under the nanogpt convention).
func (c *Config) validateClip() error {
	if _, err := ParseClipMode(string(c.ClipMode)); err != nil {
		return err
	}
	if _, err := ParseClipConvention(string(c.ClipConvention)); err != nil {
		return err
	}
	if c.ClipConvention != "" && !c.Reads("ClipConvention") {
		return setting.Unread("ClipConvention", c.ClipConvention, fmt.Sprintf("read only by clip mode micro-batch, not %s", c.ClipMode))
	}
	if c.ClipMode == ClipPerSample && !slices.Contains(PSEstimators, c.psSpec().Estimator) {
		return setting.Errorf("Estimator", strconv.Quote(c.Estimator), "one of %s", strings.Join(PSEstimators, ", "))
	}
	for _, f := range estimator.Fields {
		if v, set := c.Value(f); set && !c.Reads(f) {
			return setting.Unread(f, v, fmt.Sprintf("not read by %s", c.Label()))
		}
	}
	switch c.ClipMode {
	case ClipPerSample:
		return c.psSpec().Validate()
	case ClipGlobal, ClipMicroBatch:
		if err := setting.Positive32("Clip", c.Clip); err != nil {
			return err
		}
		if !setting.Normal32(c.ClipThreshold()) {
			return setting.Errorf("Clip", c.Clip, "a threshold whose K·γ = %v (K = %d micro-batches) is a normal float32", c.ClipThreshold(), c.Accum)
		}
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
// the corpus (block size, vocabulary). Every setting is checked in the
// precision it is used in (the model trains in float32), and a setting the
// clip mode does not read must be unset. Its errors are *setting.Error
// values naming the field.
func (c *Config) Validate() error {
	pos := []struct {
		field string
		v     int
	}{
		{"NLayer", c.NLayer}, {"NHead", c.NHead}, {"NEmbd", c.NEmbd}, {"BlockSize", c.BlockSize},
		{"MicroBatch", c.MicroBatch}, {"Accum", c.Accum}, {"Steps", c.Steps},
		{"EvalInterval", c.EvalInterval}, {"EvalIters", c.EvalIters}, {"LogInterval", c.LogInterval},
	}
	for _, p := range pos {
		if err := setting.Positive(p.field, p.v); err != nil {
			return err
		}
	}
	nonNeg := []struct {
		field string
		v     int
	}{{"VocabSize", c.VocabSize}, {"Warmup", c.Warmup}, {"CkptInterval", c.CkptInterval}, {"MaxBadSteps", c.MaxBadSteps}}
	for _, p := range nonNeg {
		if err := setting.NonNegative(p.field, p.v); err != nil {
			return err
		}
	}
	switch {
	case c.NEmbd%c.NHead != 0:
		return setting.Errorf("NHead", c.NHead, "a divisor of the embedding width %d", c.NEmbd)
	case c.VocabSize > text.MaxVocab:
		return setting.Errorf("VocabSize", c.VocabSize, "at most the %d tokens of uint16 token files", text.MaxVocab)
	case c.Warmup > c.Steps:
		return setting.Errorf("Warmup", c.Warmup, "at most the %d steps", c.Steps)
	case c.DecaySteps != 0 && c.DecaySteps < c.Warmup:
		return setting.Errorf("DecaySteps", c.DecaySteps, "0 (the last step) or at least the %d warm-up steps", c.Warmup)
	}
	if err := setting.First(
		setting.Fraction("Dropout", c.Dropout),
		setting.Positive32("LR", c.LR),
		setting.NonNegative32("MinLR", c.MinLR),
		setting.NonNegative32("WeightDecay", c.WeightDecay),
		setting.Fraction("Beta1", c.Beta1),
		setting.Fraction("Beta2", c.Beta2),
		setting.Positive32("Eps", c.Eps),
	); err != nil {
		return err
	}
	if c.MinLR > c.LR {
		return setting.Errorf("MinLR", c.MinLR, "at most the peak learning rate %v", c.LR)
	}
	if err := c.Corruption.Validate(); err != nil {
		return err
	}
	if c.Corrupt > 0 {
		if _, err := setting.Share("Corrupt", c.Corrupt, c.MicroBatch*c.Accum, "sequences of a step"); err != nil {
			return err
		}
	}
	if err := c.validateClip(); err != nil {
		return err
	}
	if err := c.validateTuning(); err != nil {
		return err
	}
	return c.validatePrivacy()
}

// lora is the model's LoRA adaptation.
func (c *Config) lora() models.LoRAConfig {
	return models.LoRAConfig{Rank: c.LoRARank, Alpha: c.LoRAAlpha, Targets: c.LoRATargets}
}

// validateTuning checks the LoRA settings, read only with LoRARank > 0
// and Init, and the Freeze patterns.
func (c *Config) validateTuning() error {
	switch {
	case c.LoRARank < 0:
		return setting.Errorf("LoRARank", c.LoRARank, "a LoRA rank ≥ 0 (0: no LoRA)")
	case c.LoRARank == 0 && c.LoRAAlpha != 0:
		return setting.Unread("LoRAAlpha", c.LoRAAlpha, "LoRA's α is read only with a LoRA rank")
	case c.LoRARank == 0 && len(c.LoRATargets) > 0:
		return setting.Unread("LoRATargets", strings.Join(c.LoRATargets, ","), "LoRA's targets are read only with a LoRA rank")
	case c.LoRARank > 0 && c.Init == "":
		return setting.Errorf("LoRARank", c.LoRARank, "0 without Init: LoRA adapts pretrained weights")
	}
	if c.LoRARank > 0 {
		if err := c.lora().Validate(c.NEmbd); err != nil {
			var se *setting.Error
			if errors.As(err, &se) {
				se.Field = "LoRA" + se.Field // LoRARank, LoRAAlpha, LoRATargets
			}
			return err
		}
	}
	for _, p := range c.Freeze {
		if _, err := path.Match(p, ""); err != nil {
			return setting.Errorf("Freeze", strconv.Quote(p), "a pattern of parameter names (%v)", err)
		}
	}
	return nil
}

// Label is the run's method in tables and figures: the paper's name of the
// clip mode ("Clip-SGD (global)", "MB-Clip-SGD (micro-batch)",
// "PS-Clip-SGD (per-sample)", "no clipping"), or for an adaptive
// per-sample threshold its estimator's label with "(per-sample)".
func (c *Config) Label() string {
	switch c.ClipMode {
	case ClipGlobal:
		return "Clip-SGD (global)"
	case ClipMicroBatch:
		return "MB-Clip-SGD (micro-batch)"
	case ClipPerSample:
		if c.Adaptive() || c.DPSGD() {
			return c.psSpec().Label() + " (per-sample)"
		}
		return "PS-Clip-SGD (per-sample)"
	}
	return "no clipping"
}
