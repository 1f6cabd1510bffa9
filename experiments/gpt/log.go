package gpt

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/psclip/psclip/internal/atomicfile"
	"github.com/psclip/psclip/internal/stats"
)

// LogFile is the name of the JSON-lines log in a run's output directory.
const LogFile = "log.jsonl"

// Float is a float64 that JSON-encodes NaN and ±Inf as null (and decodes
// null as NaN), so that a diverged run still writes valid JSON.
type Float = stats.Float

// RunRecord is the first line of a run's log: the configuration and the
// threshold mean gradients are clipped to (Config.ClipThreshold: each
// micro-batch's g_j in micro-batch mode, the accumulated ḡ in global mode,
// each sequence's g_i in per-sample mode; null without clipping). A resumed
// run writes none, so that its log is that of an uninterrupted run.
type RunRecord struct {
	Step          int    `json:"step"` // always 0
	Config        Config `json:"config"`
	ClipThreshold Float  `json:"clip_threshold"`
}

// StepRecord is the log line of one training step.
type StepRecord struct {
	Step int   `json:"step"` // steps completed, including this one
	LR   Float `json:"lr"`
	// Loss is the mean training loss of the step's finite samples.
	Loss Float `json:"loss"`
	// GradNorm is the norm the clip saw (train.Stats.GradNorm): the
	// accumulated gradient's (global), the mean of the micro-batch shares'
	// g_j/K (micro-batch, nanogpt convention) or of their mean gradients'
	// (mean convention).
	GradNorm Float `json:"grad_norm"`
	// ClippedBatches counts clipped gradients (0 or 1 in global mode, up to
	// --accum in micro-batch mode); ClippedSamples and DroppedSamples count
	// sequences clipped or left out as non-finite in per-sample mode.
	ClippedBatches int `json:"clipped_batches"`
	ClippedSamples int `json:"clipped_samples"`
	DroppedSamples int `json:"dropped_samples"`
	// SkippedBatches counts micro-batches left out as non-finite; Skipped
	// says that the step made no update at all.
	SkippedBatches int     `json:"skipped_batches"`
	Skipped        bool    `json:"skipped"`
	TokensPerSec   float64 `json:"tokens_per_s"`
	Elapsed        float64 `json:"elapsed_s"`
	// PHat and SigmaHat are the automatic threshold's tail estimates after
	// the step (--ps-estimator ps-clip-auto, or --alpha or --beta auto):
	// Hill's p̂ over its window of recent per-sample norms and σ̂, their
	// moment of order β, which is α when α is automatic. Gamma is
	// ps-clip-quantile's threshold. Null for the other estimators, and p̂,
	// σ̂ during the warm-up.
	PHat     Float `json:"p_hat"`
	SigmaHat Float `json:"sigma_hat"`
	Gamma    Float `json:"gamma"`
	// SampleNorms are the step's per-sample gradient norms, in batch order
	// (RunOptions.LogNorms; null for a non-finite one), as "psclip tail
	// --from" reads them (experiments/tail.NormsRecord).
	SampleNorms []Float `json:"sample_norms,omitempty"`
}

// EvalRecord is the log line of one validation-loss estimate.
type EvalRecord struct {
	Step    int     `json:"step"`
	ValLoss Float   `json:"val_loss"`
	Elapsed float64 `json:"elapsed_s"`
}

// logLine decodes either kind of record.
type logLine struct {
	Step    int    `json:"step"`
	ValLoss *Float `json:"val_loss"`
}

// EvalPoint is one point of a validation-loss curve.
type EvalPoint struct {
	Step    int   `json:"step"`
	ValLoss Float `json:"val_loss"`
}

// logWriter appends records to a run's log.jsonl.
type logWriter struct {
	f *os.File
}

// openLog opens dir/log.jsonl for appending. Fresh runs start an empty log.
// A resumed run first rewrites it atomically without the records past step
// done (written after the checkpoint it resumes from, and to be written
// again) or a last line cut by a crash; it returns the evaluations kept.
func openLog(dir string, done int, resume bool) (*logWriter, []EvalPoint, error) {
	path := filepath.Join(dir, LogFile)
	var curve []EvalPoint
	if resume {
		var kept []byte
		var err error
		kept, curve, err = keepLog(path, done)
		if err != nil {
			return nil, nil, err
		}
		if err := atomicfile.WriteFile(path, kept); err != nil {
			return nil, nil, err
		}
	} else if err := atomicfile.WriteFile(path, nil); err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil, nil, err
	}
	return &logWriter{f: f}, curve, nil
}

// keepLog returns the lines of the log at path with step ≤ done and the
// evaluations among them. A missing log keeps nothing.
func keepLog(path string, done int) ([]byte, []EvalPoint, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	var kept bytes.Buffer
	var curve []EvalPoint
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l logLine
		if json.Unmarshal(sc.Bytes(), &l) != nil || l.Step > done {
			continue
		}
		if l.ValLoss != nil {
			curve = append(curve, EvalPoint{Step: l.Step, ValLoss: *l.ValLoss})
		}
		kept.Write(sc.Bytes())
		kept.WriteByte('\n')
	}
	return kept.Bytes(), curve, sc.Err()
}

// write appends one record as a line.
func (w *logWriter) write(rec any) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	_, err = w.f.Write(append(b, '\n'))
	return err
}

func (w *logWriter) Close() error { return w.f.Close() }
