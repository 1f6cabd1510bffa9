package images

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	cifardata "github.com/psclip/psclip/data/cifar"
	imagedata "github.com/psclip/psclip/data/images"
	"github.com/psclip/psclip/data/labelnoise"
	"github.com/psclip/psclip/dist"
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

// EvalBatch is the batch size of evaluation passes; it changes only their
// speed and memory, never the result.
const EvalBatch = 250

// Kind names this trainer in checkpoints (run.Spec.Kind). It keeps the
// name the package had before it was experiments/images, so that earlier
// checkpoints resume.
const Kind = "cifar"

// Data is a loaded data set: the training set (split into training and
// validation images by each run's seed) and the test set.
type Data struct {
	Dir         string
	Format      imagedata.Format
	Train, Test *cifardata.Dataset
	// Features are the images' fixed features (ScatterFeatures), which a
	// run of Config.Features trains on; nil until computed.
	Features *Features
}

// LoadData reads an image data set in any format data/images detects:
// a CIFAR-100 or CIFAR-10 directory (or a synthetic one written by "psclip
// data synth-cifar"), or MNIST-style IDX files such as Fashion-MNIST's.
// Its errors name the file and the offset at fault.
func LoadData(dir string) (*Data, error) {
	tr, te, src, err := imagedata.Load(dir)
	if err != nil {
		return nil, err
	}
	if tr.Len() < 2 {
		return nil, fmt.Errorf("%s: %d training image(s), want at least 2 to hold out a validation image", dir, tr.Len())
	}
	return &Data{Dir: dir, Format: src.Format, Train: tr, Test: te}, nil
}

// Identity is the identity of the data a run of c trains on, for the run
// layer: the content hashes of the training and the test set and, with
// label noise, of the training split's labels as trained on (so that a
// resume with other noise is refused as other data). Its errors are about
// the split: a TrainSubset larger than the training split.
func (d *Data) Identity(c Config) (run.Data, error) {
	hash := func(s *cifardata.Dataset) string { return run.Hash(s.Images, s.Labels, s.Coarse) }
	id := run.Data{Source: d.Dir, SHA256: map[string]string{"train": hash(d.Train), "test": hash(d.Test)}}
	sp, err := c.split(d.Train) // checks the subset's size as well
	if err != nil {
		return run.Data{}, err
	}
	if c.LabelNoise > 0 {
		id.SHA256["noisy_train_labels"] = run.Hash(sp.labels)
	}
	return id, nil
}

// trainSplit is a run's division of the data set's training set.
type trainSplit struct {
	// train and valid are the images of the training and validation
	// splits, as indices into the data set's training set, ascending.
	train, valid []int
	// labels are the training split's labels as trained on: with label
	// noise, noisy (positions in train, ascending) marks those replaced.
	labels []uint8
	noisy  []int
}

// subsetStream is the PCG stream that picks Config.TrainSubset's images.
const subsetStream = 0xc1fa_0000_0000_0004

// valSize is the number of validation images a run of c holds out of a
// training set of n images (Config.ValFraction). A share that holds out
// no image, or every image, of this set is refused: it is not the split
// asked for.
func (c *Config) valSize(n int) (int, error) {
	if c.ValFraction == nil {
		return cifardata.ValidationSize(n), nil
	}
	f := *c.ValFraction
	v := int(f * float64(n))
	switch {
	case f > 0 && v == 0:
		return 0, setting.Errorf("ValFraction", f, "0 or at least %.3g: a share that holds out an image of the %d training images", 1/float64(n), n)
	case v >= n:
		return 0, setting.Errorf("ValFraction", f, "below %.3g: a share that keeps a training image of the %d", float64(n-1)/float64(n), n)
	}
	return v, nil
}

// split divides d as a run of c does: the seeded validation split
// (cifardata.SplitIndices, of valSize images), TrainSubset images of the
// rest chosen at random from the seed, and the label noise applied to
// those.
func (c *Config) split(d *cifardata.Dataset) (*trainSplit, error) {
	val, err := c.valSize(d.Len())
	if err != nil {
		return nil, err
	}
	ti, vi, err := cifardata.SplitIndices(d.Len(), val, c.Seed)
	if err != nil {
		return nil, err
	}
	if n := c.TrainSubset; n > 0 {
		if n > len(ti) {
			return nil, setting.Errorf("TrainSubset", n, "at most the %d images of the training split", len(ti))
		}
		pick := rand.New(rand.NewPCG(c.Seed, subsetStream)).Perm(len(ti))[:n]
		slices.Sort(pick)
		for j, p := range pick {
			pick[j] = ti[p]
		}
		ti = pick
	}
	sp := &trainSplit{train: ti, valid: vi, labels: make([]uint8, len(ti))}
	for j, i := range ti {
		sp.labels[j] = d.Labels[i]
	}
	if c.LabelNoise > 0 {
		// The share must flip some images and keep some (setting.Share).
		if _, err := setting.Share("LabelNoise", c.LabelNoise, len(ti), "training images"); err != nil {
			return nil, err
		}
		if sp.noisy, err = labelnoise.Apply(sp.labels, d.Classes, c.noise()); err != nil {
			return nil, err
		}
	}
	return sp, nil
}

