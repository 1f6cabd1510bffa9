package main

import (
	"flag"
	"fmt"
	"github.com/psclip/psclip/train"
	"slices"
	"strconv"
	"strings"

	"github.com/psclip/psclip/dist"
	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/experiments/images"
)

func init() {
	register(&command{
		name:  "train cifar",
		short: "train AlexNet-CIFAR with SGD, Clip-SGD or PS-Clip-SGD (constant, increasing or automatic threshold)",
		run:   runTrainCIFAR,
		ranks: true,
	})
}

// cnnPreset is what sets the CNN commands apart: "train cifar" and
// "experiment cifar" are the paper's presets of the image trainer, "train
// images" and "experiment images" its general form, with the model, the
// training subset and label noise as flags.
type cnnPreset struct {
	images    bool   // the image flags: --model, --train-subset, --label-noise
	dataUsage string // --data's
	out       string // --out's default
	// clip is the default threshold of an estimator when --clip is not
	// given, as clipUsage says.
	clip      func(estimator string) float64
	clipUsage string
}

var (
	cifarPreset = cnnPreset{
		dataUsage: "CIFAR-100 or CIFAR-10 binary `directory` (or one written by 'psclip data synth-cifar')",
		out:       "out-cifar", clip: images.PaperClip, clipUsage: "the paper's, 15 for clip-sgd, 45 for ps-clip-sgd",
	}
	imagesPreset = cnnPreset{
		images:    true,
		dataUsage: "image data set `directory`: CIFAR-100 or CIFAR-10 binaries, or MNIST-style IDX files such as Fashion-MNIST's (raw or .gz), detected from its files",
		out:       "out-images", clip: images.ImagesClip,
		clipUsage: fmt.Sprintf("%g for clip-sgd, %g for ps-clip-sgd (chosen for small-cnn on Fashion-MNIST)", images.ImagesClip("clip-sgd"), images.ImagesClip("ps-clip-sgd")),
	}
)

// cnnFlags binds the flags that the CNN training and experiment commands
// share to a configuration, whose current values are the defaults.
func cnnFlags(fs *flag.FlagSet, c *images.Config, data *string, p cnnPreset) {
	fs.StringVar(data, "data", "", p.dataUsage)
	fs.Float64Var(&c.LR, "lr", c.LR, "learning rate (constant)")
	fs.Float64Var(&c.Momentum, "momentum", c.Momentum, "SGD momentum")
	fs.Float64Var(&c.WeightDecay, "weight-decay", c.WeightDecay, "SGD weight decay (L2, as torch.optim.SGD)")
	fs.IntVar(&c.Batch, "batch", c.Batch, "images per step")
	fs.IntVar(&c.Accum, "accum", c.Accum, "micro-batches per batch (gradient accumulation; 0: one), which the ranks share under mpirun")
	fs.IntVar(&c.Epochs, "epochs", c.Epochs, "training epochs")
	fs.IntVar(&c.EvalEvery, "eval-every", c.EvalEvery, "evaluate the validation and test sets after every this many epochs and after the last (0: every epoch)")
	fs.IntVar(&c.WidthDiv, "width-div", c.WidthDiv, "divide AlexNet's widths by this (1: the paper's model)")
	fs.Float64Var(&c.Dropout, "dropout", c.Dropout, "classifier dropout probability")
	fs.StringVar(&c.Augment, "augment", c.Augment, "training augmentation: "+strings.Join(images.Augments, ", "))
	fs.IntVar(&c.MaxBadSteps, "max-bad-steps", c.MaxBadSteps, "stop after this many consecutive steps with non-finite gradients (0: never)")
	if !p.images {
		return
	}
	fs.Var(modelFlag{&c.Model}, "model", "network: "+images.ModelAlexNet+" (AlexNet-CIFAR; 28×28 images are padded to 32×32), "+images.ModelSmallCNN+" (quick runs), "+images.ModelTanhCNN+" (Tramèr & Boneh's CNN for 28×28 grey images), or on --features "+images.FeaturesScatter+" "+images.ModelScatterLinear+" or "+images.ModelScatterCNN+" (their ScatterNet heads)")
	fs.Var(normalizeFlag{&c.Normalize}, "normalize", "pixels to inputs: "+images.NormalizeChannel+" (the training split's channel mean and standard deviation) or "+images.NormalizeNone+" ([0, 1]); default: "+images.NormalizeNone+" for "+images.ModelTanhCNN+", else "+images.NormalizeChannel)
	fs.IntVar(&c.TrainSubset, "train-subset", c.TrainSubset, "train on this many images of the training split, chosen by the seed (0: all)")
	fs.Float64Var(&c.LabelNoise, "label-noise", c.LabelNoise, "replace the labels of this fraction of the training split (never validation or test); the noisy images are listed in OUT/"+images.NoisyFile)
	fs.StringVar(&c.LabelNoiseKind, "label-noise-kind", images.NoiseUniform, "with --label-noise: "+images.NoiseUniform+" (another class at random) or "+images.NoiseNext+" (class k → k+1 mod classes)")
}

