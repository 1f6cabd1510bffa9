package table

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/psclip/psclip/data/dataset"
	tabledata "github.com/psclip/psclip/data/table"
	"github.com/psclip/psclip/estimator"
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
const Kind = "table"

// EvalBatch is the batch size of evaluation passes; it changes only their
// speed and memory, never the result.
const EvalBatch = 1024

// RunOptions say where a run writes and how it reports; the run
// directory holds log.jsonl (one EpochRecord a line and, with LogNorms,
// a line of per-sample norms after every step), the checkpoint and, at
// the end, result.json (Summary).
type RunOptions = run.Options

// Float is a float64 that JSON-encodes NaN and ±Inf as null.
type Float = run.Float

// EpochRecord is the log line of one epoch. Accuracies are fractions in
// [0, 1], null for regression; the loss is the run's (Config.Loss), the
// mean over the records; figures of a split the run does not have (no
// validation rows, no test file) are null.
type EpochRecord struct {
	Epoch int `json:"epoch"` // epochs completed, including this one
	// TrainLoss and TrainAcc are the running figures over the epoch's
	// batches as the model saw them, before each step's update.
	TrainLoss Float `json:"train_loss"`
	TrainAcc  Float `json:"train_acc"`
	ValLoss   Float `json:"val_loss"`
	ValAcc    Float `json:"val_acc"`
	TestLoss  Float `json:"test_loss"`
	TestAcc   Float `json:"test_acc"`
	// Elapsed is the run's wall time up to the end of this epoch;
	// EpochSeconds is this epoch's share.
	Elapsed      float64 `json:"elapsed_s"`
	EpochSeconds float64 `json:"epoch_s"`
	// MeanSampleNorm is the mean per-sample gradient norm (null for
	// estimators without them); ClippedPerBatch the samples a step's
	// per-sample clipping shrank, on average.
	MeanSampleNorm  Float   `json:"mean_sample_norm"`
	ClippedPerBatch float64 `json:"clipped_per_batch"`
	SkippedSteps    int     `json:"skipped_steps"`
	DroppedSamples  int     `json:"dropped_samples"`
	// Epsilon is dp-sgd's ε after this epoch at Config.Delta; absent for
	// the other estimators.
	Epsilon *Float `json:"epsilon,omitempty"`
	// Diagnostics are an adaptive estimator's state at the epoch's end.
	run.Diagnostics
}

// normsRecord is the log line of one step's per-sample norms
// (RunOptions.LogNorms), as "psclip tail --from" reads it.
type normsRecord struct {
	Step        int     `json:"step"`
	SampleNorms []Float `json:"sample_norms"`
}

// Summary is what a finished run reports (result.json): the last epoch's
// figures and the curve.
type Summary struct {
	Config Config `json:"config"`
	Epochs int    `json:"epochs"`
	// Records is N, the training rows.
	Records   int   `json:"records"`
	TrainLoss Float `json:"train_loss"`
	TrainAcc  Float `json:"train_acc"`
	ValLoss   Float `json:"val_loss"`
	ValAcc    Float `json:"val_acc"`
	TestLoss  Float `json:"test_loss"`
	TestAcc   Float `json:"test_acc"`
	run.Summary
	// Epsilon is dp-sgd's ε at Delta for the whole run; both absent for
	// the other estimators.
	Epsilon *Float        `json:"epsilon,omitempty"`
	Delta   float64       `json:"delta,omitempty"`
	Curve   []EpochRecord `json:"curve"`
}

// SchemaKey is the key of the run's Schema in its checkpoint's metadata
// (checkpoint.Meta.Extra), as JSON.
const SchemaKey = "table"

// Schema is what the run's model needs to be used on new rows, which its
// checkpoint keeps (SchemaKey): the feature columns in the order of the
// model's inputs, the classes in the order of its outputs (for binary
// cross-entropy the output is the logit of the second), the task and the
// loss, and the standardisation, x ↦ (x − Mean)/Std by feature (none
// where Mean is absent: dp-sgd's).
type Schema struct {
	Target   string    `json:"target"`
	Task     string    `json:"task"`
	Loss     string    `json:"loss"`
	Features []string  `json:"features"`
	Classes  []string  `json:"classes,omitempty"`
	Mean     []float64 `json:"mean,omitempty"`
	Std      []float64 `json:"std,omitempty"`
}