// NoisyFile is the file in the run directory that lists, for a run with
// label noise, the training images whose label was replaced
// (NoisyRecord).
const NoisyFile = "noisy.json"

// NoisyRecord is the content of NoisyFile.
type NoisyRecord struct {
	LabelNoise     float64 `json:"label_noise"`
	LabelNoiseKind string  `json:"label_noise_kind"`
	Seed           uint64  `json:"seed"`
	// TrainImages is the size of the training split the noise was drawn
	// over; Indices are the noisy images' indices in the data set's
	// training file (image i of train-images-idx3-ubyte, say), ascending,
	// and Labels their labels as trained on.
	TrainImages int     `json:"train_images"`
	Indices     []int   `json:"indices"`
	Labels      []uint8 `json:"labels"`
}

// noisyRecord is the NoisyFile of a run of c with the training split sp.
func (c *Config) noisyRecord(sp *trainSplit) *NoisyRecord {
	rec := &NoisyRecord{LabelNoise: c.LabelNoise, LabelNoiseKind: c.LabelNoiseKind, Seed: c.Seed,
		TrainImages: len(sp.train), Indices: make([]int, len(sp.noisy)), Labels: make([]uint8, len(sp.noisy))}
	for j, p := range sp.noisy {
		rec.Indices[j], rec.Labels[j] = sp.train[p], sp.labels[p]
	}
	return rec
}

// writeNoisy writes NoisyFile into the run directory, if the run writes
// one (rank 0, with an output directory), through the run layer: a
// dp-sgd run writes only what it may release.
func (r *Run) writeNoisy() error {
	if r.noisyRec == nil {
		return nil
	}
	return r.h.WriteJSON(NoisyFile, r.noisyRec)
}

// RunOptions say where a run writes and how it reports; the run
// directory holds log.jsonl (EpochRecord lines and, with LogNorms, a line
// of per-sample norms after every step), the checkpoint and, at the end,
// result.json (Summary).
type RunOptions = run.Options

// Summary is what a finished run reports (result.json).
type Summary struct {
	Config Config `json:"config"`
	Epochs int    `json:"epochs"`
	// Final epoch's training and validation figures, and the test set's.
	TrainAcc Float `json:"train_acc"`
	ValAcc   Float `json:"val_acc"`
	TestAcc  Float `json:"test_acc"`
	TestLoss Float `json:"test_loss"`
	run.Summary
	// Epsilon is dp-sgd's ε at Delta for the whole run (RDP accountant,
	// Balle et al.'s conversion), written whatever its value; both absent
	// for the other estimators.
	Epsilon        *Float  `json:"epsilon,omitempty"`
	Delta          float64 `json:"delta,omitempty"`
	DroppedSamples int     `json:"dropped_samples"`
	// AvgTestAcc and AvgTestLoss are the test set's figures for the mean
	// of the weights after each of the last AvgSteps steps
	// (Config.AverageSteps); absent without averaging.
	AvgTestAcc  *Float        `json:"avg_test_acc,omitempty"`
	AvgTestLoss *Float        `json:"avg_test_loss,omitempty"`
	AvgSteps    int           `json:"avg_steps,omitempty"`
	Curve       []EpochRecord `json:"curve"`
}

