package gpt

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/psclip/psclip/data/text"
	"github.com/psclip/psclip/models"
	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/optim"
	"github.com/psclip/psclip/privacy"
	"github.com/psclip/psclip/run"
	"github.com/psclip/psclip/setting"
	"github.com/psclip/psclip/tensor"
	"github.com/psclip/psclip/train"
)

// Kind names this trainer in checkpoints (run.Spec.Kind).
const Kind = "gpt"

// RunOptions say where a run writes and how it reports; the run directory
// holds log.jsonl (a RunRecord, then StepRecord and EvalRecord lines; with
// LogNorms, which needs ClipPerSample, the step records carry the
// per-sample gradient norms), the checkpoint and, at the end, result.json
// (Summary).
type RunOptions = run.Options

// Summary is what a finished run reports (result.json).
type Summary struct {
	Config       Config `json:"config"`
	Steps        int    `json:"steps"`
	FinalValLoss Float  `json:"final_val_loss"`
	// FinalTestLoss is the final model's loss on the corpus's held-out test
	// split (DataSpec.TestFraction), on EvalIters batches drawn as the
	// validation batches are (text.EvalSeed); absent without one. A dp-sgd
	// run writes it only with ReleaseUnprotected: the test split is part of
	// the private text, which run.Released does not declare public.
	FinalTestLoss *Float      `json:"final_test_loss,omitempty"`
	Curve         []EvalPoint `json:"curve"`
	run.Summary
	// ClipThreshold is the threshold mean gradients were clipped to
	// (Config.ClipThreshold); null without clipping.
	ClipThreshold Float `json:"clip_threshold"`
	// Clipped of Clippable gradients were clipped: steps (global),
	// micro-batches (micro-batch) or sequences (per-sample).
	Clipped         int64   `json:"clipped"`
	Clippable       int64   `json:"clippable"`
	ClippedFraction float64 `json:"clipped_fraction"`
	// ClipWindows are the same counts over each ClipWindowSteps steps, in
	// order; absent without clipping.
	ClipWindows []ClipWindow `json:"clip_windows,omitempty"`
	// CorruptPerStep is the number of corrupted sequences in every step
	// (Config.CorruptPerStep), and Detection clipping as a detector of them
	// over the run (with corrupted data, in micro-batch and per-sample
	// mode, in one process: a rank of a data-parallel run sees only its
	// share's decisions); both absent for clean data.
	CorruptPerStep int        `json:"corrupt_per_step,omitempty"`
	Detection      *Detection `json:"detection,omitempty"`
	// Epsilon is dp-sgd's ε at Delta for the whole run (RDP accountant,
	// Balle et al.'s conversion), for one record of Records, each joining
	// a step with probability SampleRate; all absent for the other
	// estimators.
	Epsilon    *Float  `json:"epsilon,omitempty"`
	Delta      float64 `json:"delta,omitempty"`
	Records    int     `json:"records,omitempty"`
	SampleRate float64 `json:"sample_rate,omitempty"`
}

// Run is one training run, set up and ready to train.
type Run struct {
	cfg    Config
	corpus *text.Corpus

	model   *models.GPT
	opt     *optim.AdamW
	sched   optim.WarmupCosine
	trainer *train.Trainer
	train   *text.Sampler // the training data order (random windows)
	records *text.Records // the training records (Poisson sampling)
	// sampleRate is dp-sgd's q, what every step adds to the privacy
	// history; 0 without dp-sgd.
	sampleRate float64
	eval       *text.Sampler // the same validation batches at every evaluation
	dropout    *rand.PCG     // dropout masks
	corrupt    *corrupter    // the corruption; nil for clean data
	clips      *clipRecorder // the clip decisions, for Detection; nil without

	batches []train.Batch // the step's micro-batches (random windows)
	x, y    []int32       // sampler output for one micro-batch

	h     *run.Run // the run layer: directory, log, checkpoints, loop
	st    state    // progress, saved in checkpoints
	curve []EvalPoint
	last  StepRecord // the latest step, for progress lines
}

// state is the trainer's progress apart from tensors and random streams,
// which the run layer saves with every checkpoint.
type state struct {
	Clipped   int64 `json:"clipped"`
	Clippable int64 `json:"clippable"`
	// ClipWindows are Clipped and Clippable by ClipWindowSteps steps
	// (clipping modes only).
	ClipWindows []ClipWindow `json:"clip_windows,omitempty"`
	// Detection accumulates the steps' Detection (corrupted data and a clip
	// mode that clips sequences or micro-batches).
	Detection *Detection `json:"detection,omitempty"`
	// Privacy is dp-sgd's history of steps, which ε is accounted from.
	Privacy privacy.History `json:"privacy,omitempty"`
}

