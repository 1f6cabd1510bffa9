package gpt

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/run"
	"github.com/psclip/psclip/tensor"
	"github.com/psclip/psclip/train"
)

// poisoner wraps a model and turns the logits of one sequence of a chosen
// training forward pass into NaN, as a corrupted sample would: its loss and
// its whole gradient are NaN.
type poisoner struct {
	nn.Layer
	calls   int // training forward passes so far
	at, seq int // poison sequence seq of training forward pass at
}

func (p *poisoner) Forward(ctx *nn.Context, x *tensor.Tensor) *tensor.Tensor {
	out := p.Layer.Forward(ctx, x)
	if !ctx.Train {
		return out
	}
	if p.calls == p.at {
		n := out.Len() / out.Dim(0)
		for i := p.seq * n; i < (p.seq+1)*n; i++ {
			out.Data[i] = float32(math.NaN())
		}
	}
	p.calls++
	return out
}

// TestPoisonedSequenceNeverReachesWeights poisons one sequence of one
// micro-batch at step 4 in every clip mode: per-sample clipping drops that
// sequence and updates from the others; the other modes, whose plain
// backward pass cannot separate it, leave out its micro-batch. The step is
// not skipped, the log says what was left out, and no weight or AdamW
// moment becomes non-finite.
func TestPoisonedSequenceNeverReachesWeights(t *testing.T) {
	corpus := testCorpus(t)
	const step = 4 // 1-based step of the poisoned micro-batch
	for _, tc := range []struct {
		mode                    ClipMode
		dropped, skippedBatches int
	}{
		{ClipPerSample, 1, 0},
		{ClipGlobal, 0, 1},
		{ClipMicroBatch, 0, 1},
		{ClipNone, 0, 1},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			cfg := tinyConfig(tc.mode)
			dir := t.TempDir()
			r, err := New(cfg, corpus, RunOptions{Out: dir})
			if err != nil {
				t.Fatal(err)
			}
			// The same trainer New builds, on the poisoned model: micro-batch
			// 1 of the step, its sequence 1.
			est, scope, err := cfg.ClipMode.Estimator(cfg.Clip)
			if err != nil {
				t.Fatal(err)
			}
			p := &poisoner{Layer: r.model, at: (step-1)*cfg.Accum + 1, seq: 1}
			r.trainer, err = train.New(train.Config{Model: p, Loss: nn.CrossEntropy, Estimator: est, Optimizer: r.opt,
				Scope: scope, Rand: rand.New(r.dropout)})
			if err != nil {
				t.Fatal(err)
			}
			s, err := r.Train(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if p.calls <= p.at {
				t.Fatalf("%d training forward passes: the poison was never applied", p.calls)
			}
			if s.SkippedSteps != 0 {
				t.Errorf("%d skipped steps, want 0: one bad sequence must not cost the whole step", s.SkippedSteps)
			}
			for _, p := range r.model.Params() {
				allFinite(t, p.Name, p.Value.Data)
			}
			for name, m := range r.opt.State().Tensors {
				allFinite(t, "optimizer "+name, m.Data)
			}
			b, err := os.ReadFile(filepath.Join(dir, run.LogFile))
			if err != nil {
				t.Fatal(err)
			}
			var rec *StepRecord
			for _, l := range strings.Split(string(b), "\n") {
				if x := readStepRecord(l); x != nil && x.Step == step {
					rec = x
				}
			}
			switch {
			case rec == nil:
				t.Fatalf("no log record of step %d:\n%s", step, b)
			case rec.DroppedSamples != tc.dropped || rec.SkippedBatches != tc.skippedBatches || rec.Skipped:
				t.Errorf("log of step %d: %d dropped sequences, %d skipped micro-batches, skipped %v; want %d, %d, false",
					step, rec.DroppedSamples, rec.SkippedBatches, rec.Skipped, tc.dropped, tc.skippedBatches)
			case !finite(float64(rec.Loss)) || !finite(float64(rec.GradNorm)):
				t.Errorf("log of step %d: loss %v, gradient norm %v; want the finite figures of the sequences used", step, rec.Loss, rec.GradNorm)
			}
		})
	}
}

// allFinite fails the test if x holds a NaN or an infinity.
func allFinite(t *testing.T, what string, x []float32) {
	t.Helper()
	for i, v := range x {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			t.Fatalf("%s[%d] = %v", what, i, v)
		}
	}
}

// readStepRecord decodes a log line that is a step record, and returns nil
// for any other line.
func readStepRecord(line string) *StepRecord {
	if !strings.Contains(line, `"lr":`) {
		return nil
	}
	var r StepRecord
	if json.Unmarshal([]byte(line), &r) != nil {
		return nil
	}
	return &r
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
