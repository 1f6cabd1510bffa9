package table

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	tabledata "github.com/psclip/psclip/data/table"
	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/privacy"
	"github.com/psclip/psclip/run"
	"github.com/psclip/psclip/setting"
)

// Config is one training run. The zero value is not valid; start from
// Default.
type Config struct {
	// Spec is the gradient estimator and its settings, as the image
	// trainer's: its JSON keys are the configuration's own.
	estimator.Spec

	// Target is the header of the column to predict.
	Target string `json:"target"`
	// Task is TaskClassification or TaskRegression; "" infers it from the
	// target column (data/table.Infer) or from Loss, and New sets it.
	Task string `json:"task"`
	// Loss is LossCrossEntropy or LossBCE for classification (binary
	// cross-entropy: two classes, one output), LossMSE or LossHuber (with
	// threshold HuberDelta) for regression; "" is cross-entropy or MSE.
	Loss       string  `json:"loss"`
	HuberDelta float64 `json:"huber_delta,omitempty"`
	// Hidden are the MLP's hidden widths (models.NewMLP, ReLU); none is a
	// linear model.
	Hidden []int `json:"hidden"`
	// Standardize is StandardizeFit (each feature to mean 0 and standard
	// deviation 1 by the training split's statistics, applied to every
	// split) or StandardizeNone (the features as the file holds them);
	// "" is fit, none for dp-sgd, whose inputs may depend on no training
	// record beyond what ε covers. A regression's targets are trained on
	// as the file holds them: its losses are in their units.
	Standardize string `json:"standardize"`

	// SGD with momentum and weight decay at a constant learning rate.
	LR          float64 `json:"lr"`
	Momentum    float64 `json:"momentum"`
	WeightDecay float64 `json:"weight_decay"`

	// Batch is the records of a step: a shuffled epoch's batches, or
	// dp-sgd's expected Poisson sample (q = Batch/N); an epoch is
	// ⌈N/Batch⌉ steps either way.
	Batch  int `json:"batch"`
	Epochs int `json:"epochs"`
	// MicroBatch bounds the records computed at once (memory): a step's
	// batch is cut into ⌈B/MicroBatch⌉ micro-batches (0: one).
	MicroBatch int `json:"micro_batch,omitempty"`
	// ValFraction is the share of the file's rows held out for
	// validation, at random from Seed: ⌊ValFraction·n⌋ of n, in [0, 1);
	// 0 holds out none.
	ValFraction float64 `json:"val_fraction"`

	// Seed determines the split, the initialisation and the shuffled
	// order; never a Poisson sample.
	Seed uint64 `json:"seed"`
	// MaxBadSteps stops the run after that many consecutive steps without
	// an update because of non-finite gradients (0: never).
	MaxBadSteps int `json:"max_bad_steps"`

	// Delta is dp-sgd's δ, below 1/N (N training records); unset for the
	// other estimators.
	Delta float64 `json:"delta,omitempty"`
	// ReleaseUnprotected, for dp-sgd, writes what a private run withholds
	// (run.Released): the training and validation loss and accuracy,
	// per-sample norms and clipped counts. Every output then lists them
	// as "unprotected", and the run is not private.
	ReleaseUnprotected bool `json:"release_unprotected,omitempty"`
}

// The values of Config.Task, Loss and Standardize.
const (
	TaskClassification = "classification"
	TaskRegression     = "regression"

	LossCrossEntropy = "cross-entropy"
	LossBCE          = "bce"
	LossMSE          = "mse"
	LossHuber        = "huber"

	StandardizeFit  = "fit"
	StandardizeNone = "none"
)

// Losses lists Config.Loss's values.
var Losses = []string{LossCrossEntropy, LossBCE, LossMSE, LossHuber}

// Default is a small MLP (one hidden layer of 64) trained with plain SGD:
// learning rate 0.05, momentum 0.9, batch 64, 20 epochs, a fifth of the
// rows for validation.
func Default() Config {
	return Config{
		Spec:   estimator.Spec{Estimator: "sgd"},
		Hidden: []int{64}, LR: 0.05, Momentum: 0.9, Batch: 64, Epochs: 20, ValFraction: 0.2, Seed: 1,
	}
}

// DPSGD reports whether the run trains with DP-SGD and accounts its ε.
func (c *Config) DPSGD() bool { return c.Estimator == "dp-sgd" }

// Label names the run's method in messages: the estimator's label.
func (c *Config) Label() string { return c.Spec.Label() }

// privacy is what the run layer must know of a dp-sgd run (its secret,
// of NoiseSeed if fixed, and its release); nil without dp-sgd.
func (c *Config) privacy() *run.Privacy {
	if !c.DPSGD() {
		return nil
	}
	return &run.Privacy{Secret: privacy.NewSecret(c.NoiseSeed), ReleaseUnprotected: c.ReleaseUnprotected}
}

