package main

import (
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"

	tabledata "github.com/psclip/psclip/data/table"
	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/experiments/table"
)

func init() {
	register(&command{
		name:  "train table",
		short: "train an MLP on a CSV table of numeric features: classification or regression, with any estimator including dp-sgd",
		run:   runTrainTable,
		flags: map[string]string{"Hidden": "hidden", "Target": "target", "Task": "task", "Loss": "loss", "HuberDelta": "huber-delta", "Standardize": "standardize"},
	})
}

func runTrainTable(fs *flag.FlagSet, args []string) error {
	c, d, f, err := setupTrainTable(fs, args)
	if err != nil {
		return err
	}
	r, err := table.New(c, d, table.RunOptions{Out: f.out, Resume: f.resume, Restart: f.restart, Progress: stderr, Label: c.Label(), LogNorms: f.logNorms})
	if err != nil {
		return err
	}
	c = r.Config()
	if f.inferred {
		fmt.Fprintf(stderr, "task: %s, inferred from column %q (--task to choose)\n", c.Task, c.Target)
	}
	ctx, stop := interruptContext()
	defer stop()
	s, err := r.Train(ctx)
	if err != nil {
		return err
	}
	p := r.Privacy()
	private := p != nil && !p.ReleaseUnprotected
	if err := s.WriteTable(stdout, private); err != nil {
		return err
	}
	figures := func(splits ...string) string {
		var parts []string
		for _, sp := range splits {
			loss, acc := s.TrainLoss, s.TrainAcc
			switch sp {
			case "validation":
				loss, acc = s.ValLoss, s.ValAcc
			case "test":
				loss, acc = s.TestLoss, s.TestAcc
			}
			if loss != loss {
				continue // the run has no such split
			}
			part := fmt.Sprintf("%s %s %.4g", sp, c.Loss, float64(loss))
			if acc == acc {
				part += fmt.Sprintf(", %.2f %% accuracy", 100*float64(acc))
			}
			parts = append(parts, part)
		}
		return fmt.Sprintf("%s, %s, %d epochs: %s; %.1f min; %s in %s", c.Label(), c.Task, s.Epochs, strings.Join(parts, "; "), s.Seconds/60, runFileNames, f.out)
	}
	full := figures("train", "validation", "test")
	if p == nil {
		fmt.Fprintln(stdout, full)
		return nil
	}
	line := figures("test")
	fmt.Fprintf(stdout, "privacy: ε = %.4g at δ = %g (RDP accountant, Balle et al. 2020 conversion)\n", float64(*s.Epsilon), s.Delta)
	return printRelease(stdout, p, s, line, full)
}

// trainTableFlags are the flags of train table outside its configuration.
type trainTableFlags struct {
	out                       string
	resume, restart, logNorms bool
	inferred                  bool // the task is the data's
}