// Run is one training run, set up and ready to train.
type Run struct {
	cfg  Config
	data *Data

	// noisy marks the training split's images whose label was replaced
	// (nil without label noise); clips records which samples of a step
	// the estimator clipped, when the detection statistics need it.
	noisy []bool
	clips *clipRecorder
	// autoAugment is set when the training images are augmented with
	// AutoAugment, whose operations the log counts clipped samples by.
	autoAugment bool
	// noisyRec is NoisyFile's content, written into the run directory
	// when training begins.
	noisyRec *NoisyRecord

	trainSet, valSet *cifardata.Dataset
	// feats are the features the model takes instead of the pixels of
	// the training, validation and test sets (Config.Features); nil
	// without features.
	feats           map[*cifardata.Dataset]featureSet
	norm            cifardata.Normalizer
	it              *cifardata.Iterator
	model           nn.Sequential
	opt             *optim.SGD
	trainer         *train.Trainer
	dropout         *rand.PCG
	perSample       bool
	batchesPerEpoch int
	// sampleRate is dp-sgd's q, what every step adds to the privacy
	// history (Batch/N, also for shuffled batches); 0 without dp-sgd.
	sampleRate float64

	h       *run.Run // the run layer: directory, log, checkpoints, loop
	st      state
	stepAcc []float64 // the step's loss statistics (loss), stepAccLen of them
	curve   []EpochRecord

	// beforeStep, if set, may alter each step's batch (tests: poison an
	// image).
	beforeStep func(step int, b *train.Batch)
}

// state is the trainer's progress apart from tensors and random streams,
// which the run layer saves with every checkpoint.
type state struct {
	Pos cifardata.Position `json:"pos"`
	// EpochStart is the elapsed time at which the current epoch began.
	EpochStart float64  `json:"epoch_start"`
	Epoch      epochAcc `json:"epoch_acc"`
	Dropped    int      `json:"dropped_samples"` // in the epochs done
	// Privacy is dp-sgd's history of steps, which ε is accounted from.
	Privacy privacy.History `json:"privacy,omitempty"`
	// AvgSum is the sum of the weights (in the order of the model's
	// parameters) after each of the AvgSteps steps of Config.AverageSteps'
	// window done so far.
	AvgSum   []float64 `json:"avg_weight_sum,omitempty"`
	AvgSteps int       `json:"avg_steps,omitempty"`
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
	// Detection counts clipped and mislabelled samples (label noise with
	// a per-sample estimator).
	Detection detectionAcc `json:"detection"`
	// Augment counts clipped samples by the AutoAugment operations they
	// received (AutoAugment with a per-sample estimator).
	Augment augmentAcc `json:"augment,omitzero"`
	// TailNorms are the epoch's latest finite per-sample norms, at most
	// 2·estimator.DefaultWindow of them, for the epoch's tail index.
	TailNorms []float64 `json:"tail_norms,omitempty"`
}

// addTail keeps the step's finite norms for the epoch's tail index: the
// latest estimator.DefaultWindow of them, in a buffer trimmed to that when
// it reaches twice as many.
func (e *epochAcc) addTail(norms []float64) {
	for _, n := range norms {
		if finite(n) {
			e.TailNorms = append(e.TailNorms, n)
		}
	}
	if w := estimator.DefaultWindow; len(e.TailNorms) >= 2*w {
		e.TailNorms = slices.Delete(e.TailNorms, 0, len(e.TailNorms)-w)
	}
}

// tailIndex is Hill's p̂ (estimator.Tail) over the epoch's latest
// estimator.DefaultWindow norms; NaN with fewer than
// estimator.MinTailSamples of them.
func (e *epochAcc) tailIndex() Float {
	tail := e.TailNorms[max(0, len(e.TailNorms)-estimator.DefaultWindow):]
	t, err := estimator.NewTail(max(len(tail), estimator.MinTailSamples))
	if err != nil {
		panic(err) // the window is at least MinTailSamples
	}
	t.Add(tail)
	if p, ok := t.Hill(); ok {
		return Float(p)
	}
	return Float(math.NaN())
}

// dropoutStream is the PCG stream of the dropout masks; the split, data
// order, augmentations and initialisation use their own streams of the
// same seed (data/cifar and models pick theirs).
const dropoutStream = 0xc1fa_0000_0000_0003

// mayDiffer lists the settings a resumed run may change: more epochs extend
// the run (the learning rate is constant), and the bad-step limit only
// decides when to give up.
var mayDiffer = []string{"epochs", "max_bad_steps"}