// dropoutStream is the PCG stream of the dropout masks. They, the data
// order and the initialisation are all seeded with Config.Seed; data/text
// and models pick the other two streams.
const dropoutStream = 0xd209_0000_0000_0002

// mayDiffer lists the settings a resumed run may change: they affect what
// is reported and when, not the trajectory; and init, the directory of the
// initial weights, which may move: their content is part of the data
// identity.
var mayDiffer = []string{"eval_interval", "eval_iters", "log_interval", "ckpt_interval", "max_bad_steps", "init"}

// New sets up a run of cfg on corpus: it checks the configuration against
// the corpus and the machine's memory, builds and initialises the model and
// opens the run directory, restoring its checkpoint with opts.Resume. Its
// errors are all about the configuration, the corpus, the machine or the
// run directory, before any training. A Run that will not train must be
// closed.
func New(cfg Config, corpus *text.Corpus, opts RunOptions) (*Run, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := cfg.CheckCorpus(corpus); err != nil {
		return nil, err
	}
	cfg.VocabSize, _ = modelVocab(cfg, corpus)
	// Checked before anything is allocated against the lower bound of the
	// plain step's memory; the budget itself is of the measured step.
	if err := cfg.checkMemory(opts.PerSampleMemory.Bytes(cfg.model().TrainingBytes(cfg.MicroBatch, 2))); err != nil {
		return nil, err
	}
	s := &Run{cfg: cfg, corpus: corpus}
	var err error
	if s.model, err = models.NewGPT(cfg.model(), cfg.Seed); err != nil {
		return nil, err
	}
	data := cfg.identity(corpus)
	if cfg.Init != "" {
		if data.SHA256["init"], err = cfg.initialise(s.model); err != nil {
			return nil, err
		}
	}
	if err := cfg.tune(s.model); err != nil {
		return nil, err
	}
	s.opt, err = optim.NewAdamW(optim.DecayGroups(nn.Trainable(s.model.Params()), cfg.WeightDecay),
		optim.AdamWConfig{LR: cfg.LR, Beta1: optim.Exactly(cfg.Beta1), Beta2: optim.Exactly(cfg.Beta2), Eps: optim.Exactly(cfg.Eps)})
	if err != nil {
		return nil, err
	}
	s.sched = optim.WarmupCosine{Peak: cfg.LR, Min: cfg.MinLR, Warmup: cfg.Warmup, Decay: cmp.Or(cfg.DecaySteps, cfg.Steps)}
	if err := train.CheckRanks(cfg.Accum, opts.Comm); err != nil {
		return nil, setting.Errorf("Accum", cfg.Accum, "at least one micro-batch for each of the %d ranks", opts.Comm.Size())
	}
	est, scope, err := cfg.estimator()
	if err != nil {
		return nil, err
	}
	if s.eval, err = text.NewSampler(corpus.Val, cfg.MicroBatch, cfg.BlockSize, text.EvalSeed); err != nil {
		return nil, err
	}
	s.dropout = rand.NewPCG(cfg.Seed, dropoutStream)
	rngs := map[string]run.RNG{"dropout": s.dropout}
	priv := cfg.privacy()
	if cfg.sampling() == SamplingPoisson {
		if s.records, err = text.NewRecords(corpus.Train, cfg.BlockSize, cfg.ExpectedBatch(), priv.Secret); err != nil {
			return nil, err
		}
		if err := cfg.checkDelta(s.records.Len()); err != nil {
			return nil, err
		}
		s.sampleRate = s.records.SampleRate()
		rngs["records"] = s.records
	} else {
		if s.train, err = text.NewSampler(corpus.Train, cfg.MicroBatch, cfg.BlockSize, cfg.Seed); err != nil {
			return nil, err
		}
		rngs["sampler"] = s.train
	}
	if s.corrupt = newCorrupter(&cfg, corruptVocab(cfg, corpus)); s.corrupt != nil {
		rngs["corrupt"] = s.corrupt
	}
	spec := run.Spec{
		Kind: Kind, Config: cfg, MayDiffer: append(cfg.Unread(), mayDiffer...), Data: data, Steps: cfg.Steps,
		Params: s.model.Params(), Optimizer: s.opt, Estimator: est,
		RNGs: rngs, State: &s.st, Privacy: priv,
		MaxBadSteps: cfg.MaxBadSteps, ItemsPerStep: cfg.TokensPerStep(), ItemUnit: "tok",
	}
	if corpus.Vocab != nil {
		v, err := corpus.Vocab.MarshalText()
		if err != nil {
			return nil, err
		}
		spec.Extra = map[string]string{extraVocab: string(v)}
	} else if corpus.Tokenizer != "" {
		spec.Extra = map[string]string{extraTokenizer: corpus.Tokenizer}
	}
	if s.h, err = run.New(spec, opts); err != nil {
		return nil, err
	}
	est = s.h.Estimator()
	// Detection needs every sequence's or micro-batch's clip decision,
	// which only a run in one process sees (a rank clips its share).
	if s.corrupt != nil && (cfg.ClipMode == ClipPerSample || cfg.ClipMode == ClipMicroBatch) && s.h.Comm().Size() == 1 {
		s.clips = &clipRecorder{Estimator: est}
		est = s.clips
	}
	tc := train.Config{
		Model: s.model, Loss: nn.CrossEntropy, Estimator: est, Optimizer: s.opt, Scope: scope,
		Rand: rand.New(s.dropout), Comm: s.h.Comm(),
	}
	if cfg.DPSGD() {
		tc.ExpectedBatch = s.sampleRate * float64(s.records.Len()) // q·N, Opacus' divisor
		tc.SampleStats = true                                      // what the run writes of them is its own release's
	}
	n := cfg.MicroBatch * cfg.BlockSize
	if tc.PerSampleMemory, err = opts.PerSampleMemory.For(tc, train.Batch{X: tensor.New(cfg.MicroBatch, cfg.BlockSize), Y: make([]int32, n)}); err != nil {
		s.h.Close()
		return nil, err
	}
	if s.trainer, err = train.New(tc); err != nil {
		s.h.Close()
		return nil, err
	}
	if s.records != nil {
		return s, nil // poissonSample makes each step's sample
	}
	s.x, s.y = make([]int32, n), make([]int32, n)
	s.batches = make([]train.Batch, cfg.Accum)
	for i := range s.batches {
		s.batches[i] = train.Batch{X: tensor.New(cfg.MicroBatch, cfg.BlockSize), Y: make([]int32, n)}
	}
	return s, nil
}