// Run is one training run, set up and ready to train.
type Run struct {
	cfg  Config
	data *Data

	trainSet        *dataset.Tensors
	valSet, testSet *dataset.Tensors // nil when the run has none
	classes         int              // the model's classes; 0 for regression
	model           nn.Sequential
	opt             *optim.SGD
	trainer         *train.Trainer
	perSample       bool
	batchesPerEpoch int
	// sampler draws each step's records: a Shuffle in epochs, or for
	// dp-sgd a Poisson sampler keyed by the run's secret. seek puts it at
	// a step: its position is a function of the steps done.
	sampler dataset.Sampler
	seek    func(done int) error
	// sampleRate is dp-sgd's q = Batch/N; 0 without dp-sgd.
	sampleRate float64

	h       *run.Run // the run layer: directory, log, checkpoints, loop
	st      state
	stepAcc [stepAccLen]float64 // the step's loss statistics
	curve   []EpochRecord
}

// state is the trainer's progress apart from tensors, which the run layer
// saves with every checkpoint; the samplers' position is the steps done.
type state struct {
	EpochStart float64  `json:"epoch_start"` // elapsed time at the epoch's start
	Epoch      epochAcc `json:"epoch_acc"`
	// Privacy is dp-sgd's history of steps, which ε is accounted from.
	Privacy privacy.History `json:"privacy,omitempty"`
}

// epochAcc accumulates the current epoch's statistics.
type epochAcc struct {
	LossSum float64 `json:"loss_sum"`
	LossN   int     `json:"loss_n"`
	Correct int     `json:"correct"`
	Seen    int     `json:"seen"`
	NormSum float64 `json:"norm_sum"`
	NormN   int     `json:"norm_n"`
	Clipped int     `json:"clipped"`
	Steps   int     `json:"steps"`
	Skipped int     `json:"skipped"`
	Dropped int     `json:"dropped"`
}

// The step's statistics that the loss counts, indices into Run.stepAcc.
const (
	stepLossSum = iota
	stepLossN
	stepCorrect
	stepSeen
	stepAccLen
)

// mayDiffer lists the settings a resumed run may change: more epochs
// extend the run (the learning rate is constant), and the bad-step limit
// only decides when to give up.
var mayDiffer = []string{"epochs", "max_bad_steps"}