// New sets up a run of cfg on data: it checks that the run fits in memory,
// splits off the validation set, builds and initialises the model and opens
// the run directory, restoring its checkpoint with opts.Resume. Its errors
// are about the configuration, the data, the machine or the run directory,
// before any training. A Run that will not train must be closed.
func New(cfg Config, data *Data, opts RunOptions) (*Run, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	channels := data.Train.Channels()
	if err := cfg.checkChannels(channels); err != nil {
		return nil, err
	}
	if err := cfg.checkFeatures(data); err != nil {
		return nil, err
	}
	sp, err := cfg.split(data.Train)
	if err != nil {
		return nil, err
	}
	// A batch holds at most the training split: the memory a run needs,
	// and the micro-batches it can make, are those of the batch it uses.
	batch := min(cfg.Batch, len(sp.train))
	if cfg.Accum > batch {
		return nil, setting.Errorf("Accum", cfg.Accum, "at most the %d images of a batch (the training split's)", batch)
	}
	// Checked before anything is allocated against the lower bound of the
	// plain step's memory; the budget itself is of the measured step.
	if err := cfg.checkMemory(data.Train.Classes, channels, batch, opts.PerSampleMemory.Bytes(cfg.trainingBytes(data.Train.Classes, channels, batch))); err != nil {
		return nil, err
	}
	r := &Run{cfg: cfg, data: data, stepAcc: make([]float64, stepAccLen)}
	r.trainSet, r.valSet = data.Train.Subset(sp.train), data.Train.Subset(sp.valid)
	r.trainSet.Labels = sp.labels
	r.feats = cfg.featureSets(data, sp, r.trainSet, r.valSet)
	if cfg.LabelNoise > 0 {
		r.noisy = labelnoise.Mask(len(sp.train), sp.noisy)
		r.noisyRec = cfg.noisyRecord(sp)
	}
	r.norm = cfg.normalizer(r.trainSet)
	if cfg.DPSGD() {
		if err := cfg.checkDelta(len(sp.train)); err != nil {
			return nil, err
		}
	}
	aug, _ := ParseAugment(cfg.Augment)
	r.autoAugment = aug.AutoAugment
	poisson := cfg.sampling() == SamplingPoisson
	priv := cfg.privacy()
	ic := cifardata.IterConfig{Batch: cfg.Batch, Shuffle: !poisson, Poisson: poisson, Augment: aug, Norm: r.norm, Seed: cfg.Seed}
	if poisson {
		ic.Secret = priv.Secret // shared over the ranks by run.New
	}
	if r.it, err = cifardata.NewIterator(r.trainSet, ic); err != nil {
		return nil, err
	}
	if cfg.DPSGD() {
		r.sampleRate = min(1, float64(cfg.Batch)/float64(len(sp.train)))
	}
	r.batchesPerEpoch = r.it.BatchesPerEpoch()
	if err := cfg.checkAverage(r.TotalSteps()); err != nil {
		return nil, err
	}
	if r.model, err = cfg.newModel(data.Train.Classes, channels); err != nil {
		return nil, err
	}
	if r.opt, err = optim.NewSGD(r.model.Params(), optim.SGDConfig{LR: cfg.LR, Momentum: cfg.Momentum, WeightDecay: cfg.WeightDecay}); err != nil {
		return nil, err
	}
	est, err := cfg.NewFor(r.expectedBatch(len(sp.train)))
	if err != nil {
		return nil, err
	}
	r.perSample = est.PerSample()
	// Every step, the epoch's last (its remainder) included, must give
	// every rank a micro-batch: Split makes min(Accum, images) of them.
	// (DP-SGD's steps vary in size, down to none: its trainer is exempt.)
	smallest := cfg.Batch
	if rem := r.trainSet.Len() % cfg.Batch; rem != 0 {
		smallest = rem
	}
	if err := train.CheckRanks(min(max(cfg.Accum, 1), smallest), opts.Comm); err != nil && !cfg.DPSGD() {
		return nil, setting.Errorf("Accum", cfg.Accum, "a micro-batch for each of the %d ranks in every step, the epoch's last of %d images included", opts.Comm.Size(), smallest)
	}
	r.dropout = rand.NewPCG(cfg.Seed, dropoutStream)
	id, err := data.Identity(cfg)
	if err != nil {
		return nil, err
	}
	r.h, err = run.New(run.Spec{
		Kind: Kind, Config: cfg, MayDiffer: append(estimator.Keys(cfg.Unread()), mayDiffer...), Data: id, Steps: r.TotalSteps(),
		Params: r.model.Params(), Optimizer: r.opt, Estimator: est,
		RNGs: map[string]run.RNG{"dropout": r.dropout}, State: &r.st, Privacy: priv,
		MaxBadSteps: cfg.MaxBadSteps, ItemsPerStep: cfg.Batch, ItemUnit: "img",
	}, opts)
	if err != nil {
		return nil, err
	}
	est = r.h.Estimator()
	// The detection and augmentation statistics need every sample's clip
	// decision, which only a run in one process sees (a rank clips its
	// share).
	if r.perSample && (r.noisy != nil || r.autoAugment) && r.h.Comm().Size() == 1 {
		r.clips = &clipRecorder{Estimator: est}
		est = r.clips
	}
	tc := train.Config{
		Model: r.model, Loss: r.loss, Estimator: est, Optimizer: r.opt, Rand: rand.New(r.dropout), KeepNorms: r.perSample,
		Comm: r.h.Comm(),
	}
	if cfg.DPSGD() {
		tc.ExpectedBatch = r.expectedBatch(len(sp.train))
		tc.SampleStats = true // what the run writes of them is its own release's
	}
	mc := tc
	mc.Loss = nn.CrossEntropy // r.loss would count the measure's batch in the epoch's statistics
	tc.PerSampleMemory, err = opts.PerSampleMemory.For(mc, r.microBatch(batch, channels))
	if err == nil {
		r.trainer, err = train.New(tc)
	}
	if err == nil && r.h.Resumed() {
		err = r.it.Seek(r.st.Pos)
		r.startAverage()
	}
	if err != nil {
		r.h.Close()
		return nil, err
	}
	return r, nil
}

