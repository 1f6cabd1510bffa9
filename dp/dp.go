// Package dp trains a model of one's own on data of one's own with
// differential privacy (DP-SGD), to a target ε: Opacus'
// make_private_with_epsilon in Go.
//
// A Trainer owns everything the guarantee rests on: the secret Poisson
// sampler over the Dataset (each record joins each step independently
// with probability q = ExpectedBatch/N, from a key drawn from crypto/rand
// and never written), the noise (the same key's stream), the division by
// the expected batch, the cutting of each step's sample into micro-batches
// of at most MicroBatch records (memory), and the accountant's History,
// from which Epsilon reports what the steps so far have spent. Each Step
// is one whole Poisson sample: there is no way to step on part of one.
// Clipping is at a constant norm Clip, or adaptive: Andrew et al. 2021's
// private quantile (TargetQuantile, estimator.DPQuantile), whose count
// noise is accounted in the same σ.
//
// A fixed Seed makes the samples and the noise reproducible (tests,
// reproductions); whoever knows it knows them, so such a run is not
// private (Private is false).
//
// The Trainer's train.Trainer (Train) holds its state: checkpoint.SaveTrainer
// and Loaded.RestoreTrainer save and restore the weights, the optimizer,
// the sampler's position and the accountant's history with the rest, so a
// resumed run continues its accounting (with fresh secrets).
package dp

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/psclip/psclip/data/dataset"
	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/internal/isnil"
	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/privacy"
	"github.com/psclip/psclip/setting"
	"github.com/psclip/psclip/train"
)

// Config configures a Trainer. Model, one of Loss and FloatLoss,
// Optimizer, Data, ExpectedBatch, Clip, Delta and one of NoiseMultiplier
// and TargetEpsilon (with Steps) are required.
type Config struct {
	Model     nn.Layer
	Loss      train.Loss
	FloatLoss train.FloatLoss
	Optimizer train.Optimizer
	Data      dataset.Dataset

	// ExpectedBatch is the expected number of records a step, q·N (at
	// most N); the realised sample varies around it.
	ExpectedBatch int
	// MicroBatch bounds the records computed at once (memory); 0 computes
	// each sample in one piece.
	MicroBatch int
	// Clip is the clipping norm C, or with TargetQuantile the initial one.
	Clip float64

	// NoiseMultiplier is σ. With TargetEpsilon instead, σ is the
	// smallest (to Opacus' tolerance) at which Steps steps spend at most
	// TargetEpsilon at Delta (privacy.NoiseMultiplier).
	NoiseMultiplier float64
	TargetEpsilon   float64
	// Steps, if set, is the number of steps the run may take: Step
	// refuses more (ErrBudget). TargetEpsilon needs it.
	Steps int
	// Delta is the δ at which Epsilon reports ε.
	Delta float64
	// Accountant selects the accountant (zero value: RDP).
	Accountant privacy.Options

	// TargetQuantile, if set, makes the clipping norm follow that
	// quantile of the per-sample norms privately (Andrew et al. 2021,
	// estimator.DPQuantile) at rate QuantileRate (0: 0.2), the unclipped
	// count noised with CountNoise σ_b (0: ExpectedBatch/20).
	TargetQuantile float64
	QuantileRate   float64
	CountNoise     float64

	// Seed 0 draws the sample and noise key from crypto/rand (private);
	// another seed makes them reproducible, and the run not private.
	Seed uint64
	// PerSampleMemory and SampleStats are train.Config's.
	PerSampleMemory int64
	SampleStats     bool
}

// ErrBudget is Step's error once Config.Steps steps are taken.
var ErrBudget = errors.New("dp: the run has taken its Config.Steps steps: more would spend more than its ε")

// Trainer is a DP-SGD training run. It is not safe for concurrent use.
type Trainer struct {
	cfg     Config
	sigma   float64
	sampler *dataset.Poisson
	tr      *train.Trainer
	history privacy.History
}

