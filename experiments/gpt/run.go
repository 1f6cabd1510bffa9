package gpt

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"time"

	"github.com/psclip/psclip/data/text"
	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/internal/loop"
	"github.com/psclip/psclip/internal/normlog"
	"github.com/psclip/psclip/models"
	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/optim"
	"github.com/psclip/psclip/setting"
	"github.com/psclip/psclip/tensor"
	"github.com/psclip/psclip/train"
)

// RunOptions say where a run writes and how it reports.
type RunOptions struct {
	// Out is the output directory (it must exist): log.jsonl and the
	// checkpoint. Empty: no files, no checkpoints, no resume.
	Out string
	// Resume continues the run from Out's checkpoint, exactly: the weights,
	// optimizer state, schedule position and data order are restored, so the
	// result is bit-identical to an uninterrupted run.
	Resume bool
	// Progress, if set, receives a progress line about once a second.
	Progress io.Writer
	// Label prefixes the progress lines.
	Label string
	// LogNorms adds the step's per-sample gradient norms to every logged
	// step record as "sample_norms", the form "psclip tail --from" reads. It
	// needs --clip-mode per-sample.
	LogNorms bool

	// afterStep, if set, is called after every step (tests: interrupt a run
	// at a chosen step).
	afterStep func(done int)
}

// Summary is what a finished run reports.
type Summary struct {
	Steps        int         `json:"steps"`
	FinalValLoss Float       `json:"final_val_loss"`
	Curve        []EvalPoint `json:"curve"`
	// Seconds is the run's wall time, evaluations included, summed over
	// resumed sessions.
	Seconds float64 `json:"train_time_s"`
	// ClipThreshold is the threshold mean gradients were clipped to
	// (Config.ClipThreshold); null without clipping.
	ClipThreshold Float `json:"clip_threshold"`
	// Clipped of Clippable gradients were clipped: steps (global),
	// micro-batches (micro-batch) or sequences (per-sample).
	Clipped         int64   `json:"clipped"`
	Clippable       int64   `json:"clippable"`
	ClippedFraction float64 `json:"clipped_fraction"`
	// SkippedSteps made no update because every gradient was non-finite.
	SkippedSteps int `json:"skipped_steps"`
}

// Run is one training run, set up and ready to train.
type Run struct {
	cfg    Config
	corpus *text.Corpus
	opts   RunOptions

	model   *models.GPT
	opt     *optim.AdamW
	sched   optim.WarmupCosine
	trainer *train.Trainer
	est     estimator.Estimator // the configured one, whose state a checkpoint keeps
	norms   *normlog.Recorder   // with LogNorms: what train sees as its estimator
	train   *text.Sampler       // the training data order
	eval    *text.Sampler       // the same validation batches at every evaluation
	dropout *rand.PCG           // dropout masks

	batches []train.Batch
	x, y    []int32 // sampler output for one micro-batch
	log     *logWriter

	// progress, saved in checkpoints
	st state
	// start is when this session began; elapsed time is st.Seconds plus
	// the time since start.
	start time.Time
	last  StepRecord // the latest step, for progress lines
}

// state is the run's progress apart from tensors: what a checkpoint's
// metadata holds to resume exactly.
type state struct {
	Step         int     `json:"step"`
	Seconds      float64 `json:"seconds"`
	Clipped      int64   `json:"clipped"`
	Clippable    int64   `json:"clippable"`
	SkippedSteps int     `json:"skipped_steps"`
	// Estimator is an adaptive estimator's state (its MarshalBinary), in
	// checkpoints only.
	Estimator []byte `json:"estimator,omitempty"`
}

// dropoutStream is the PCG stream of the dropout masks. They, the data
// order and the initialisation are all seeded with Config.Seed; data/text
// and models pick the other two streams.
const dropoutStream = 0xd209_0000_0000_0002

