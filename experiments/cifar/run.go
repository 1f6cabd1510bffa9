package cifar

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	cifardata "github.com/psclip/psclip/data/cifar"
	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/internal/atomicfile"
	"github.com/psclip/psclip/internal/loop"
	"github.com/psclip/psclip/internal/normlog"
	"github.com/psclip/psclip/models"
	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/optim"
	"github.com/psclip/psclip/setting"
	"github.com/psclip/psclip/tensor"
	"github.com/psclip/psclip/train"
)

// ResultFile is the name of a finished run's result in its output directory.
const ResultFile = "result.json"

// EvalBatch is the batch size of evaluation passes; it changes only their
// speed and memory, never the result.
const EvalBatch = 250

// Data is a loaded data set: the training set (split into training and
// validation images by each run's seed) and the test set.
type Data struct {
	Dir         string
	Train, Test *cifardata.Dataset
}

// LoadData reads a CIFAR-100 or CIFAR-10 directory (or a synthetic one
// written by "psclip data synth-cifar"). Its errors name the file and the
// offset at fault.
func LoadData(dir string) (*Data, error) {
	tr, te, err := cifardata.Load(dir)
	if err != nil {
		return nil, err
	}
	if tr.Len() < 2 {
		return nil, fmt.Errorf("%s: %d training image(s), want at least 2 to hold out a validation image", dir, tr.Len())
	}
	return &Data{Dir: dir, Train: tr, Test: te}, nil
}

// RunOptions say where a run writes and how it reports.
type RunOptions struct {
	// Out is the output directory (it must exist): log.jsonl, the
	// checkpoint and, at the end, result.json. Empty: no files, no
	// checkpoints, no resume.
	Out string
	// Resume continues the run from Out's checkpoint, exactly: weights,
	// optimizer state, data order, augmentation and dropout streams and the
	// epoch's running statistics are restored, so the result is
	// bit-identical to an uninterrupted run.
	Resume bool
	// Progress, if set, receives a progress line about once a second.
	Progress io.Writer
	// Label prefixes the progress lines.
	Label string
	// LogNorms adds a line {"step": s, "sample_norms": [...]} to the log
	// after every step s, with the per-sample gradient norms in batch order
	// (null for a non-finite one), the input of "psclip tail --from". It
	// needs an estimator that computes per-sample norms.
	LogNorms bool

	// beforeStep, if set, may alter each step's batch (tests: poison an
	// image); afterStep is called after every step (tests: interrupt).
	beforeStep func(step int, b *train.Batch)
	afterStep  func(done int)
}

// Summary is what a finished run reports (result.json).
type Summary struct {
	Config Config `json:"config"`
	Epochs int    `json:"epochs"`
	// Final epoch's training and validation figures, and the test set's.
	TrainAcc Float `json:"train_acc"`
	ValAcc   Float `json:"val_acc"`
	TestAcc  Float `json:"test_acc"`
	TestLoss Float `json:"test_loss"`
	// Seconds is the run's wall time, evaluations included, summed over
	// resumed sessions.
	Seconds        float64       `json:"train_time_s"`
	SkippedSteps   int           `json:"skipped_steps"`
	DroppedSamples int           `json:"dropped_samples"`
	Curve          []EpochRecord `json:"curve"`
}

// Run is one training run, set up and ready to train.
type Run struct {
	cfg  Config
	opts RunOptions
	data *Data

	trainSet, valSet *cifardata.Dataset
	norm             cifardata.Normalizer
	it               *cifardata.Iterator
	model            nn.Sequential
	opt              *optim.SGD
	est              estimator.Estimator // the configured one, whose state a checkpoint keeps
	norms            *normlog.Recorder   // with LogNorms: what train sees as its estimator
	trainer          *train.Trainer
	dropout          *rand.PCG
	perSample        bool
	batchesPerEpoch  int

	st    state
	start time.Time // when this session began
	log   *os.File  // nil without an output directory
}

// state is the run's progress apart from tensors and random streams: what a
// checkpoint's metadata holds to resume exactly.
type state struct {
	Step    int                `json:"step"`
	Pos     cifardata.Position `json:"pos"`
	Seconds float64            `json:"seconds"` // wall time of earlier sessions
	// EpochStart is the elapsed time at which the current epoch began.
	EpochStart float64  `json:"epoch_start"`
	Epoch      epochAcc `json:"epoch_acc"`
	Skipped    int      `json:"skipped_steps"`
	Dropped    int      `json:"dropped_samples"`
	// Estimator is an adaptive estimator's state (its MarshalBinary), in
	// checkpoints only.
	Estimator []byte `json:"estimator,omitempty"`
}