// setupTrainTable reads the flags and the data of train table.
func setupTrainTable(fs *flag.FlagSet, args []string) (table.Config, *table.Data, trainTableFlags, error) {
	c := table.Default()
	var (
		data, test string
		f          trainTableFlags
		targetEps  float64
	)
	hidden := intList(c.Hidden)
	fs.StringVar(&data, "data", "", "CSV `file` with a header row: the --target column and numeric feature columns")
	fs.StringVar(&test, "test", "", "optional CSV `file` of test rows, with --data's columns, evaluated after every epoch (a private run's released figures)")
	fs.StringVar(&c.Target, "target", "", "the header of the column to predict (required)")
	fs.StringVar(&c.Task, "task", "", "classification or regression (default: the --loss's, else inferred: regression when every target is a number and some has a fraction or there are more than "+strconv.Itoa(tabledata.MaxInferredClasses)+" distinct ones)")
	fs.StringVar(&c.Loss, "loss", "", "loss: "+strings.Join(table.Losses, ", ")+" (bce: binary cross-entropy, two classes, one output); default: cross-entropy for classification, mse for regression")
	fs.Float64Var(&c.HuberDelta, "huber-delta", 0, "--loss huber: the threshold δ between the quadratic and the linear part (default 1)")
	fs.Var(&hidden, "hidden", "comma-separated hidden widths of the MLP (ReLU); empty: a linear model")
	fs.StringVar(&c.Standardize, "standardize", "", "features to inputs: fit (mean 0, standard deviation 1 by the training split's statistics) or none; default fit, none for dp-sgd")
	fs.Float64Var(&c.LR, "lr", c.LR, "learning rate (constant)")
	fs.Float64Var(&c.Momentum, "momentum", c.Momentum, "SGD momentum")
	fs.Float64Var(&c.WeightDecay, "weight-decay", c.WeightDecay, "SGD weight decay (L2, as torch.optim.SGD)")
	fs.IntVar(&c.Batch, "batch", c.Batch, "rows per step (dp-sgd: the expected Poisson sample)")
	fs.IntVar(&c.Epochs, "epochs", c.Epochs, "training epochs of ⌈N/batch⌉ steps")
	fs.IntVar(&c.MicroBatch, "micro-batch", c.MicroBatch, "rows per micro-batch, the most one holds, which bounds memory (0: the batch in one)")
	fs.Float64Var(&c.ValFraction, "val-fraction", c.ValFraction, "hold out this share of the rows for validation, in [0, 1) (0: none)")
	fs.IntVar(&c.MaxBadSteps, "max-bad-steps", c.MaxBadSteps, "stop after this many consecutive steps with non-finite gradients (0: never)")
	addSpecFlags(fs, &c.Spec, cnnSpecFields, nil)
	fs.Lookup("clip").Usage += "; default: 1 for clip-sgd, ps-clip-sgd and dp-sgd"
	fs.Float64Var(&targetEps, "target-epsilon", 0, "dp-sgd: the ε to spend at --delta over the whole run; σ is chosen for it (RDP accountant) instead of --noise-multiplier")
	fs.Float64Var(&c.Delta, "delta", c.Delta, "dp-sgd: δ of the (ε, δ) guarantee, below 1/N (N training rows)")
	fs.BoolVar(&c.ReleaseUnprotected, "release-unprotected", c.ReleaseUnprotected, releaseUsage)
	fs.Uint64Var(&c.Seed, "seed", c.Seed, "seed of the validation split, the initialisation and the shuffled order")
	fs.StringVar(&f.out, "out", "out-table", "output `directory`: log.jsonl, the checkpoint and result.json")
	fs.BoolVar(&f.resume, "resume", false, "continue the run checkpointed in --out (--epochs may grow)")
	fs.BoolVar(&f.restart, "restart", false, restartUsage)
	fs.BoolVar(&f.logNorms, "log-norms", false, "also log every step's per-sample gradient norms (per-sample estimators only)")
	if err := parse(fs, args); err != nil {
		return c, nil, f, err
	}
	c.Hidden = hidden
	if !flagSet(fs, "clip") && slices.Contains([]string{"clip-sgd", "ps-clip-sgd", "dp-sgd"}, c.Estimator) {
		c.Clip = 1
	}
	if c.Loss == table.LossHuber && !flagSet(fs, "huber-delta") {
		c.HuberDelta = 1
	}
	if !slices.Contains(estimator.Names, c.Estimator) {
		return c, nil, f, c.Spec.Validate() // names the estimators
	}
	if name := unreadFlag(fs, nil, cnnSpecFields, c.Reads); name != "" {
		return c, nil, f, usagef("--%s does not apply to --estimator %s (%s)", name, c.Estimator, c.Label())
	}
	c.Spec = c.Trim()
	switch {
	case data == "":
		return c, nil, f, usagef("--data is required (a CSV file with a header row)")
	case c.Target == "":
		return c, nil, f, usagef("--target is required (the header of the column to predict)")
	case f.out == "":
		return c, nil, f, usagef("--out is empty")
	case f.resume && f.restart:
		return c, nil, f, usagef("--resume and --restart exclude each other")
	case f.logNorms && !c.PerSample():
		return c, nil, f, usagef("--log-norms: %s computes no per-sample gradient norms", c.Label())
	case flagSet(fs, "target-epsilon") && !c.DPSGD():
		return c, nil, f, usagef("--target-epsilon does not apply to --estimator %s (%s)", c.Estimator, c.Label())
	case flagSet(fs, "target-epsilon") && flagSet(fs, "noise-multiplier"):
		return c, nil, f, usagef("--target-epsilon and --noise-multiplier exclude each other: σ is chosen for the ε")
	}
	if err := c.Validate(); err != nil && !flagSet(fs, "target-epsilon") {
		return c, nil, f, err
	}
	f.inferred = c.Task == "" && c.Loss == ""
	d, err := table.LoadData(data, test, c)
	if err != nil {
		return c, nil, f, usage(err)
	}
	if flagSet(fs, "target-epsilon") {
		if c.NoiseMultiplier, err = d.NoiseMultiplier(c, targetEps); err != nil {
			return c, nil, f, err
		}
		fmt.Fprintf(stderr, "dp-sgd: noise multiplier σ = %g for ε = %g at δ = %g\n", c.NoiseMultiplier, targetEps, c.Delta)
	}
	return c, d, f, nil
}

// intList is a flag.Value for comma-separated non-negative integers; ""
// is none.
type intList []int

func (l *intList) String() string {
	if l == nil {
		return ""
	}
	s := make([]string, len(*l))
	for i, v := range *l {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, ",")
}

func (l *intList) Set(v string) error {
	var out intList
	if strings.TrimSpace(v) != "" {
		for _, f := range strings.Split(v, ",") {
			x, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || x < 1 {
				return fmt.Errorf("%q is not a positive width", f)
			}
			out = append(out, x)
		}
	}
	*l = out
	return nil
}