// checkMemory refuses a run whose model, AdamW state, micro-batch
// activations, step inputs and perSample bytes of per-sample gradients
// (a budget; none when not positive) cannot fit in this machine's memory
// (run.CheckMemory), before anything is allocated.
func (c *Config) checkMemory(perSample int64) error {
	inputs := float64(c.Accum) * float64(c.MicroBatch) * float64(c.BlockSize) * 8 // token ids as float32 and targets as int32
	need := c.model().TrainingBytes(c.MicroBatch, 2) + inputs + float64(max(perSample, 0))
	return run.CheckMemory("the model, its optimizer state, a step's micro-batches and activations and the per-sample memory budget", need)
}

// Close releases the run directory of a Run that will not train; Train
// releases it itself.
func (s *Run) Close() error { return s.h.Close() }

// Privacy is what makes the run private or not, and what it releases;
// nil without dp-sgd.
func (s *Run) Privacy() *run.Privacy { return s.h.Privacy() }

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

// clippable is how many gradients a step of size sequences offers the
// mode to clip.
func (c *Config) clippable(size int) int {
	switch c.ClipMode {
	case ClipGlobal:
		return 1
	case ClipMicroBatch:
		return c.Accum
	case ClipPerSample:
		return size
	}
	return 0
}

// epsilon is the ε the run has spent at its δ; NaN without dp-sgd.
func (s *Run) epsilon() Float {
	return run.Epsilon(s.sampleRate != 0, s.st.Privacy, s.cfg.Delta)
}

// Train runs the remaining steps, writes the final checkpoint and
// result.json if opts.Out is set, and returns the summary. When ctx is
// cancelled (Ctrl-C) it writes a checkpoint and returns an error wrapping
// loop.ErrInterrupted. A Run trains once.
func (s *Run) Train(ctx context.Context) (*Summary, error) {
	defer s.h.Close()
	if err := s.h.Train(ctx, hooks{s}); err != nil {
		return nil, err
	}
	sum := &Summary{
		Config: s.cfg, Steps: s.cfg.Steps, Curve: s.curve, Summary: s.h.Summary(), ClipThreshold: s.runRecord().ClipThreshold,
		Clipped: s.st.Clipped, Clippable: s.st.Clippable, ClipWindows: s.st.ClipWindows,
	}
	if len(s.curve) > 0 {
		sum.FinalValLoss = s.curve[len(s.curve)-1].ValLoss
	}
	if s.corpus.Test != nil {
		l, err := s.testLoss()
		if err != nil {
			return nil, err
		}
		sum.FinalTestLoss = &l
	}
	if s.st.Clippable > 0 {
		sum.ClippedFraction = float64(s.st.Clipped) / float64(s.st.Clippable)
	}
	sum.CorruptPerStep, sum.Detection = s.cfg.CorruptPerStep(), s.st.Detection
	if s.sampleRate > 0 {
		eps := s.epsilon()
		sum.Epsilon, sum.Delta, sum.Records, sum.SampleRate = &eps, s.cfg.Delta, s.records.Len(), s.sampleRate
	}
	return sum, s.h.Finish(sum)
}