// New sets up a run of cfg on corpus: it checks the configuration against
// the corpus, builds and initialises the model and, with opts.Resume,
// restores the checkpoint in opts.Out. Its errors are all about the
// configuration, the corpus or the checkpoint, before any training.
func New(cfg Config, corpus *text.Corpus, opts RunOptions) (*Run, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := cfg.CheckCorpus(corpus); err != nil {
		return nil, err
	}
	cfg.VocabSize, _ = modelVocab(cfg, corpus)
	s := &Run{cfg: cfg, corpus: corpus, opts: opts}
	var err error
	if s.model, err = models.NewGPT(cfg.model(), cfg.Seed); err != nil {
		return nil, err
	}
	s.opt, err = optim.NewAdamW(optim.DecayGroups(s.model.Params(), cfg.WeightDecay),
		optim.AdamWConfig{LR: cfg.LR, Beta1: optim.Exactly(cfg.Beta1), Beta2: optim.Exactly(cfg.Beta2), Eps: optim.Exactly(cfg.Eps)})
	if err != nil {
		return nil, err
	}
	s.sched = optim.WarmupCosine{Peak: cfg.LR, Min: cfg.MinLR, Warmup: cfg.Warmup, Decay: cfg.Steps}
	est, scope, err := cfg.estimator()
	if err != nil {
		return nil, err
	}
	s.est = est
	if opts.LogNorms {
		if cfg.ClipMode != ClipPerSample {
			return nil, setting.Errorf("LogNorms", true, "false: clip mode %s computes no per-sample norms (only per-sample does)", cfg.ClipMode)
		}
		s.norms = &normlog.Recorder{Estimator: est}
		est = s.norms
	}
	s.dropout = rand.NewPCG(cfg.Seed, dropoutStream)
	s.trainer, err = train.New(train.Config{
		Model: s.model, Loss: nn.CrossEntropy, Estimator: est, Optimizer: s.opt, Scope: scope,
		Rand: rand.New(s.dropout),
	})
	if err != nil {
		return nil, err
	}
	if s.train, err = text.NewSampler(corpus.Train, cfg.MicroBatch, cfg.BlockSize, cfg.Seed); err != nil {
		return nil, err
	}
	if s.eval, err = text.NewSampler(corpus.Val, cfg.MicroBatch, cfg.BlockSize, text.EvalSeed); err != nil {
		return nil, err
	}
	n := cfg.MicroBatch * cfg.BlockSize
	s.x, s.y = make([]int32, n), make([]int32, n)
	s.batches = make([]train.Batch, cfg.Accum)
	for i := range s.batches {
		s.batches[i] = train.Batch{X: tensor.New(cfg.MicroBatch, cfg.BlockSize), Y: make([]int32, n)}
	}
	if opts.Resume {
		if err := s.restore(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// CheckCorpus reports whether the configuration fits the corpus: a block
// size both splits can hold and a vocabulary that covers the corpus's.
func (c *Config) CheckCorpus(corpus *text.Corpus) error {
	if _, err := modelVocab(*c, corpus); err != nil {
		return err
	}
	if err := corpus.CheckBlock(c.BlockSize); err != nil {
		return setting.Errorf("BlockSize", c.BlockSize, "a block size the corpus holds (%v)", err)
	}
	return nil
}

// modelVocab returns the model's vocabulary size: Config.VocabSize, or when
// that is 0 the corpus's, or for token files (which carry no vocabulary)
// DefaultBinVocab.
func modelVocab(cfg Config, corpus *text.Corpus) (int, error) {
	if corpus.Vocab == nil {
		if cfg.VocabSize == 0 {
			return DefaultBinVocab, nil
		}
		return cfg.VocabSize, nil
	}
	n := corpus.Vocab.Size()
	switch {
	case cfg.VocabSize == 0:
		return n, nil
	case cfg.VocabSize < n:
		return 0, setting.Errorf("VocabSize", cfg.VocabSize, "0 or at least the corpus vocabulary of %d", n)
	}
	return cfg.VocabSize, nil
}

// clipped is how many gradients the mode clipped in a step, out of
// clippable().
func (c *Config) clipped(st train.Stats) int {
	switch c.ClipMode {
	case ClipGlobal, ClipMicroBatch:
		return st.ClippedBatches
	case ClipPerSample:
		return st.Clipped
	}
	return 0
}

// clippable is how many gradients one step offers the mode to clip.
func (c *Config) clippable() int {
	switch c.ClipMode {
	case ClipGlobal:
		return 1
	case ClipMicroBatch:
		return c.Accum
	case ClipPerSample:
		return c.Accum * c.MicroBatch
	}
	return 0
}

// Train runs the remaining steps and returns the summary; it writes the
// final checkpoint if opts.Out is set. When ctx is cancelled (Ctrl-C) it
// writes a checkpoint and returns an error wrapping loop.ErrInterrupted.
// A Run trains once.
func (s *Run) Train(ctx context.Context) (*Summary, error) {
	var curve []EvalPoint
	s.start = time.Now()
	if s.opts.Out != "" {
		var err error
		if s.log, curve, err = openLog(s.opts.Out, s.st.Step, s.opts.Resume); err != nil {
			return nil, err
		}
		defer s.log.Close()
		if !s.opts.Resume {
			if err := s.log.write(s.runRecord()); err != nil {
				return nil, err
			}
		}
	}
	if s.st.Step == 0 {
		p, err := s.evaluate(0)
		if err != nil {
			return nil, err
		}
		curve = append(curve, p)
	}
	l := loop.Loop{
		Total: s.cfg.Steps,
		Step: func(_ context.Context, i int) (bool, error) {
			return s.step(i)
		},
		After: func(done int) error {
			s.st.Step = done
			if s.opts.afterStep != nil {
				s.opts.afterStep(done)
			}
			if done%s.cfg.EvalInterval == 0 || done == s.cfg.Steps {
				p, err := s.evaluate(done)
				if err != nil {
					return err
				}
				curve = append(curve, p)
			}
			if s.cfg.CkptInterval > 0 && done%s.cfg.CkptInterval == 0 && done < s.cfg.Steps {
				return s.save()
			}
			return nil
		},
		Save: func(done int) error {
			s.st.Step = done
			return s.save()
		},
		MaxBadSteps:  s.cfg.MaxBadSteps,
		Progress:     s.opts.Progress,
		Label:        s.opts.Label,
		ItemsPerStep: s.cfg.TokensPerStep(),
		ItemUnit:     "tok",
		Describe: func(int) string {
			return fmt.Sprintf("loss %.4f  lr %.3g", float64(s.last.Loss), float64(s.last.LR))
		},
	}
	if err := l.Run(ctx, s.st.Step); err != nil {
		return nil, err
	}
	if err := s.save(); err != nil {
		return nil, err
	}
	sum := &Summary{
		Steps: s.cfg.Steps, Curve: curve, Seconds: s.elapsed(), ClipThreshold: s.runRecord().ClipThreshold,
		Clipped: s.st.Clipped, Clippable: s.st.Clippable, SkippedSteps: s.st.SkippedSteps,
	}
	if len(curve) > 0 {
		sum.FinalValLoss = curve[len(curve)-1].ValLoss
	}
	if s.st.Clippable > 0 {
		sum.ClippedFraction = float64(s.st.Clipped) / float64(s.st.Clippable)
	}
	return sum, nil
}

// runRecord is the log record that opens a run.
func (s *Run) runRecord() RunRecord {
	t := Float(s.cfg.ClipThreshold())
	if t == 0 {
		t = Float(math.NaN())
	}
	return RunRecord{Config: s.cfg, ClipThreshold: t}
}

func (s *Run) elapsed() float64 { return s.st.Seconds + time.Since(s.start).Seconds() }

// step performs optimizer step i (0-based) on the next Accum micro-batches.
func (s *Run) step(i int) (bad bool, err error) {
	lr := s.sched.LR(i)
	s.opt.SetLR(lr)
	for _, b := range s.batches {
		s.train.Next(s.x, b.Y)
		setTokens(b.X, s.x)
	}
	t0 := time.Now()
	st, err := s.trainer.Step(s.batches...)
	if err != nil {
		return false, err
	}
	dt := time.Since(t0).Seconds()
	s.st.Clipped += int64(s.cfg.clipped(st))
	s.st.Clippable += int64(s.cfg.clippable())
	if st.Skipped {
		s.st.SkippedSteps++
	}
	s.last = StepRecord{
		Step: i + 1, LR: Float(lr), Loss: Float(st.Loss), GradNorm: Float(st.GradNorm),
		ClippedBatches: st.ClippedBatches, ClippedSamples: st.Clipped, DroppedSamples: st.Dropped,
		SkippedBatches: st.SkippedBatches, Skipped: st.Skipped,
		TokensPerSec: float64(s.cfg.TokensPerStep()) / dt, Elapsed: s.elapsed(),
		PHat: Float(math.NaN()), SigmaHat: Float(math.NaN()), Gamma: Float(math.NaN()),
	}
	switch est := s.est.(type) {
	case *estimator.PSAuto:
		if te, ok := est.Estimate(); ok {
			s.last.PHat, s.last.SigmaHat = Float(te.P), Float(te.Sigma)
		}
	case *estimator.Quantile:
		s.last.Gamma = Float(est.Gamma())
	}
	if s.norms != nil {
		s.last.SampleNorms = s.norms.Take()
	}
	if s.log != nil && ((i+1)%s.cfg.LogInterval == 0 || i+1 == s.cfg.Steps) {
		if err := s.log.write(s.last); err != nil {
			return false, err
		}
	}
	return st.Skipped, nil
}

// evaluate estimates the validation loss after done steps on EvalIters
// batches, the same ones every time, and logs it.
func (s *Run) evaluate(done int) (EvalPoint, error) {
	loss, err := s.valLoss()
	if err != nil {
		return EvalPoint{}, err
	}
	p := EvalPoint{Step: done, ValLoss: Float(loss)}
	if s.log != nil {
		if err := s.log.write(EvalRecord{Step: done, ValLoss: p.ValLoss, Elapsed: s.elapsed()}); err != nil {
			return EvalPoint{}, err
		}
	}
	return p, nil
}

// valLoss is the mean loss over EvalIters validation batches.
func (s *Run) valLoss() (float64, error) {
	s.eval.Reset()
	return meanLoss(s.model, s.eval, s.cfg.EvalIters)
}

// setTokens writes token ids into a model input. They need no check: the
// corpus's tokens are below its vocabulary size (data/text checks token
// files), and CheckCorpus made the model's vocabulary at least that large.
func setTokens(x *tensor.Tensor, ids []int32) {
	for j, t := range ids {
		x.Data[j] = float32(t)
	}
}