// New sets up a run of cfg on data: it settles the task, the loss and the
// standardisation (Config.Task, Loss, Standardize) from the data, splits
// off the validation rows, standardises every split by the training
// rows' statistics, builds and initialises the MLP and opens the run
// directory, restoring its checkpoint with opts.Resume. Its errors are
// about the configuration, the data or the run directory, before any
// training. A Run that will not train must be closed.
func New(cfg Config, data *Data, opts RunOptions) (*Run, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.resolve(data.Train.Task)
	if err := cfg.Validate(); err != nil { // the settled task against the loss
		return nil, err
	}
	if cfg.Task != data.Train.Task.String() {
		return nil, setting.Errorf("Task", cfg.Task, "the task the data was loaded for (%v)", data.Train.Task)
	}
	r := &Run{cfg: cfg, data: data}
	if cfg.Task == TaskClassification {
		r.classes = len(data.Train.Classes)
		if cfg.Loss == LossBCE && r.classes != 2 {
			return nil, setting.Errorf("Loss", cfg.Loss, "%s for %d classes: binary cross-entropy is for two", LossCrossEntropy, r.classes)
		}
	}
	ti, vi, err := cfg.split(data.Train.Len())
	if err != nil {
		return nil, err
	}
	n := len(ti)
	trainRows, valRows := rows(data.Train, ti), rows(data.Train, vi)
	schema := Schema{Target: cfg.Target, Task: cfg.Task, Loss: cfg.Loss, Features: data.Train.Features, Classes: data.Train.Classes}
	if cfg.Standardize == StandardizeFit {
		s := tabledata.Fit(trainRows) // the training rows only
		schema.Mean, schema.Std = s.Mean, s.Std
		s.Apply(trainRows)
		s.Apply(valRows)
		if data.Test != nil {
			test := rows(data.Test, slices.Collect(seq(data.Test.Len()))) // a copy
			s.Apply(test)
			r.testSet, err = r.tensors(test)
		}
	} else if data.Test != nil {
		r.testSet, err = r.tensors(data.Test)
	}
	if err != nil {
		return nil, err
	}
	if r.trainSet, err = r.tensors(trainRows); err != nil {
		return nil, err
	}
	if len(vi) > 0 {
		if r.valSet, err = r.tensors(valRows); err != nil {
			return nil, err
		}
	}
	priv := cfg.privacy()
	r.batchesPerEpoch = (n + cfg.Batch - 1) / cfg.Batch
	if cfg.DPSGD() {
		if err := checkDP(&cfg, n); err != nil {
			return nil, err
		}
		p, err := dataset.NewPoissonSecret(priv.Secret, n, cfg.Batch)
		if err != nil {
			return nil, err
		}
		r.sampler, r.seek, r.sampleRate = p, p.Seek, p.SampleRate()
	} else {
		s, err := dataset.NewShuffle(n, cfg.Batch, false, cfg.Seed)
		if err != nil {
			return nil, err
		}
		r.sampler = s
		r.seek = func(done int) error { return s.Seek(done/r.batchesPerEpoch, done%r.batchesPerEpoch) }
	}
	out := max(r.classes, 1)
	if cfg.Loss == LossBCE {
		out = 1
	}
	if r.model, err = models.NewMLP(models.MLPConfig{In: data.Train.D(), Hidden: cfg.Hidden, Out: out}, cfg.Seed); err != nil {
		return nil, err
	}
	if r.opt, err = optim.NewSGD(r.model.Params(), optim.SGDConfig{LR: cfg.LR, Momentum: cfg.Momentum, WeightDecay: cfg.WeightDecay}); err != nil {
		return nil, err
	}
	est, err := cfg.NewFor(float64(cfg.Batch)) // dp-sgd's expected batch q·N
	if err != nil {
		return nil, err
	}
	r.perSample = est.PerSample()
	sch, err := json.Marshal(schema)
	if err != nil {
		return nil, err
	}
	r.h, err = run.New(run.Spec{
		Kind: Kind, Config: cfg, MayDiffer: append(estimator.Keys(cfg.Unread()), mayDiffer...), Data: data.Identity(), Steps: r.TotalSteps(),
		Params: r.model.Params(), Optimizer: r.opt, Estimator: est, State: &r.st, Privacy: priv, Extra: map[string]string{SchemaKey: string(sch)},
		MaxBadSteps: cfg.MaxBadSteps, ItemsPerStep: cfg.Batch, ItemUnit: "rows",
	}, opts)
	if err != nil {
		return nil, err
	}
	tc := train.Config{Model: r.model, Estimator: r.h.Estimator(), Optimizer: r.opt}
	if r.cfg.Loss == LossCrossEntropy {
		tc.Loss = func(out *tensor.Tensor, y []int32) ([]float32, *tensor.Tensor, error) {
			return r.trainLoss(out, train.Batch{Y: y})
		}
	} else {
		tc.FloatLoss = func(out *tensor.Tensor, t []float32) ([]float32, *tensor.Tensor, error) {
			return r.trainLoss(out, train.Batch{T: t})
		}
	}
	if cfg.DPSGD() {
		tc.ExpectedBatch = float64(cfg.Batch) // q·N, Opacus' divisor
		tc.SampleStats = true                 // what the run writes of them is its own release's
	}
	r.trainer, err = train.New(tc)
	if err == nil {
		err = r.seek(r.h.Done())
	}
	if err != nil {
		r.h.Close()
		return nil, err
	}
	return r, nil
}

// checkDP refuses a dp-sgd run whose expected batch exceeds its n
// training records or whose δ is not below 1/n.
func checkDP(c *Config, n int) error {
	switch {
	case c.Batch > n:
		return setting.Errorf("Batch", c.Batch, "at most the %d training records: the expected Poisson sample", n)
	}
	return privacy.CheckDelta(c.Delta, n, "training records")
}

