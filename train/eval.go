package train

import (
	"fmt"
	"math"

	"github.com/psclip/psclip/nn"
)

// Eval is a model's loss and accuracy over a set of batches.
type Eval struct {
	// Loss is the mean per-sample loss (NaN if any sample's is not finite).
	Loss float64
	// Accuracy is the fraction of targets whose class has the largest
	// output (the first of equal ones), over every target of every batch.
	// A row of outputs with a NaN predicts no class: its target counts as
	// wrong, so a model that outputs NaN scores 0, not the accuracy of
	// always answering class 0.
	Accuracy float64
	// Samples and Targets count the batches' samples and targets (one per
	// sample for [B,C] outputs, one per position for [B,T,V]; one per
	// output value for float targets).
	Samples, Targets int
}

// Evaluate runs model on the batches in evaluation mode (dropout off, no
// gradients) and returns its mean loss and accuracy. The batches are checked
// as Step checks them (a *BatchError or ErrNoBatches), and may differ in size
// but not in sample shape. Targets are class indices, as for Loss.
func Evaluate(model nn.Layer, loss Loss, batches ...Batch) (Eval, error) {
	return evaluate(model, &Config{Loss: loss}, batches)
}

// EvaluateFloat is Evaluate for float targets (Batch.T, FloatLoss): the
// mean loss, with Accuracy NaN (there are no classes to be right about).
func EvaluateFloat(model nn.Layer, loss FloatLoss, batches ...Batch) (Eval, error) {
	return evaluate(model, &Config{FloatLoss: loss}, batches)
}

// evaluate is Evaluate with cfg's loss.
func evaluate(model nn.Layer, cfg *Config, batches []Batch) (Eval, error) {
	float := cfg.FloatLoss != nil
	_, guard, err := check(model, batches, float)
	if err != nil {
		return Eval{}, err
	}
	var ctx nn.Context // Train false: dropout is the identity
	var ev Eval
	var lossSum float64
	var correct int
	for j, b := range batches {
		out, err := forward(&ctx, model, b.X, guard)
		if err != nil {
			return Eval{}, &BatchError{Batch: j, Err: err}
		}
		losses, _, err := cfg.loss(out, b)
		if err != nil {
			return Eval{}, &BatchError{Batch: j, Err: err}
		}
		for _, l := range losses {
			lossSum += float64(l)
		}
		ev.Samples += len(losses)
		if float {
			ev.Targets += len(b.T)
			continue
		}
		c := out.Dim(-1)
		if len(b.Y)*c != out.Len() {
			return Eval{}, &BatchError{Batch: j, Err: fmt.Errorf("%d targets for an output %v", len(b.Y), out)}
		}
		for r, y := range b.Y {
			if argmax(out.Data[r*c:(r+1)*c]) == int(y) {
				correct++
			}
		}
		ev.Targets += len(b.Y)
	}
	ev.Loss = lossSum / float64(ev.Samples)
	ev.Accuracy = float64(correct) / float64(ev.Targets)
	if float {
		ev.Accuracy = math.NaN()
	}
	if math.IsInf(ev.Loss, 0) {
		ev.Loss = math.NaN()
	}
	return ev, nil
}

// argmax returns the index of row's largest value (the first of equal
// ones), or -1 if row holds a NaN: a NaN output predicts no class.
func argmax(row []float32) int {
	best := 0
	for k, v := range row {
		switch {
		case v != v:
			return -1
		case v > row[best]:
			best = k
		}
	}
	return best
}