// checkDelta refuses a δ that is not below 1/n, n the training images: at
// δ ≥ 1/n a mechanism that publishes one random training image is
// (0, δ)-private.
func (c *Config) checkDelta(n int) error {
	return privacy.CheckDelta(c.Delta, n, "training images")
}

// NoiseMultiplier returns the dp-sgd noise multiplier σ at which a run of
// c on d spends targetEpsilon at c.Delta (privacy.NoiseMultiplier, RDP):
// for its sample rate Batch/N and its Epochs·⌈N/Batch⌉ steps, N the
// training split's images. c's own NoiseMultiplier is ignored; the rest of
// c must be valid. Its errors are *setting.Error values.
func (d *Data) NoiseMultiplier(c Config, targetEpsilon float64) (float64, error) {
	c.NoiseMultiplier = 1 // any valid σ, so that the rest is checked
	if err := c.Validate(); err != nil {
		return 0, err
	}
	sp, err := c.split(d.Train)
	if err != nil {
		return 0, err
	}
	n := len(sp.train)
	if err := c.checkDelta(n); err != nil {
		return 0, err
	}
	q := min(1, float64(c.Batch)/float64(n))
	steps := c.Epochs * ((n + c.Batch - 1) / c.Batch)
	return privacy.NoiseMultiplier(q, steps, targetEpsilon, c.Delta, privacy.Options{})
}

// alexNet and smallCNN are the models of the run for data of the given
// classes and channels.
func (c *Config) alexNet(classes, channels int) models.AlexNetConfig {
	return models.AlexNetConfig{Classes: classes, WidthDiv: c.WidthDiv, Dropout: c.Dropout, InChannels: channels}
}

func (c *Config) smallCNN(classes, channels int) models.SmallCNNConfig {
	return models.SmallCNNConfig{Classes: classes, InChannels: channels, Width: models.DefaultSmallCNN.Width / c.WidthDiv}
}

// tanhCNN is the run's TanhCNN: 28×28 images on data/idx's 32×32 canvas.
func (c *Config) tanhCNN(classes int) models.TanhCNNConfig {
	return models.TanhCNNConfig{Classes: classes, Side: cifardata.Side}
}

// newModel builds and initialises the run's model (Config.Model).
func (c *Config) newModel(classes, channels int) (nn.Sequential, error) {
	switch c.Model {
	case ModelSmallCNN:
		return models.NewSmallCNN(c.smallCNN(classes, channels), c.Seed)
	case ModelTanhCNN:
		return models.NewTanhCNN(c.tanhCNN(classes), c.Seed)
	case ModelScatterLinear:
		return models.NewScatterLinear(scatterNet(classes), c.Seed)
	case ModelScatterCNN:
		return models.NewScatterCNN(scatterNet(classes), c.Seed)
	}
	return models.NewAlexNet(c.alexNet(classes, channels), c.Seed)
}

// normalizer is the run's pixel normalisation (Config.Normalize): the
// training split's channel statistics, or none (v/255: mean 0, standard
// deviation 1).
func (c *Config) normalizer(train *cifardata.Dataset) cifardata.Normalizer {
	if c.Normalize == NormalizeNone {
		return cifardata.Normalizer{Std: [cifardata.Channels]float32{1, 1, 1}}
	}
	return cifardata.Stats(train)
}

// checkChannels refuses data the model cannot take: TanhCNN takes grey
// images only.
func (c *Config) checkChannels(channels int) error {
	if c.Model == ModelTanhCNN && channels != 1 {
		return setting.Errorf("Model", strconv.Quote(c.Model), "a model for %d-channel images: %s takes grey 28×28 images (Fashion-MNIST, MNIST)", channels, ModelTanhCNN)
	}
	return nil
}