// taskOf is the task a loss is for, "" for none.
func taskOf(loss string) string {
	switch loss {
	case LossCrossEntropy, LossBCE:
		return TaskClassification
	case LossMSE, LossHuber:
		return TaskRegression
	}
	return ""
}

// resolve settles the defaults that depend on the data: the task (the
// loss's, else the table's), the loss and the standardisation.
func (c *Config) resolve(task tabledata.Task) {
	if c.Task == "" {
		c.Task = taskOf(c.Loss)
	}
	if c.Task == "" {
		c.Task = task.String()
	}
	if c.Loss == "" {
		c.Loss = LossCrossEntropy
		if c.Task == TaskRegression {
			c.Loss = LossMSE
		}
	}
	if c.Standardize == "" {
		c.Standardize = StandardizeFit
		if c.DPSGD() {
			c.Standardize = StandardizeNone
		}
	}
}

// readTask is the task data/table reads the target column as: the
// configuration's (the loss's), or inferred.
func (c *Config) readTask() tabledata.Task {
	switch cmp.Or(c.Task, taskOf(c.Loss)) {
	case TaskClassification:
		return tabledata.Classification
	case TaskRegression:
		return tabledata.Regression
	}
	return tabledata.Infer
}

// Validate checks the configuration: the estimator's Spec, and every
// other setting in the precision it is used in. Its errors are
// *setting.Error values naming the field. Task, Loss and Standardize may
// be "" (New settles them from the data).
func (c *Config) Validate() error {
	if err := c.Spec.Validate(); err != nil {
		return err
	}
	if err := setting.First(
		setting.Positive("Batch", c.Batch),
		setting.Positive("Epochs", c.Epochs),
		setting.NonNegative("MicroBatch", c.MicroBatch),
		setting.NonNegative("MaxBadSteps", c.MaxBadSteps),
		setting.Positive32("LR", c.LR),
		setting.Fraction("Momentum", c.Momentum),
		setting.NonNegative32("WeightDecay", c.WeightDecay),
		setting.Fraction("ValFraction", c.ValFraction),
	); err != nil {
		return err
	}
	switch {
	case c.Target == "":
		return setting.Errorf("Target", `""`, "the header of the column to predict")
	case c.Task != "" && c.Task != TaskClassification && c.Task != TaskRegression:
		return setting.Errorf("Task", strconv.Quote(c.Task), "%s or %s", TaskClassification, TaskRegression)
	case c.Loss != "" && !slices.Contains(Losses, c.Loss):
		return setting.Errorf("Loss", strconv.Quote(c.Loss), "one of %s", strings.Join(Losses, ", "))
	case c.Loss != "" && c.Task != "" && taskOf(c.Loss) != c.Task:
		return setting.Errorf("Loss", strconv.Quote(c.Loss), "a %s loss (%s): %s is a %s loss", c.Task, strings.Join(lossesOf(c.Task), " or "), c.Loss, taskOf(c.Loss))
	case c.HuberDelta != 0 && c.Loss != LossHuber:
		return setting.Unread("HuberDelta", c.HuberDelta, "the threshold of --loss "+LossHuber)
	case c.Loss == LossHuber && c.HuberDelta == 0:
		return setting.Errorf("HuberDelta", 0, "a positive threshold for the Huber loss")
	case c.Standardize != "" && c.Standardize != StandardizeFit && c.Standardize != StandardizeNone:
		return setting.Errorf("Standardize", strconv.Quote(c.Standardize), "%s or %s", StandardizeFit, StandardizeNone)
	case c.DPSGD() && c.Standardize == StandardizeFit:
		return setting.Errorf("Standardize", strconv.Quote(c.Standardize), "%s for dp-sgd: the training records' statistics would be a release the accountant does not count", StandardizeNone)
	case c.Delta != 0 && !c.DPSGD():
		return setting.Unread("Delta", c.Delta, "δ is dp-sgd's")
	case c.ReleaseUnprotected && !c.DPSGD():
		return setting.Unread("ReleaseUnprotected", true, "a run without dp-sgd releases everything")
	case c.DPSGD() && !(c.Delta > 0 && c.Delta < 1):
		return setting.Errorf("Delta", c.Delta, "a δ strictly between 0 and 1 (below 1/N) for dp-sgd")
	}
	if c.Loss == LossHuber {
		if err := setting.Positive32("HuberDelta", c.HuberDelta); err != nil {
			return err
		}
	}
	for _, h := range c.Hidden {
		if h < 1 {
			return setting.Errorf("Hidden", fmt.Sprint(c.Hidden), "widths of at least 1")
		}
	}
	return nil
}

// lossesOf lists the losses of a task.
func lossesOf(task string) []string {
	var l []string
	for _, x := range Losses {
		if taskOf(x) == task {
			l = append(l, x)
		}
	}
	return l
}