// epochAcc accumulates the current epoch's statistics.
type epochAcc struct {
	LossSum      float64 `json:"loss_sum"`
	LossN        int     `json:"loss_n"`
	Correct      int     `json:"correct"`
	Seen         int     `json:"seen"`
	NormSum      float64 `json:"norm_sum"`
	NormN        int     `json:"norm_n"`
	GradNormSum  float64 `json:"grad_norm_sum"`
	GradNormN    int     `json:"grad_norm_n"`
	Clipped      int     `json:"clipped"`
	ClippedSteps int     `json:"clipped_steps"`
	Steps        int     `json:"steps"`
	Skipped      int     `json:"skipped"`
	Dropped      int     `json:"dropped"`
	TrainSeconds float64 `json:"train_seconds"`
}

// dropoutStream is the PCG stream of the dropout masks; the split, data
// order, augmentations and initialisation use their own streams of the
// same seed (data/cifar and models pick theirs).
const dropoutStream = 0xc1fa_0000_0000_0003

// New sets up a run of cfg on data: it splits off the validation set,
// builds and initialises the model and, with opts.Resume, restores the
// checkpoint in opts.Out. Its errors are about the configuration, the data
// or the checkpoint, before any training.
func New(cfg Config, data *Data, opts RunOptions) (*Run, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	r := &Run{cfg: cfg, opts: opts, data: data}
	var err error
	if r.trainSet, r.valSet, err = cifardata.Split(data.Train, cifardata.ValidationSize(data.Train.Len()), cfg.Seed); err != nil {
		return nil, err
	}
	r.norm = cifardata.Stats(r.trainSet)
	aug, _ := ParseAugment(cfg.Augment)
	if r.it, err = cifardata.NewIterator(r.trainSet, cifardata.IterConfig{Batch: cfg.Batch, Shuffle: true, Augment: aug, Norm: r.norm, Seed: cfg.Seed}); err != nil {
		return nil, err
	}
	r.batchesPerEpoch = r.it.BatchesPerEpoch()
	if r.model, err = models.NewAlexNet(models.AlexNetConfig{Classes: data.Train.Classes, WidthDiv: cfg.WidthDiv, Dropout: cfg.Dropout}, cfg.Seed); err != nil {
		return nil, err
	}
	if r.opt, err = optim.NewSGD(r.model.Params(), optim.SGDConfig{LR: cfg.LR, Momentum: cfg.Momentum, WeightDecay: cfg.WeightDecay}); err != nil {
		return nil, err
	}
	if r.est, err = cfg.New(); err != nil {
		return nil, err
	}
	r.perSample = r.est.PerSample()
	est := r.est
	if opts.LogNorms {
		if !r.perSample {
			return nil, setting.Errorf("LogNorms", true, "false: %s computes no per-sample gradient norms", cfg.Label())
		}
		r.norms = &normlog.Recorder{Estimator: r.est}
		est = r.norms
	}
	r.dropout = rand.NewPCG(cfg.Seed, dropoutStream)
	r.trainer, err = train.New(train.Config{
		Model: r.model, Loss: r.loss, Estimator: est, Optimizer: r.opt, Rand: rand.New(r.dropout),
	})
	if err != nil {
		return nil, err
	}
	if opts.Resume {
		if err := r.restore(); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// Model returns the run's model; its parameters have torchvision's names.
func (r *Run) Model() nn.Sequential { return r.model }

// TotalSteps is the number of optimizer steps of the whole run.
func (r *Run) TotalSteps() int { return r.cfg.Epochs * r.batchesPerEpoch }

// loss is the cross-entropy, counting on the way the training batch's
// finite losses and correct predictions into the epoch's statistics.
func (r *Run) loss(out *tensor.Tensor, y []int32) ([]float32, *tensor.Tensor, error) {
	losses, dout, err := nn.CrossEntropy(out, y)
	if err != nil {
		return nil, nil, err
	}
	e := &r.st.Epoch
	for _, l := range losses {
		if finite(float64(l)) {
			e.LossSum += float64(l)
			e.LossN++
		}
	}
	e.Correct += correct(out, y)
	e.Seen += len(y)
	return losses, dout, nil
}

// correct counts the rows of logits whose largest entry is at the target;
// a row with a NaN is never correct.
func correct(logits *tensor.Tensor, y []int32) int {
	c := logits.Dim(-1)
	n := 0
	for i, t := range y {
		row := logits.Data[i*c : (i+1)*c]
		best := 0
		for j, v := range row {
			if v != v {
				best = -1
				break
			}
			if v > row[best] {
				best = j
			}
		}
		if best == int(t) {
			n++
		}
	}
	return n
}

// Train runs the remaining epochs, evaluates on the test set and writes
// result.json, and returns the summary. It writes a checkpoint after every
// epoch; when ctx is cancelled (Ctrl-C) it writes one after the step in
// flight and returns an error wrapping loop.ErrInterrupted. A Run trains
// once.
func (r *Run) Train(ctx context.Context) (*Summary, error) {
	r.start = time.Now()
	var curve []EpochRecord
	if r.opts.Out != "" {
		f, kept, err := openLog(r.opts.Out, r.st.Step, r.batchesPerEpoch, r.opts.Resume)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r.log, curve = f, kept
	}
	if r.st.Step%r.batchesPerEpoch == 0 && r.st.Epoch.Steps > 0 {
		// The run stopped for bad steps at the end of an epoch, before
		// evaluating it: finish that epoch first.
		rec, err := r.endEpoch(r.st.Step / r.batchesPerEpoch)
		if err != nil {
			return nil, err
		}
		curve = append(curve, rec)
	}
	l := loop.Loop{
		Total: r.TotalSteps(),
		Step:  func(_ context.Context, i int) (bool, error) { return r.step(i) },
		After: func(done int) error {
			r.st.Step = done
			if r.opts.afterStep != nil {
				r.opts.afterStep(done)
			}
			if done%r.batchesPerEpoch != 0 {
				return nil
			}
			rec, err := r.endEpoch(done / r.batchesPerEpoch)
			if err != nil {
				return err
			}
			curve = append(curve, rec)
			return r.save()
		},
		Save: func(done int) error {
			r.st.Step = done
			return r.save()
		},
		MaxBadSteps:  r.cfg.MaxBadSteps,
		Progress:     r.opts.Progress,
		Label:        r.opts.Label,
		ItemsPerStep: r.cfg.Batch,
		ItemUnit:     "img",
		Describe: func(done int) string {
			if e := &r.st.Epoch; e.Seen > 0 {
				return fmt.Sprintf("epoch %d/%d  loss %.3f  acc %.1f %%", done/r.batchesPerEpoch+1, r.cfg.Epochs,
					float64(ratio(e.LossSum, e.LossN)), 100*float64(e.Correct)/float64(e.Seen))
			}
			ep := curve[len(curve)-1] // an epoch has just ended
			return fmt.Sprintf("epoch %d/%d  loss %.3f  acc %.1f %%  val acc %.1f %%", ep.Epoch, r.cfg.Epochs,
				float64(ep.TrainLoss), 100*float64(ep.TrainAcc), 100*float64(ep.ValAcc))
		},
	}
	if err := l.Run(ctx, r.st.Step); err != nil {
		return nil, err
	}
	acc, loss := r.evaluate(r.data.Test)
	s := &Summary{
		Config: r.cfg, Epochs: r.cfg.Epochs, TestAcc: Float(acc), TestLoss: Float(loss),
		Seconds: r.elapsed(), SkippedSteps: r.st.Skipped, DroppedSamples: r.st.Dropped, Curve: curve,
	}
	if n := len(curve); n > 0 {
		s.TrainAcc, s.ValAcc = curve[n-1].TrainAcc, curve[n-1].ValAcc
	}
	if r.opts.Out != "" {
		b, err := json.MarshalIndent(s, "", "  ")
		if err != nil {
			return nil, err
		}
		if err := atomicfile.WriteFile(filepath.Join(r.opts.Out, ResultFile), append(b, '\n')); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (r *Run) elapsed() float64 { return r.st.Seconds + time.Since(r.start).Seconds() }

// step performs optimizer step i (0-based) on the next training batch.
func (r *Run) step(i int) (bad bool, err error) {
	x, y, ok := r.it.Next()
	if !ok { // the previous epoch's end: Next has moved to the next epoch
		x, y, _ = r.it.Next()
	}
	if p := r.it.Position(); p.Epoch != i/r.batchesPerEpoch {
		panic(fmt.Sprintf("cifar: step %d drew a batch of epoch %d", i, p.Epoch)) // a bookkeeping bug
	}
	b := train.Batch{X: x, Y: y}
	if r.opts.beforeStep != nil {
		r.opts.beforeStep(i, &b)
	}
	t0 := time.Now()
	st, err := r.trainer.Step(b)
	if err != nil {
		return false, err
	}
	e := &r.st.Epoch
	e.TrainSeconds += time.Since(t0).Seconds()
	e.Steps++
	e.Clipped += st.Clipped
	e.ClippedSteps += st.ClippedBatches
	e.Dropped += st.Dropped
	if r.perSample {
		n := st.Samples - st.Dropped
		e.NormSum += st.MeanSampleNorm * float64(n)
		e.NormN += n
	}
	if st.Skipped {
		e.Skipped++
	} else {
		e.GradNormSum += st.GradNorm
		e.GradNormN++
	}
	r.st.Pos = r.it.Position()
	if r.norms != nil && r.log != nil {
		if err := writeLine(r.log, normsRecord{Step: i + 1, SampleNorms: r.norms.Take()}); err != nil {
			return false, err
		}
	}
	return st.Skipped, nil
}

// endEpoch evaluates on the validation set, logs the finished epoch and
// starts the next epoch's statistics.
func (r *Run) endEpoch(epoch int) (EpochRecord, error) {
	valAcc, valLoss := r.evaluate(r.valSet)
	e := r.st.Epoch
	now := r.elapsed()
	rec := EpochRecord{
		Epoch:     epoch,
		TrainLoss: ratio(e.LossSum, e.LossN), TrainAcc: ratio(float64(e.Correct), e.Seen),
		ValLoss: Float(valLoss), ValAcc: Float(valAcc),
		Elapsed: now, EpochSeconds: now - r.st.EpochStart,
		ImagesPerSec:        float64(e.Seen) / e.TrainSeconds,
		MeanSampleNorm:      Float(math.NaN()),
		ClippedPerBatch:     float64(e.Clipped) / float64(e.Steps),
		ClippedStepFraction: float64(e.ClippedSteps) / float64(e.Steps),
		MeanGradNorm:        ratio(e.GradNormSum, e.GradNormN),
		SkippedSteps:        e.Skipped, DroppedSamples: e.Dropped,
	}
	if r.perSample {
		rec.MeanSampleNorm = ratio(e.NormSum, e.NormN)
	}
	rec.PHat, rec.SigmaHat, rec.Gamma = Float(math.NaN()), Float(math.NaN()), Float(math.NaN())
	switch est := r.est.(type) {
	case *estimator.PSAuto:
		if te, ok := est.Estimate(); ok {
			rec.PHat, rec.SigmaHat = Float(te.P), Float(te.Sigma)
		}
	case *estimator.Quantile:
		rec.Gamma = Float(est.Gamma())
	}
	r.st.Skipped += e.Skipped
	r.st.Dropped += e.Dropped
	r.st.Epoch = epochAcc{}
	r.st.EpochStart = now
	if r.log != nil {
		return rec, writeLine(r.log, rec)
	}
	return rec, nil
}

// ratio is s/n, or NaN when n is 0.
func ratio(s float64, n int) Float {
	if n == 0 {
		return Float(math.NaN())
	}
	return Float(s / float64(n))
}

// evaluate returns the accuracy and mean loss of the model on d, in
// evaluation mode (no dropout, no augmentation).
func (r *Run) evaluate(d *cifardata.Dataset) (acc, loss float64) {
	it, err := cifardata.NewIterator(d, cifardata.IterConfig{Batch: EvalBatch, Norm: r.norm})
	if err != nil {
		panic(err) // d is not empty and r.norm is valid: checked in New
	}
	ctx := &nn.Context{}
	var sum float64
	var hits int
	for {
		x, y, ok := it.Next()
		if !ok {
			break
		}
		out := r.model.Forward(ctx, x)
		losses, _, err := nn.CrossEntropy(out, y)
		if err != nil {
			panic(err) // labels are below the model's classes: checked by the loader
		}
		for _, l := range losses {
			sum += float64(l)
		}
		hits += correct(out, y)
	}
	return float64(hits) / float64(d.Len()), sum / float64(d.Len())
}