// finishImageFlags settles the image flags' defaults after parsing: the
// model's dropout and normalisation unless --dropout or --normalize is
// given, and no noise kind without label noise.
func finishImageFlags(fs *flag.FlagSet, c *images.Config) error {
	if !flagSet(fs, "dropout") {
		c.Dropout = images.ModelDropout(c.Model)
	}
	if !flagSet(fs, "normalize") {
		c.Normalize = images.ModelNormalize(c.Model)
	}
	if c.LabelNoise == 0 {
		if flagSet(fs, "label-noise-kind") {
			return usagef("--label-noise-kind needs --label-noise above 0")
		}
		c.LabelNoiseKind = ""
	}
	return nil
}

// modelFlag is --model: "alexnet" is Config.Model's "".
type modelFlag struct{ m *string }

func (f modelFlag) String() string {
	switch {
	case f.m == nil:
		return ""
	case *f.m == "":
		return images.ModelAlexNet
	}
	return *f.m
}

func (f modelFlag) Set(s string) error {
	switch s {
	case images.ModelAlexNet:
		*f.m = ""
	case images.ModelSmallCNN, images.ModelTanhCNN, images.ModelScatterLinear, images.ModelScatterCNN:
		*f.m = s
	default:
		return fmt.Errorf("%q: want %s, %s, %s, %s or %s", s, images.ModelAlexNet, images.ModelSmallCNN, images.ModelTanhCNN, images.ModelScatterLinear, images.ModelScatterCNN)
	}
	return nil
}

// normalizeFlag is --normalize: "channel" is Config.Normalize's "".
type normalizeFlag struct{ n *string }

func (f normalizeFlag) String() string {
	switch {
	case f.n == nil:
		return ""
	case *f.n == "":
		return images.NormalizeChannel
	}
	return *f.n
}

func (f normalizeFlag) Set(s string) error {
	switch s {
	case images.NormalizeChannel:
		*f.n = ""
	case images.NormalizeNone:
		*f.n = s
	default:
		return fmt.Errorf("%q: want %s or %s", s, images.NormalizeChannel, images.NormalizeNone)
	}
	return nil
}

// loadImages reads the data directory; a missing or damaged file is a
// usage error naming the file (and offset).
func loadImages(dir string) (*images.Data, error) {
	if dir == "" {
		return nil, usagef("--data is required (a CIFAR binary or IDX directory; 'psclip data synth-cifar' writes a synthetic one)")
	}
	d, err := images.LoadData(dir)
	if err != nil {
		return nil, usagef("--data: %v", err)
	}
	return d, nil
}

func runTrainCIFAR(fs *flag.FlagSet, args []string) error {
	return runTrainCNN(fs, args, images.Default(), cifarPreset)
}