// trainingBytes is the memory a plain step on batches of batch images
// takes (the models' TrainingBytes, with the momentum buffers).
func (c *Config) trainingBytes(classes, channels, batch int) float64 {
	switch c.Model {
	case ModelSmallCNN:
		return c.smallCNN(classes, channels).TrainingBytes(batch, 1)
	case ModelTanhCNN:
		return c.tanhCNN(classes).TrainingBytes(batch, 1)
	case ModelScatterLinear, ModelScatterCNN:
		return scatterTrainingBytes(c.Model, classes, batch)
	}
	return c.alexNet(classes, channels).TrainingBytes(batch, 1)
}

// checkMemory refuses a run whose model, momentum buffers, batches of
// batch images and perSample bytes of per-sample gradients (a budget; none
// when not positive) cannot fit in this machine's memory
// (run.CheckMemory), before anything is allocated.
func (c *Config) checkMemory(classes, channels, batch int, perSample int64) error {
	need := c.trainingBytes(classes, channels, batch) + float64(max(perSample, 0))
	need += max(float64(batch), EvalBatch) * float64(cifardata.ImageBytes) * 4
	return run.CheckMemory("the model, its optimizer state, a batch's activations and the per-sample memory budget", need)
}

// clipRecorder is the run's estimator, recording which samples of the
// step it clips (a factor strictly between 0 and 1: dropped samples are
// not clipped ones), for the label-noise detection statistics.
type clipRecorder struct {
	estimator.Estimator
	clipped []bool // the step's samples so far, in step order
}

// Unwrap returns the recorded estimator (estimator.NoisyOf).
func (c *clipRecorder) Unwrap() estimator.Estimator { return c.Estimator }