// NoiseMultiplier returns the dp-sgd noise multiplier σ at which a run of
// c on d spends targetEpsilon at c.Delta (privacy.NoiseMultiplier, RDP):
// for its sample rate Batch/N and its Epochs·⌈N/Batch⌉ steps, N the
// training rows. c's own NoiseMultiplier is ignored; the rest of c must
// be valid. Its errors are *setting.Error values.
func (d *Data) NoiseMultiplier(c Config, targetEpsilon float64) (float64, error) {
	c.NoiseMultiplier = 1 // any valid σ, so that the rest is checked
	if err := c.Validate(); err != nil {
		return 0, err
	}
	ti, _, err := c.split(d.Train.Len())
	if err != nil {
		return 0, err
	}
	n := len(ti)
	if err := checkDP(&c, n); err != nil {
		return 0, err
	}
	steps := c.Epochs * ((n + c.Batch - 1) / c.Batch)
	return privacy.NoiseMultiplier(float64(c.Batch)/float64(n), steps, targetEpsilon, c.Delta, privacy.Options{})
}

// tensors is the Dataset of a split's rows: class targets for
// cross-entropy, 0 and 1 for binary cross-entropy, numbers for
// regression.
func (r *Run) tensors(t *tabledata.Table) (*dataset.Tensors, error) {
	x := tensor.From(t.X, t.Len(), t.D())
	switch r.cfg.Loss {
	case LossCrossEntropy:
		return dataset.NewTensors(x, t.Labels)
	case LossBCE:
		y := make([]float32, len(t.Labels))
		for i, l := range t.Labels {
			y[i] = float32(l)
		}
		return dataset.NewFloatTensors(x, y)
	}
	return dataset.NewFloatTensors(x, t.Targets)
}

// Model returns the run's MLP (models.NewMLP's parameter names).
func (r *Run) Model() nn.Sequential { return r.model }

// Config is the run's configuration, its task, loss and standardisation
// settled.
func (r *Run) Config() Config { return r.cfg }

// Privacy is what makes the run private or not, and what it releases;
// nil without dp-sgd.
func (r *Run) Privacy() *run.Privacy { return r.h.Privacy() }

// TotalSteps is the number of optimizer steps of the whole run.
func (r *Run) TotalSteps() int { return r.cfg.Epochs * r.batchesPerEpoch }

// Close releases the run directory of a Run that will not train; Train
// releases it itself.
func (r *Run) Close() error { return r.h.Close() }

// loss is the run's loss of the outputs out for the targets of b (Y for
// cross-entropy, T for the others), with the number of records the model
// predicted right (the largest logit; for binary cross-entropy the sign
// of the logit; none for regression).
func (r *Run) loss(out *tensor.Tensor, b train.Batch) (losses []float32, dout *tensor.Tensor, correct int, err error) {
	switch r.cfg.Loss {
	case LossCrossEntropy:
		losses, dout, err = nn.CrossEntropy(out, b.Y)
		for i, y := range b.Y {
			if argmax(out.Data[i*r.classes:(i+1)*r.classes]) == int(y) {
				correct++
			}
		}
	case LossBCE:
		losses, dout, err = nn.BCEWithLogits(out, b.T)
		for i, t := range b.T {
			if (out.Data[i] > 0) == (t > 0.5) {
				correct++
			}
		}
	case LossMSE:
		losses, dout, err = nn.MSE(out, b.T)
	case LossHuber:
		losses, dout, err = nn.Huber(r.cfg.HuberDelta)(out, b.T)
	}
	return losses, dout, correct, err
}

// argmax is the index of row's largest entry (the first of equal ones),
// -1 for a row with a NaN: it predicts no class.
func argmax(row []float32) int {
	best := 0
	for j, v := range row {
		if v != v {
			return -1
		}
		if v > row[best] {
			best = j
		}
	}
	return best
}