// runTrainCNN is a CNN training command of preset p from the defaults c.
func runTrainCNN(fs *flag.FlagSet, args []string, c images.Config, p cnnPreset) error {
	c, d, f, err := setupTrainCNN(fs, args, c, p)
	// Under mpirun, a rank whose flags or data are bad must not leave the
	// others waiting: every rank ends with its error.
	if err := dist.AgreeError(world, err); err != nil {
		return err
	}
	run, err := images.New(c, d, images.RunOptions{Out: f.out, Resume: f.resume, Restart: f.restart, Progress: stderr, Label: c.Label(), LogNorms: f.logNorms, Comm: world, PerSampleMemory: f.memory})
	if err != nil {
		return err
	}
	ctx, stop := interruptContext()
	defer stop()
	s, err := run.Train(ctx)
	if err != nil {
		return err
	}
	val := fmt.Sprintf("validation %.2f %%", 100*float64(s.ValAcc))
	if c.ValFraction != nil && *c.ValFraction == 0 {
		val = "no validation split"
	}
	full := fmt.Sprintf("%s, %d epochs: train %.2f %%, %s, test %.2f %% accuracy; %.1f min; %d skipped steps, %d dropped samples; %s in %s",
		c.Label(), s.Epochs, 100*float64(s.TrainAcc), val, 100*float64(s.TestAcc), s.Seconds/60,
		s.SkippedSteps, s.DroppedSamples, runFileNames, f.out)
	avg := ""
	if s.AvgTestAcc != nil {
		avg = fmt.Sprintf(" (the mean weights of the last %d steps: %.2f %%)", s.AvgSteps, 100*float64(*s.AvgTestAcc))
	}
	full = strings.Replace(full, " accuracy;", " accuracy"+avg+";", 1)
	if !c.DPSGD() {
		fmt.Fprintln(stdout, full)
		return nil
	}
	line := fmt.Sprintf("%s, %d epochs: test %.2f %% accuracy%s; %.1f min; %s in %s", c.Label(), s.Epochs, 100*float64(s.TestAcc), avg, s.Seconds/60, runFileNames, f.out)
	fmt.Fprintf(stdout, "privacy: ε = %.4g at δ = %g (RDP accountant, Balle et al. 2020 conversion)\n", float64(*s.Epsilon), s.Delta)
	return printRelease(stdout, run.Privacy(), s, line, full)
}

// trainCNNFlags are the flags of the CNN training commands outside their
// configuration.
type trainCNNFlags struct {
	out                       string
	resume, restart, logNorms bool
	memory                    train.MemoryBudget
	featuresCache             string // --features-cache
}