// Factors is the estimator's, recording its decisions.
func (c *clipRecorder) Factors(k0 int, norms, f []float64) estimator.Stats {
	st := c.Estimator.Factors(k0, norms, f)
	c.clipped = c.clipped[:k0]
	for _, x := range f {
		c.clipped = append(c.clipped, x > 0 && x < 1)
	}
	return st
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// Model returns the run's model; its parameters have torchvision's names.
func (r *Run) Model() nn.Sequential { return r.model }

// Privacy is what makes the run private or not, and what it releases;
// nil without dp-sgd.
func (r *Run) Privacy() *run.Privacy { return r.h.Privacy() }

// TotalSteps is the number of optimizer steps of the whole run.
func (r *Run) TotalSteps() int { return r.cfg.Epochs * r.batchesPerEpoch }

// Close releases the run directory of a Run that will not train; Train
// releases it itself.
func (r *Run) Close() error { return r.h.Close() }

// loss is the cross-entropy, counting on the way the finite losses and
// correct predictions of the micro-batches this process computes into the
// step's statistics (stepAcc).
func (r *Run) loss(out *tensor.Tensor, y []int32) ([]float32, *tensor.Tensor, error) {
	losses, dout, err := nn.CrossEntropy(out, y)
	if err != nil {
		return nil, nil, err
	}
	a := r.stepAcc
	for _, l := range losses {
		if finite(float64(l)) {
			a[stepLossSum] += float64(l)
			a[stepLossN]++
		}
	}
	a[stepCorrect] += float64(correct(out, y))
	a[stepSeen] += float64(len(y))
	return losses, dout, nil
}

// The step's statistics that the loss counts, indices into Run.stepAcc.
const (
	stepLossSum = iota
	stepLossN
	stepCorrect
	stepSeen
	stepAccLen
)

// addStep adds the step's statistics, summed over the ranks of a
// data-parallel run, to the epoch's.
func (r *Run) addStep() {
	a := r.stepAcc
	r.h.Comm().AllReduce(dist.Bufs{F64: [][]float64{a}})
	e := &r.st.Epoch
	e.LossSum += a[stepLossSum]
	e.LossN += int(a[stepLossN])
	e.Correct += int(a[stepCorrect])
	e.Seen += int(a[stepSeen])
	clear(a)
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
	defer r.h.Close()
	if err := r.h.Train(ctx, hooks{r}); err != nil {
		return nil, err
	}
	acc, loss := r.evaluate(r.data.Test)
	s := &Summary{
		Config: r.cfg, Epochs: r.cfg.Epochs, TestAcc: Float(acc), TestLoss: Float(loss),
		Summary: r.h.Summary(), DroppedSamples: r.st.Dropped, Curve: r.curve,
	}
	if n := len(r.curve); n > 0 {
		s.TrainAcc, s.ValAcc = r.curve[n-1].TrainAcc, r.curve[n-1].ValAcc
	}
	if r.sampleRate > 0 {
		eps := r.epsilon()
		s.Epsilon, s.Delta = &eps, r.cfg.Delta
	}
	if r.cfg.AverageSteps > 0 {
		acc, loss := r.evaluateAverage()
		a, l := Float(acc), Float(loss)
		s.AvgTestAcc, s.AvgTestLoss, s.AvgSteps = &a, &l, r.st.AvgSteps
	}
	return s, r.h.Finish(s)
}

// hooks is the Run as the run layer drives it (run.Trainer).
type hooks struct{ *Run }

// Begin writes NoisyFile, rebuilds the curve from the epoch records of a
// resumed run's log, and finishes an epoch whose end the run stopped at
// before evaluating it (a run stopped for bad steps).
func (h hooks) Begin(kept [][]byte) error {
	if err := h.writeNoisy(); err != nil {
		return err
	}
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

// Step performs optimizer step i (0-based) on the next training batch.
func (h hooks) Step(i int) (train.Stats, error) {
	r := h.Run
	x, y, ok := r.it.Next()
	if !ok { // the previous epoch's end: Next has moved to the next epoch
		x, y, _ = r.it.Next()
	}
	if p := r.it.Position(); p.Epoch != i/r.batchesPerEpoch {
		panic(fmt.Sprintf("images: step %d drew a batch of epoch %d", i, p.Epoch)) // a bookkeeping bug
	}
	if f, ok := r.feats[r.trainSet]; ok {
		x = f.batch(r.it.Indices())
	}
	b := train.Batch{X: x, Y: y}
	if r.beforeStep != nil {
		r.beforeStep(i, &b)
	}
	if r.clips != nil {
		r.clips.clipped = r.clips.clipped[:0]
	}
	t0 := time.Now()
	st, err := r.step(b)
	if err != nil {
		clear(r.stepAcc)
		return st, err
	}
	if r.sampleRate > 0 {
		r.st.Privacy.Add(r.sampleRate, r.cfg.NoiseMultiplier, 1)
	}
	r.addAverage(i + 1)
	r.addStep()
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
	e.addTail(st.Norms)
	idx := r.it.Indices()
	if r.clips != nil && r.noisy != nil {
		e.Detection.add(r.clips.clipped, st.Norms, idx, r.noisy)
	}
	if r.clips != nil && r.autoAugment {
		e.Augment.add(r.clips.clipped, st.Norms, r.it.Applied())
	}
	if st.Skipped {
		e.Skipped++
	} else {
		e.GradNormSum += st.GradNorm
		e.GradNormN++
	}
	r.st.Pos = r.it.Position()
	if norms := r.h.Norms(); norms != nil {
		rec := normsRecord{Step: i + 1, SampleNorms: norms}
		if r.noisy != nil {
			rec.Noisy = make([]bool, len(idx))
			for j, k := range idx {
				rec.Noisy[j] = r.noisy[k]
			}
		}
		if err := r.h.Log(rec); err != nil {
			return st, err
		}
	}
	return st, nil
}

// step trains on the step's batch b in its micro-batches: Accum of them,
// or for dp-sgd's Poisson sample as many as MicroBatch allows (none for an
// empty sample: a noise-only step), dp-sgd's through PrivateStep.
func (r *Run) step(b train.Batch) (train.Stats, error) {
	accum := max(r.cfg.Accum, 1)
	if r.cfg.DPSGD() {
		micro := r.cfg.MicroBatch // Poisson: micro-batches of at most MicroBatch (0: one)
		if r.cfg.sampling() == SamplingShuffle {
			micro = (b.X.Dim(0) + accum - 1) / accum
		}
		return r.trainer.PrivateStep(b, micro)
	}
	batches, err := train.Split(b, accum)
	if err != nil {
		return train.Stats{}, err
	}
	return r.trainer.Step(batches...)
}

// microBatch is a micro-batch of the largest size the run's steps give
// the trainer, zeros shaped as its images (or their features) are, for
// train.PlainStepBytes to measure a step on: batch images in Accum
// micro-batches, or dp-sgd's Poisson sample in micro-batches of at most
// MicroBatch (0: the expected sample, batch, in one).
func (r *Run) microBatch(batch, channels int) train.Batch {
	accum := max(r.cfg.Accum, 1)
	n := (batch + accum - 1) / accum
	if r.cfg.sampling() == SamplingPoisson {
		n = batch
		if r.cfg.MicroBatch > 0 {
			n = min(batch, r.cfg.MicroBatch)
		}
	}
	c, h, w := channels, cifardata.Side, cifardata.Side
	if f, ok := r.feats[r.trainSet]; ok {
		c, h, w = f.f.Channels, f.f.Height, f.f.Width
	}
	return train.Batch{X: tensor.New(n, c, h, w), Y: make([]int32, n)}
}

// expectedBatch is dp-sgd's expected batch size q·N over n training
// images, Opacus' divisor.
func (r *Run) expectedBatch(n int) float64 { return r.sampleRate * float64(n) }

// epsilon is the ε the run has spent at its δ, NaN without dp-sgd.
func (r *Run) epsilon() Float {
	return run.Epsilon(r.sampleRate != 0, r.st.Privacy, r.cfg.Delta)
}

// After ends an epoch when one is complete, and asks for a checkpoint then.
func (h hooks) After(done int) (bool, error) {
	if done%h.batchesPerEpoch != 0 {
		return false, nil
	}
	return true, h.endEpoch(done / h.batchesPerEpoch)
}

// Describe is the epoch, loss and accuracy for progress lines.
func (h hooks) Describe(done int) string {
	if e := &h.st.Epoch; e.Seen > 0 {
		return fmt.Sprintf("epoch %d/%d  loss %.3f  acc %.1f %%", done/h.batchesPerEpoch+1, h.cfg.Epochs,
			float64(ratio(e.LossSum, e.LossN)), 100*float64(e.Correct)/float64(e.Seen))
	}
	ep := h.curve[len(h.curve)-1] // an epoch has just ended
	d := fmt.Sprintf("epoch %d/%d  loss %.3f  acc %.1f %%", ep.Epoch, h.cfg.Epochs, float64(ep.TrainLoss), 100*float64(ep.TrainAcc))
	if !h.cfg.evaluates(ep.Epoch) {
		return d
	}
	if finite(float64(ep.ValAcc)) { // no validation split: none
		d += fmt.Sprintf("  val acc %.1f %%", 100*float64(ep.ValAcc))
	}
	if h.sampleRate > 0 {
		d += fmt.Sprintf("  test acc %.1f %%  ε %.3f (δ %g)", 100*float64(ep.TestAcc), float64(*ep.Epsilon), h.cfg.Delta)
	}
	return d
}

// endEpoch evaluates on the validation and the test set if the
// configuration asks for it after this epoch, logs the finished epoch, adds
// it to the curve and starts the next epoch's statistics.
func (r *Run) endEpoch(epoch int) error {
	valAcc, valLoss, testAcc, testLoss := math.NaN(), math.NaN(), math.NaN(), math.NaN()
	if r.cfg.evaluates(epoch) {
		if r.valSet.Len() > 0 { // none with ValFraction 0: null
			valAcc, valLoss = r.evaluate(r.valSet)
		}
		testAcc, testLoss = r.evaluate(r.data.Test)
	}
	e := r.st.Epoch
	now := r.h.Elapsed()
	rec := EpochRecord{
		Epoch:     epoch,
		TrainLoss: ratio(e.LossSum, e.LossN), TrainAcc: ratio(float64(e.Correct), e.Seen),
		ValLoss: Float(valLoss), ValAcc: Float(valAcc),
		TestLoss: Float(testLoss), TestAcc: Float(testAcc),
		Elapsed: now, EpochSeconds: now - r.st.EpochStart,
		ImagesPerSec:   float64(e.Seen) / e.TrainSeconds,
		MeanSampleNorm: Float(math.NaN()), TailIndex: Float(math.NaN()),
		ClippedPerBatch:     float64(e.Clipped) / float64(e.Steps),
		ClippedStepFraction: float64(e.ClippedSteps) / float64(e.Steps),
		MeanGradNorm:        ratio(e.GradNormSum, e.GradNormN),
		SkippedSteps:        e.Skipped, DroppedSamples: e.Dropped,
		Diagnostics: r.h.Diagnostics(),
	}
	if r.perSample {
		rec.MeanSampleNorm = ratio(e.NormSum, e.NormN)
		rec.TailIndex = e.tailIndex()
	}
	if r.clips != nil && r.noisy != nil {
		rec.Detection = e.Detection.record()
	}
	if r.clips != nil && r.autoAugment {
		rec.Augment = e.Augment.record()
	}
	if r.sampleRate > 0 {
		eps := r.epsilon()
		rec.Epsilon = &eps
	}
	r.st.Dropped += e.Dropped
	r.st.Epoch = epochAcc{}
	r.st.EpochStart = now
	r.curve = append(r.curve, rec)
	return r.h.Log(rec)
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
		if f, ok := r.feats[d]; ok {
			x = f.batch(it.Indices())
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