// trainLoss is the training loss, counting on the way the finite losses
// and right predictions into the step's statistics (stepAcc).
func (r *Run) trainLoss(out *tensor.Tensor, b train.Batch) ([]float32, *tensor.Tensor, error) {
	losses, dout, correct, err := r.loss(out, b)
	if err != nil {
		return nil, nil, err
	}
	a := &r.stepAcc
	for _, l := range losses {
		if finite(float64(l)) {
			a[stepLossSum] += float64(l)
			a[stepLossN]++
		}
	}
	a[stepCorrect] += float64(correct)
	a[stepSeen] += float64(len(losses))
	return losses, dout, nil
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// Train runs the remaining epochs and writes result.json, and returns the
// summary. It writes a checkpoint after every epoch; when ctx is
// cancelled (Ctrl-C) it writes one after the step in flight and returns
// an error wrapping loop.ErrInterrupted. A Run trains once.
func (r *Run) Train(ctx context.Context) (*Summary, error) {
	defer r.h.Close()
	if err := r.h.Train(ctx, hooks{r}); err != nil {
		return nil, err
	}
	s := &Summary{Config: r.cfg, Epochs: r.cfg.Epochs, Records: r.trainSet.Len(), Summary: r.h.Summary(), Curve: r.curve}
	if n := len(r.curve); n > 0 {
		e := r.curve[n-1]
		s.TrainLoss, s.TrainAcc, s.ValLoss, s.ValAcc, s.TestLoss, s.TestAcc = e.TrainLoss, e.TrainAcc, e.ValLoss, e.ValAcc, e.TestLoss, e.TestAcc
	}
	if r.sampleRate > 0 {
		eps := r.epsilon()
		s.Epsilon, s.Delta = &eps, r.cfg.Delta
	}
	return s, r.h.Finish(s)
}

// epsilon is the ε the run has spent at its δ, NaN without dp-sgd.
func (r *Run) epsilon() Float {
	return run.Epsilon(r.sampleRate != 0, r.st.Privacy, r.cfg.Delta)
}

// hooks is the Run as the run layer drives it (run.Trainer).
type hooks struct{ *Run }

// Begin rebuilds the curve from the epoch records of a resumed run's log,
// and finishes an epoch whose end the run stopped at before evaluating it
// (a run stopped for bad steps).
func (h hooks) Begin(kept [][]byte) error {
	recs, err := run.EpochRecords[EpochRecord](kept)
	if err != nil {
		return err
	}
	h.curve = append(h.curve, recs...)
	if done := h.h.Done(); done%h.batchesPerEpoch == 0 && h.st.Epoch.Steps > 0 {
		return h.endEpoch(done / h.batchesPerEpoch)
	}
	return nil
}

// Step performs optimizer step i (0-based) on the sampler's next records.
func (h hooks) Step(i int) (train.Stats, error) {
	r := h.Run
	idx := r.sampler.Next()
	var b train.Batch // an empty Poisson sample: a noise-only step
	if len(idx) > 0 {
		var err error
		if b, err = r.trainSet.Batch(idx); err != nil {
			return train.Stats{}, err
		}
	}
	st, err := r.step(b)
	if err != nil {
		clear(r.stepAcc[:])
		return st, err
	}
	if r.sampleRate > 0 {
		r.st.Privacy.Add(r.sampleRate, r.cfg.NoiseMultiplier, 1)
	}
	a, e := &r.stepAcc, &r.st.Epoch
	e.LossSum += a[stepLossSum]
	e.LossN += int(a[stepLossN])
	e.Correct += int(a[stepCorrect])
	e.Seen += int(a[stepSeen])
	clear(a[:])
	e.Steps++
	e.Clipped += st.Clipped
	e.Dropped += st.Dropped
	if st.Skipped {
		e.Skipped++
	}
	if r.perSample {
		n := st.Samples - st.Dropped
		e.NormSum += st.MeanSampleNorm * float64(n)
		e.NormN += n
	}
	if norms := r.h.Norms(); norms != nil {
		return st, r.h.Log(normsRecord{Step: i + 1, SampleNorms: norms})
	}
	return st, nil
}

// step trains on the step's records b: dp-sgd's Poisson sample through
// PrivateStep, in micro-batches of at most MicroBatch records; the
// others' batch in ⌈B/MicroBatch⌉ micro-batches (one without MicroBatch).
func (r *Run) step(b train.Batch) (train.Stats, error) {
	if r.cfg.DPSGD() {
		return r.trainer.PrivateStep(b, r.cfg.MicroBatch)
	}
	k := 1
	if m := r.cfg.MicroBatch; m > 0 {
		k = (b.X.Dim(0) + m - 1) / m
	}
	batches, err := train.Split(b, k)
	if err != nil {
		return train.Stats{}, err
	}
	return r.trainer.Step(batches...)
}

// After ends an epoch when one is complete, and asks for a checkpoint then.
func (h hooks) After(done int) (bool, error) {
	if done%h.batchesPerEpoch != 0 {
		return false, nil
	}
	return true, h.endEpoch(done / h.batchesPerEpoch)
}

// Describe is the epoch, loss and accuracy for progress lines (which a
// private run does not show).
func (h hooks) Describe(done int) string {
	e := &h.st.Epoch
	if e.Seen == 0 && done%h.batchesPerEpoch == 0 && len(h.curve) > 0 {
		ep := h.curve[len(h.curve)-1] // an epoch has just ended
		return fmt.Sprintf("epoch %d/%d  loss %.4g", ep.Epoch, h.cfg.Epochs, float64(ep.TrainLoss))
	}
	d := fmt.Sprintf("epoch %d/%d  loss %.4g", done/h.batchesPerEpoch+1, h.cfg.Epochs, float64(ratio(e.LossSum, e.LossN)))
	if h.classes > 0 && e.Seen > 0 {
		d += fmt.Sprintf("  acc %.1f %%", 100*float64(e.Correct)/float64(e.Seen))
	}
	return d
}

// endEpoch evaluates the validation and the test rows, logs the finished
// epoch, adds it to the curve and starts the next epoch's statistics.
func (r *Run) endEpoch(epoch int) error {
	e := r.st.Epoch
	now := r.h.Elapsed()
	rec := EpochRecord{
		Epoch: epoch, TrainLoss: ratio(e.LossSum, e.LossN), TrainAcc: r.acc(e.Correct, e.Seen),
		Elapsed: now, EpochSeconds: now - r.st.EpochStart,
		MeanSampleNorm: Float(math.NaN()), ClippedPerBatch: float64(e.Clipped) / float64(max(e.Steps, 1)),
		SkippedSteps: e.Skipped, DroppedSamples: e.Dropped, Diagnostics: r.h.Diagnostics(),
	}
	rec.ValLoss, rec.ValAcc = r.evaluate(r.valSet)
	rec.TestLoss, rec.TestAcc = r.evaluate(r.testSet)
	if r.perSample {
		rec.MeanSampleNorm = ratio(e.NormSum, e.NormN)
	}
	if r.sampleRate > 0 {
		eps := r.epsilon()
		rec.Epsilon = &eps
	}
	r.st.Epoch = epochAcc{}
	r.st.EpochStart = now
	r.curve = append(r.curve, rec)
	return r.h.Log(rec)
}

// acc is the accuracy of correct predictions of n, NaN for regression or
// no record.
func (r *Run) acc(correct, n int) Float {
	if r.classes == 0 {
		return Float(math.NaN())
	}
	return ratio(float64(correct), n)
}

// ratio is s/n, or NaN when n is 0.
func ratio(s float64, n int) Float {
	if n == 0 {
		return Float(math.NaN())
	}
	return Float(s / float64(n))
}

// evaluate returns the mean loss and the accuracy of the model on d in
// evaluation mode; NaN for both without d.
func (r *Run) evaluate(d *dataset.Tensors) (loss, acc Float) {
	if d == nil {
		return Float(math.NaN()), Float(math.NaN())
	}
	var sum float64
	var hits int
	idx := make([]int, 0, EvalBatch)
	for lo := 0; lo < d.Len(); lo += EvalBatch {
		idx = idx[:0]
		for i := lo; i < min(lo+EvalBatch, d.Len()); i++ {
			idx = append(idx, i)
		}
		b, err := d.Batch(idx)
		if err != nil {
			panic(err) // indices in range
		}
		out := r.model.Forward(&nn.Context{}, b.X)
		losses, _, correct, err := r.loss(out, b)
		if err != nil {
			panic(err) // targets checked when the data was read
		}
		for _, l := range losses {
			sum += float64(l)
		}
		hits += correct
	}
	return Float(sum / float64(d.Len())), r.acc(hits, d.Len())
}
