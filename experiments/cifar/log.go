package cifar

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

// LogFile is the name of the JSON-lines log in a run's output directory:
// one EpochRecord per completed epoch and, with RunOptions.LogNorms, a line
// of per-sample norms after every step, in the order they happened.
const LogFile = "log.jsonl"

// Float is a float64 that JSON-encodes NaN and ±Inf as null (and decodes
// null as NaN), so that a diverged run still writes valid JSON.
type Float = stats.Float

// EpochRecord is the log line of one training epoch. Accuracies are
// fractions in [0, 1].
type EpochRecord struct {
	Epoch int `json:"epoch"` // epochs completed, including this one
	// TrainLoss and TrainAcc are the running loss and accuracy over the
	// epoch's training batches as the model saw them (augmented, with
	// dropout, before each step's update), as PyTorch training loops
	// report them; samples with a non-finite loss are left out of the loss.
	TrainLoss Float `json:"train_loss"`
	TrainAcc  Float `json:"train_acc"`
	ValLoss   Float `json:"val_loss"`
	ValAcc    Float `json:"val_acc"`
	// Elapsed is the run's wall time up to the end of this epoch,
	// evaluations included; EpochSeconds is this epoch's share.
	Elapsed      float64 `json:"elapsed_s"`
	EpochSeconds float64 `json:"epoch_s"`
	// ImagesPerSec is the training throughput of the epoch, evaluation
	// excluded.
	ImagesPerSec float64 `json:"img_per_s"`
	// MeanSampleNorm is the average per-sample gradient norm over the
	// epoch's samples (the paper's appendix figure); null for estimators
	// that do not compute per-sample norms.
	MeanSampleNorm Float `json:"mean_sample_norm"`
	// ClippedPerBatch is the average number of samples per batch whose
	// gradient per-sample clipping shrank.
	ClippedPerBatch float64 `json:"clipped_per_batch"`
	// ClippedStepFraction is the fraction of steps whose batch gradient
	// Clip-SGD (or normalized SGD) shrank.
	ClippedStepFraction float64 `json:"clipped_step_fraction"`
	// MeanGradNorm is the average norm of the update direction before the
	// batch-level clip (what Clip-SGD compares with γ) over finite steps.
	MeanGradNorm Float `json:"mean_grad_norm"`
	// SkippedSteps made no update (Clip-SGD and SGD skip a batch with a
	// non-finite sample); DroppedSamples were left out of the average by a
	// per-sample estimator because their gradient was not finite.
	SkippedSteps   int `json:"skipped_steps"`
	DroppedSamples int `json:"dropped_samples"`
	// PHat and SigmaHat are the automatic threshold's tail estimates at the
	// end of the epoch (ps-clip-auto, ps-clip-sgd with --alpha or --beta
	// auto): Hill's p̂ over its window of recent per-sample norms and σ̂,
	// their moment of order β (p̂ clamped to [1.05, 2], or the fixed β),
	// which is α when α is automatic. Null for the other estimators and
	// during the warm-up.
	PHat     Float `json:"p_hat"`
	SigmaHat Float `json:"sigma_hat"`
	// Gamma is ps-clip-quantile's threshold at the end of the epoch; null
	// for the other estimators.
	Gamma Float `json:"gamma"`
}

// normsRecord is the log line of one step's per-sample norms
// (RunOptions.LogNorms), in the form "psclip tail --from" reads
// (experiments/tail.NormsRecord). Step counts the steps done, this one
// included.
type normsRecord struct {
	Step        int     `json:"step"`
	SampleNorms []Float `json:"sample_norms"`
}

// openLog opens dir/log.jsonl for appending. A fresh run starts an empty
// log; a resumed run, checkpointed after step steps of perEpoch per epoch,
// first rewrites it atomically without the lines written after that
// checkpoint or a last line cut by a crash, and returns the epoch records
// kept.
func openLog(dir string, step, perEpoch int, resume bool) (*os.File, []EpochRecord, error) {
	path := filepath.Join(dir, LogFile)
	var kept []byte
	var curve []EpochRecord
	if resume {
		var err error
		if kept, curve, err = keepLog(path, step, perEpoch); err != nil {
			return nil, nil, err
		}
	}
	if err := atomicfile.WriteFile(path, kept); err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil, nil, err
	}
	return f, curve, nil
}

// keepLog returns the lines of the log at path up to step steps (the
// records of the epochs done, in sequence, and the norms of the steps
// done) and the epoch records. A missing log keeps nothing.
func keepLog(path string, step, perEpoch int) ([]byte, []EpochRecord, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	var kept bytes.Buffer
	var curve []EpochRecord
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 64<<20) // a norms line of a large batch
	for sc.Scan() {
		var line struct {
			EpochRecord
			Step *int `json:"step"` // only in a norms line
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue
		}
		if line.Step != nil {
			if *line.Step > step {
				continue
			}
		} else {
			r := line.EpochRecord
			if r.Epoch > step/perEpoch || r.Epoch != len(curve)+1 {
				continue
			}
			curve = append(curve, r)
		}
		kept.Write(sc.Bytes())
		kept.WriteByte('\n')
	}
	return kept.Bytes(), curve, sc.Err()
}

// writeLine appends one record to the log as a line.
func writeLine(f *os.File, rec any) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	return err
}