// hooks is the Run as the run layer drives it (run.Trainer).
type hooks struct{ *Run }

// Begin opens a fresh run's log with its RunRecord and evaluates the
// initial model, or rebuilds a resumed run's curve from its log.
func (h hooks) Begin(kept [][]byte) error {
	for _, line := range kept {
		var l struct {
			Step    int    `json:"step"`
			ValLoss *Float `json:"val_loss"`
		}
		if err := json.Unmarshal(line, &l); err != nil {
			return fmt.Errorf("%s: %w", run.LogFile, err)
		}
		if l.ValLoss != nil {
			h.curve = append(h.curve, EvalPoint{Step: l.Step, ValLoss: *l.ValLoss})
		}
	}
	if h.h.Resumed() {
		return nil
	}
	if err := h.h.Log(h.runRecord()); err != nil {
		return err
	}
	return h.evaluate(0)
}

// After evaluates every EvalInterval steps and at the end, and asks for a
// checkpoint every CkptInterval steps (the run layer writes the last).
func (h hooks) After(done int) (bool, error) {
	if done%h.cfg.EvalInterval == 0 || done == h.cfg.Steps {
		if err := h.evaluate(done); err != nil {
			return false, err
		}
	}
	return h.cfg.CkptInterval > 0 && done%h.cfg.CkptInterval == 0 && done < h.cfg.Steps, nil
}

// Describe is the latest loss and learning rate for progress lines.
func (h hooks) Describe(int) string {
	return fmt.Sprintf("loss %.4f  lr %.3g", float64(h.last.Loss), float64(h.last.LR))
}

// runRecord is the log record that opens a run.
func (s *Run) runRecord() RunRecord {
	t := Float(s.cfg.ClipThreshold())
	if t == 0 {
		t = Float(math.NaN())
	}
	return RunRecord{Config: s.cfg, ClipThreshold: t, Ranks: s.h.Comm().Size()}
}

// Step performs optimizer step i (0-based) on the next Accum micro-batches.
func (h hooks) Step(i int) (train.Stats, error) {
	s := h.Run
	lr := s.sched.LR(i)
	if err := s.opt.SetLR(lr); err != nil {
		return train.Stats{}, err
	}
	size := s.cfg.ExpectedBatch() // the step's sequences
	var sample train.Batch
	if s.records != nil {
		sample, size = s.poissonSample()
	} else {
		s.nextBatches()
	}
	if s.clips != nil {
		s.clips.reset()
	}
	t0 := time.Now()
	var st train.Stats
	var err error
	if s.records != nil {
		st, err = s.trainer.PrivateStep(sample, s.cfg.MicroBatch)
	} else {
		st, err = s.trainer.Step(s.batches...)
	}
	if err != nil {
		return st, err
	}
	if s.sampleRate > 0 {
		s.st.Privacy.Add(s.sampleRate, s.cfg.NoiseMultiplier, 1)
	}
	var det *Detection
	if s.clips != nil {
		if d, ok := s.clips.step(s.cfg.ClipMode, s.corrupt.mask, s.cfg.MicroBatch); ok {
			det = &d
			if s.st.Detection == nil {
				s.st.Detection = &Detection{Unit: d.Unit}
			}
			s.st.Detection.merge(d)
		}
	}
	dt := time.Since(t0).Seconds()
	s.st.Clipped += int64(s.cfg.clipped(st))
	s.st.Clippable += int64(s.cfg.clippable(size))
	if s.cfg.ClipMode != ClipNone {
		s.st.ClipWindows = addClipWindow(s.st.ClipWindows, i, s.cfg.clipped(st), s.cfg.clippable(size))
	}
	s.last = StepRecord{
		Step: i + 1, LR: Float(lr), Loss: Float(st.Loss), GradNorm: Float(st.GradNorm),
		ClippedBatches: st.ClippedBatches, ClippedSamples: st.Clipped, DroppedSamples: st.Dropped,
		SkippedBatches: st.SkippedBatches, Skipped: st.Skipped,
		TokensPerSec: float64(size*s.cfg.BlockSize) / dt, Elapsed: s.h.Elapsed(),
		Diagnostics: s.h.Diagnostics(), SampleNorms: s.h.Norms(), Detection: det,
	}
	if s.records != nil {
		s.last.Sequences = &size
	}
	if (i+1)%s.cfg.LogInterval == 0 || i+1 == s.cfg.Steps {
		if err := s.h.Log(s.last); err != nil {
			return st, err
		}
	}
	return st, nil
}