// New validates cfg and returns a Trainer. Settings out of range are
// *setting.Error values naming the field.
func New(cfg Config) (*Trainer, error) {
	if isnil.IsNil(cfg.Data) {
		return nil, errors.New("dp: no data")
	}
	n := cfg.Data.Len()
	if err := setting.First(
		rangeInt("ExpectedBatch", cfg.ExpectedBatch, 1, n),
		setting.NonNegative("MicroBatch", cfg.MicroBatch),
		setting.NonNegative("Steps", cfg.Steps),
		setting.Positive32("Clip", cfg.Clip),
	); err != nil {
		return nil, err
	}
	if err := privacy.CheckDelta(cfg.Delta, n, "records"); err != nil {
		return nil, err
	}
	sampler, err := dataset.NewPoisson(n, cfg.ExpectedBatch, cfg.Seed)
	if err != nil {
		return nil, err
	}
	q := sampler.SampleRate()
	sigma := cfg.NoiseMultiplier
	switch {
	case (sigma == 0) == (cfg.TargetEpsilon == 0):
		return nil, setting.Errorf("NoiseMultiplier", sigma, "a noise multiplier, or a TargetEpsilon instead (exactly one)")
	case cfg.TargetEpsilon != 0 && cfg.Steps == 0:
		return nil, setting.Errorf("Steps", 0, "the number of steps the TargetEpsilon is for")
	case cfg.TargetEpsilon != 0:
		if sigma, err = privacy.NoiseMultiplier(q, cfg.Steps, cfg.TargetEpsilon, cfg.Delta, cfg.Accountant); err != nil {
			return nil, err
		}
	}
	// The whole run must be accountable: σ and the steps in range.
	if _, err := privacy.Epsilon(privacy.History{{SampleRate: q, NoiseMultiplier: sigma, Count: max(cfg.Steps, 1)}}, cfg.Delta, cfg.Accountant); err != nil {
		return nil, err
	}
	est, err := cfg.estimator(sigma)
	if err != nil {
		return nil, err
	}
	t := &Trainer{cfg: cfg, sigma: sigma, sampler: sampler}
	t.tr, err = train.New(train.Config{
		Model: cfg.Model, Loss: cfg.Loss, FloatLoss: cfg.FloatLoss, Estimator: est, Optimizer: cfg.Optimizer,
		ExpectedBatch: float64(cfg.ExpectedBatch), PerSampleMemory: cfg.PerSampleMemory, SampleStats: cfg.SampleStats,
		Progress: (*progress)(t),
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// estimator is the DP-SGD estimator of cfg at noise multiplier sigma:
// estimator.Spec's, whose field names Config shares (Seed aside).
func (cfg *Config) estimator(sigma float64) (estimator.Noisy, error) {
	e, err := estimator.Spec{
		Estimator: "dp-sgd", Clip: cfg.Clip, NoiseMultiplier: sigma, NoiseSeed: cfg.Seed,
		TargetQuantile: cfg.TargetQuantile, QuantileRate: cfg.QuantileRate, CountNoise: cfg.CountNoise,
	}.NewPrivate(float64(cfg.ExpectedBatch))
	var se *setting.Error
	if errors.As(err, &se) && se.Field == "NoiseSeed" {
		se.Field = "Seed"
	}
	return e, err
}

// rangeInt checks lo ≤ v ≤ hi.
func rangeInt(field string, v, lo, hi int) error {
	if v < lo || v > hi {
		return setting.Errorf(field, v, "%d to %d", lo, hi)
	}
	return nil
}

// Step draws the next Poisson sample and takes one DP-SGD step on it
// (an empty sample: the noise alone), and records the step for the
// accountant. Past Config.Steps it returns ErrBudget and does nothing.
func (t *Trainer) Step() (train.Stats, error) {
	if t.cfg.Steps > 0 && t.history.Steps() >= t.cfg.Steps {
		return train.Stats{}, ErrBudget
	}
	var sample train.Batch
	if idx := t.sampler.Next(); len(idx) > 0 {
		var err error
		if sample, err = t.cfg.Data.Batch(idx); err != nil {
			return train.Stats{}, fmt.Errorf("dp: %w", err)
		}
	}
	st, err := t.tr.PrivateStep(sample, t.cfg.MicroBatch)
	if err != nil {
		return st, err
	}
	t.history.Add(t.sampler.SampleRate(), t.sigma, 1)
	return st, nil
}

// Epsilon is the ε spent so far at Config.Delta, by Config.Accountant.
func (t *Trainer) Epsilon() (float64, error) {
	r, err := privacy.Epsilon(t.history, t.cfg.Delta, t.cfg.Accountant)
	return r.Epsilon, err
}

// NoiseMultiplier is σ: the one given, or the one TargetEpsilon gave.
func (t *Trainer) NoiseMultiplier() float64 { return t.sigma }

// SampleRate is q = ExpectedBatch/N.
func (t *Trainer) SampleRate() float64 { return t.sampler.SampleRate() }

// History is the accountant's record of the steps taken (a copy).
func (t *Trainer) History() privacy.History { return append(privacy.History(nil), t.history...) }

// Private reports whether samples and noise are secret (Config.Seed 0).
func (t *Trainer) Private() bool { return t.sampler.Private() }

// Train is the train.Trainer that takes the steps: for Evaluate, and for
// checkpoint.SaveTrainer and Loaded.RestoreTrainer, which save and
// restore the Trainer whole. Its Step refuses (train.ErrPrivateStep).
func (t *Trainer) Train() *train.Trainer { return t.tr }

// progress is the Trainer's state in train.State.Progress: the sampler's
// position and the accountant's history.
type progress Trainer

// progressState is progress's JSON.
type progressState struct {
	Sampler []byte          `json:"sampler"`
	History privacy.History `json:"history"`
}

func (p *progress) MarshalBinary() ([]byte, error) {
	s, err := p.sampler.MarshalBinary()
	if err != nil {
		return nil, err
	}
	return json.Marshal(progressState{Sampler: s, History: p.history})
}

func (p *progress) UnmarshalBinary(b []byte) error {
	var s progressState
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("dp: the state: %w", err)
	}
	if err := p.sampler.UnmarshalBinary(s.Sampler); err != nil {
		return err
	}
	p.history = s.History
	return nil
}
