package main

import (
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/psclip/psclip/dist"
	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/experiments/cifar"
)

func init() {
	register(&command{
		name:  "train cifar",
		short: "train AlexNet-CIFAR with SGD, Clip-SGD or PS-Clip-SGD (constant, increasing or automatic threshold)",
		run:   runTrainCIFAR,
		ranks: true,
	})
}

// cifarFlags binds the flags that "train cifar" and "experiment cifar"
// share to a configuration, whose current values are the defaults.
func cifarFlags(fs *flag.FlagSet, c *cifar.Config, data *string) {
	fs.StringVar(data, "data", "", "CIFAR-100 or CIFAR-10 binary `directory` (or one written by 'psclip data synth-cifar')")
	fs.Float64Var(&c.LR, "lr", c.LR, "learning rate (constant)")
	fs.Float64Var(&c.Momentum, "momentum", c.Momentum, "SGD momentum")
	fs.Float64Var(&c.WeightDecay, "weight-decay", c.WeightDecay, "SGD weight decay (L2, as torch.optim.SGD)")
	fs.IntVar(&c.Batch, "batch", c.Batch, "images per step")
	fs.IntVar(&c.Accum, "accum", c.Accum, "micro-batches per batch (gradient accumulation; 0: one), which the ranks share under mpirun")
	fs.IntVar(&c.Epochs, "epochs", c.Epochs, "training epochs")
	fs.IntVar(&c.WidthDiv, "width-div", c.WidthDiv, "divide AlexNet's widths by this (1: the paper's model)")
	fs.Float64Var(&c.Dropout, "dropout", c.Dropout, "classifier dropout probability")
	fs.StringVar(&c.Augment, "augment", c.Augment, "training augmentation: "+strings.Join(cifar.Augments, ", "))
	fs.IntVar(&c.MaxBadSteps, "max-bad-steps", c.MaxBadSteps, "stop after this many consecutive steps with non-finite gradients (0: never)")
}

// loadCIFAR reads the data directory; a missing or damaged file is a usage
// error naming the file (and offset).
func loadCIFAR(dir string) (*cifar.Data, error) {
	if dir == "" {
		return nil, usagef("--data is required (a CIFAR binary directory; 'psclip data synth-cifar' writes a synthetic one)")
	}
	d, err := cifar.LoadData(dir)
	if err != nil {
		return nil, usagef("--data: %v", err)
	}
	return d, nil
}

func runTrainCIFAR(fs *flag.FlagSet, args []string) error {
	c, d, f, err := setupTrainCIFAR(fs, args)
	// Under mpirun, a rank whose flags or data are bad must not leave the
	// others waiting: every rank ends with its error.
	if err := dist.AgreeError(world, err); err != nil {
		return err
	}
	run, err := cifar.New(c, d, cifar.RunOptions{Out: f.out, Resume: f.resume, Restart: f.restart, Progress: stderr, Label: c.Label(), LogNorms: f.logNorms, Comm: world})
	if err != nil {
		return err
	}
	ctx, stop := interruptContext()
	defer stop()
	s, err := run.Train(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s, %d epochs: train %.2f %%, validation %.2f %%, test %.2f %% accuracy; %.1f min; %d skipped steps, %d dropped samples; %s in %s\n",
		c.Label(), s.Epochs, 100*float64(s.TrainAcc), 100*float64(s.ValAcc), 100*float64(s.TestAcc), s.Seconds/60,
		s.SkippedSteps, s.DroppedSamples, runFileNames, f.out)
	return nil
}

// trainCIFARFlags are the flags of "train cifar" outside its configuration.
type trainCIFARFlags struct {
	out                       string
	resume, restart, logNorms bool
}

// setupTrainCIFAR reads the flags and the data of "train cifar".
func setupTrainCIFAR(fs *flag.FlagSet, args []string) (cifar.Config, *cifar.Data, trainCIFARFlags, error) {
	c := cifar.Default()
	var (
		data string
		f    trainCIFARFlags
	)
	cifarFlags(fs, &c, &data)
	addSpecFlags(fs, &c.Spec, nil, nil)
	fs.Lookup("clip").Usage += "; default: the paper's, 15 for clip-sgd, 45 for ps-clip-sgd"
	fs.Uint64Var(&c.Seed, "seed", c.Seed, "seed of the split, initialisation, data order, augmentation and dropout")
	fs.StringVar(&f.out, "out", "out-cifar", "output `directory`: log.jsonl, the checkpoint and result.json")
	fs.BoolVar(&f.resume, "resume", false, "continue the run checkpointed in --out (--epochs may grow)")
	fs.BoolVar(&f.restart, "restart", false, restartUsage)
	fs.BoolVar(&f.logNorms, "log-norms", false, "also log every step's per-sample gradient norms (input of 'psclip tail --from OUT/log.jsonl'; per-sample estimators only)")
	if err := parse(fs, args); err != nil {
		return c, nil, f, err
	}
	if !flagSet(fs, "clip") {
		c.Clip = cifar.PaperClip(c.Estimator)
	}
	if !slices.Contains(estimator.Names, c.Estimator) {
		return c, nil, f, c.Spec.Validate() // names the estimators
	}
	// A flag the estimator does not read is refused; the defaults of the
	// settings it does not read are cleared.
	if name := unreadFlag(fs, nil, specFields, c.Reads); name != "" {
		return c, nil, f, usagef("--%s does not apply to --estimator %s (%s)", name, c.Estimator, c.Label())
	}
	c.Spec = c.Trim()
	if err := c.Validate(); err != nil {
		return c, nil, f, err
	}
	if f.logNorms && !c.PerSample() {
		return c, nil, f, usagef("--log-norms: %s computes no per-sample gradient norms", c.Label())
	}
	switch {
	case f.out == "":
		return c, nil, f, usagef("--out is empty")
	case f.resume && f.restart:
		return c, nil, f, usagef("--resume and --restart exclude each other")
	case world.Size() > max(c.Accum, 1):
		return c, nil, f, usagef("--accum %d: %d ranks share a step's micro-batches, so it needs at least %d", c.Accum, world.Size(), world.Size())
	}
	d, err := loadCIFAR(data)
	return c, d, f, err
}