// nextBatches draws the step's Accum micro-batches into s.batches and
// corrupts the sequences the corruption chooses.
func (s *Run) nextBatches() {
	if s.corrupt != nil {
		s.corrupt.draw()
	}
	for j, b := range s.batches {
		s.train.Next(s.x, b.Y)
		if s.corrupt != nil {
			s.corrupt.apply(j, s.x, b.Y)
		}
		setTokens(b.X, s.x)
	}
}

// poissonSample draws the step's Poisson sample of B records as one batch
// (Batch{} for an empty sample, a noise-only step) and returns B.
func (s *Run) poissonSample() (train.Batch, int) {
	idx := s.records.Next()
	if len(idx) == 0 {
		return train.Batch{}, 0
	}
	T := s.cfg.BlockSize
	b := train.Batch{X: tensor.New(len(idx), T), Y: make([]int32, len(idx)*T)}
	x := make([]int32, len(idx)*T)
	for j, i := range idx {
		s.records.Fill(i, x[j*T:][:T], b.Y[j*T:][:T])
	}
	setTokens(b.X, x)
	return b, len(idx)
}

// evaluate estimates the validation loss after done steps on EvalIters
// batches, the same ones every time, logs it and adds it to the curve.
func (s *Run) evaluate(done int) error {
	loss, err := s.valLoss()
	if err != nil {
		return err
	}
	p := EvalPoint{Step: done, ValLoss: Float(loss)}
	s.curve = append(s.curve, p)
	rec := EvalRecord{Step: done, ValLoss: p.ValLoss, Elapsed: s.h.Elapsed()}
	if s.sampleRate > 0 {
		eps := s.epsilon()
		rec.Epsilon = &eps
	}
	return s.h.Log(rec)
}

// valLoss is the mean loss over EvalIters validation batches.
func (s *Run) valLoss() (float64, error) {
	s.eval.Reset()
	return meanLoss(s.model, s.eval, s.cfg.EvalIters, nil)
}

// testLoss is the mean loss over EvalIters batches of the held-out test
// split, drawn as the validation batches are.
func (s *Run) testLoss() (Float, error) {
	ts, err := text.NewSampler(s.corpus.Test, s.cfg.MicroBatch, s.cfg.BlockSize, text.EvalSeed)
	if err != nil {
		return 0, err
	}
	l, err := meanLoss(s.model, ts, s.cfg.EvalIters, nil)
	return Float(l), err
}

// setTokens writes token ids into a model input. They need no check: the
// corpus's tokens are below its vocabulary size (data/text checks token
// files), and CheckCorpus made the model's vocabulary at least that large.
func setTokens(x *tensor.Tensor, ids []int32) {
	for j, t := range ids {
		x.Data[j] = float32(t)
	}
}

// NoiseMultiplier returns the dp-sgd noise multiplier σ at which a run of
// c on corpus spends targetEpsilon at c.Delta (privacy.NoiseMultiplier,
// RDP): Steps steps at the sample rate ExpectedBatch/N of its N records.
// c's own NoiseMultiplier is ignored; the rest of c must be valid and fit
// the corpus. Its errors are *setting.Error values.
func NoiseMultiplier(c Config, corpus *text.Corpus, targetEpsilon float64) (float64, error) {
	if !c.DPSGD() {
		return 0, setting.Errorf("Estimator", strconv.Quote(c.Estimator), "dp-sgd in per-sample mode: only it spends privacy")
	}
	c.NoiseMultiplier = 1 // any valid σ, so that the rest is checked
	if err := c.Validate(); err != nil {
		return 0, err
	}
	if err := c.CheckCorpus(corpus); err != nil {
		return 0, err
	}
	r, err := text.NewRecords(corpus.Train, c.BlockSize, c.ExpectedBatch(), privacy.NewSecret(0)) // for N and q
	if err != nil {
		return 0, err
	}
	if err := c.checkDelta(r.Len()); err != nil {
		return 0, err
	}
	return privacy.NoiseMultiplier(r.SampleRate(), c.Steps, targetEpsilon, c.Delta, privacy.Options{})
}