// setupTrainCNN reads the flags and the data of a CNN training command of
// preset p from the defaults c.
func setupTrainCNN(fs *flag.FlagSet, args []string, c images.Config, p cnnPreset) (images.Config, *images.Data, trainCNNFlags, error) {
	var (
		data      string
		f         trainCNNFlags
		targetEps float64
	)
	cnnFlags(fs, &c, &data, p)
	addSpecFlags(fs, &c.Spec, cnnSpecFields, nil)
	fs.Float64Var(&targetEps, "target-epsilon", 0, "dp-sgd: the ε to spend at --delta over the whole run; σ is chosen for it (RDP accountant) instead of --noise-multiplier")
	fs.Float64Var(&c.Delta, "delta", c.Delta, "dp-sgd: δ of the (ε, δ) guarantee, below 1/N (N training images); ε is logged every epoch and in result.json")
	fs.StringVar(&c.Sampling, "sampling", c.Sampling, "batches: poisson (each image joins a batch with probability batch/N, drawn from a secret key; dp-sgd's default and only for it) or shuffle (fixed-size batches of a shuffled epoch; for dp-sgd only in a run marked not private, by --noise-seed or --release-unprotected)")
	fs.IntVar(&c.MicroBatch, "micro-batch", c.MicroBatch, "images per micro-batch, the most one holds, which bounds memory: a batch is cut into ⌈batch/micro-batch⌉ (0: the batch in one, or --accum's)")
	fs.BoolVar(&c.ReleaseUnprotected, "release-unprotected", c.ReleaseUnprotected, releaseUsage)
	fs.Lookup("clip").Usage += "; default: " + p.clipUsage
	fs.Uint64Var(&c.Seed, "seed", c.Seed, "seed of the split, initialisation, data order, augmentation, dropout, training subset and label noise")
	fs.StringVar(&f.out, "out", p.out, "output `directory`: log.jsonl, the checkpoint and result.json")
	fs.BoolVar(&f.resume, "resume", false, "continue the run checkpointed in --out (--epochs may grow)")
	fs.BoolVar(&f.restart, "restart", false, restartUsage)
	fs.BoolVar(&f.logNorms, "log-norms", false, "also log every step's per-sample gradient norms (input of 'psclip tail --from OUT/log.jsonl'; per-sample estimators only)")
	definePerSampleMemory(fs, &f.memory)
	if p.images {
		featuresFlags(fs, &c, &f.featuresCache)
		fs.IntVar(&c.AverageSteps, "average-steps", c.AverageSteps, "also evaluate the mean of the weights after each of the last this many steps on the test set (avg_test_acc in result.json; tail averaging: no privacy cost under dp-sgd)")
		fs.Func("val-fraction", "hold out this share of the training set for validation, in [0, 1) (default: a tenth; 0: none, every training image trains and the validation figures are null)", func(s string) error {
			v, err := strconv.ParseFloat(s, 64)
			c.ValFraction = &v
			return err
		})
	}
	if err := parse(fs, args); err != nil {
		return c, nil, f, err
	}
	if !flagSet(fs, "clip") {
		c.Clip = p.clip(c.Estimator)
	}
	if p.images {
		if err := finishImageFlags(fs, &c); err != nil {
			return c, nil, f, err
		}
	}
	if c.DPSGD() && !flagSet(fs, "normalize") {
		c.Normalize = images.NormalizeNone // dp-sgd's inputs depend on no training image
	}
	if !slices.Contains(estimator.Names, c.Estimator) {
		return c, nil, f, c.Spec.Validate() // names the estimators
	}
	// A flag the estimator does not read is refused; the defaults of the
	// settings it does not read are cleared.
	if name := unreadFlag(fs, nil, cnnSpecFields, c.Reads); name != "" {
		return c, nil, f, usagef("--%s does not apply to --estimator %s (%s)", name, c.Estimator, c.Label())
	}
	c.Spec = c.Trim()
	var d *images.Data
	if flagSet(fs, "target-epsilon") {
		switch {
		case !c.DPSGD():
			return c, nil, f, usagef("--target-epsilon does not apply to --estimator %s (%s)", c.Estimator, c.Label())
		case flagSet(fs, "noise-multiplier"):
			return c, nil, f, usagef("--target-epsilon and --noise-multiplier exclude each other: σ is chosen for the ε")
		}
		var err error
		if d, err = loadImages(data); err != nil {
			return c, nil, f, err
		}
		if c.NoiseMultiplier, err = d.NoiseMultiplier(c, targetEps); err != nil {
			return c, nil, f, err
		}
		if world.Rank() == 0 {
			fmt.Fprintf(stderr, "dp-sgd: noise multiplier σ = %g for ε = %g at δ = %g\n", c.NoiseMultiplier, targetEps, c.Delta)
		}
	}
	if err := imageMicroBatch(fs, &c); err != nil {
		return c, nil, f, err
	}
	if err := c.Validate(); err != nil {
		return c, nil, f, err
	}
	if f.logNorms && !c.PerSample() {
		return c, nil, f, usagef("--log-norms: %s computes no per-sample gradient norms", c.Label())
	}
	if flagSet(fs, "persample-memory") && !c.PerSample() {
		return c, nil, f, usagef("--persample-memory: %s forms no per-sample gradients", c.Label())
	}
	switch {
	case f.out == "":
		return c, nil, f, usagef("--out is empty")
	case f.resume && f.restart:
		return c, nil, f, usagef("--resume and --restart exclude each other")
	case world.Size() > max(c.Accum, 1) && c.MicroBatch == 0:
		return c, nil, f, usagef("--accum %d: %d ranks share a step's micro-batches, so it needs at least %d (or, with poisson sampling, --micro-batch)", c.Accum, world.Size(), world.Size())
	}
	if d == nil {
		var err error
		if d, err = loadImages(data); err != nil {
			return c, nil, f, err
		}
	}
	return c, d, f, computeFeatures(c, d, f.featuresCache)
}

// imageMicroBatch gives --micro-batch the meaning it has in train gpt,
// the images of a micro-batch (the most it holds), under shuffle sampling
// too: a batch of --batch images is then cut into ⌈batch/micro-batch⌉
// micro-batches (Config.Accum); Poisson batches, of varying size, read it
// as Config.MicroBatch.
func imageMicroBatch(fs *flag.FlagSet, c *images.Config) error {
	poisson := c.Sampling == images.SamplingPoisson || c.Sampling == "" && c.DPSGD()
	switch {
	case !flagSet(fs, "micro-batch") || poisson || c.MicroBatch <= 0:
		return nil // Validate refuses a negative one
	case flagSet(fs, "accum"):
		return usagef("--micro-batch and --accum exclude each other: a batch of --batch images is cut into ⌈batch/micro-batch⌉ micro-batches, or into --accum")
	}
	c.Accum = (c.Batch + c.MicroBatch - 1) / c.MicroBatch
	c.MicroBatch = 0
	return nil
}
