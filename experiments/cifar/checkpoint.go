package cifar

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/psclip/psclip/checkpoint"
	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/setting"
)

// CheckpointFile is the name of a run's checkpoint in its output directory;
// the one before it is kept as checkpoint.PrevPath(CheckpointFile).
const CheckpointFile = "ckpt.safetensors"

// Keys of a checkpoint's Meta.RNG and Meta.Extra.
const (
	rngDropout = "dropout"
	extraState = "state"
)

// mayDiffer lists the settings a resumed run may change: more epochs extend
// the run (the learning rate is constant), and the bad-step limit only
// decides when to give up.
var mayDiffer = []string{"epochs", "max_bad_steps"}

func (r *Run) ckptPath() string { return filepath.Join(r.opts.Out, CheckpointFile) }

// save writes the checkpoint of the run after r.st.Step steps: weights,
// momentum buffers, the dropout stream, the data-order position (which is
// the iterator's whole state), the epoch's running statistics and an
// adaptive estimator's state. Without
// an output directory there is nowhere to write, and nothing to do.
func (r *Run) save() error {
	if r.opts.Out == "" {
		return nil
	}
	st := r.st
	st.Seconds = r.elapsed()
	var err error
	if st.Estimator, err = estimator.State(r.est); err != nil {
		return err
	}
	js, err := json.Marshal(st)
	if err != nil {
		return err
	}
	meta := checkpoint.Meta{
		Step: st.Step, Epoch: st.Pos.Epoch, Batch: (st.Pos.Index + r.cfg.Batch - 1) / r.cfg.Batch,
		Config: configMap(r.cfg), Extra: map[string]string{extraState: string(js)},
	}
	if err := meta.SetRNG(rngDropout, r.dropout); err != nil {
		return err
	}
	return checkpoint.Save(r.ckptPath(), meta, r.model.Params(), r.opt)
}

// restore loads the run's checkpoint, checks that it was written by the
// same configuration, and restores everything save wrote.
func (r *Run) restore() error {
	// Settings the estimator does not read cannot change the run: older
	// checkpoints may hold defaults for them (a constant threshold's γ
	// beside an increasing one).
	l, err := checkpoint.Resume(r.opts.Out, CheckpointFile, r.opts.Progress, configMap(r.cfg), append(r.cfg.Unread(), mayDiffer...)...)
	if err != nil {
		return err
	}
	var st state
	if err := json.Unmarshal([]byte(l.Extra[extraState]), &st); err != nil {
		return fmt.Errorf("checkpoint %s: run state: %w", l.Path, err)
	}
	if st.Step != l.Step {
		return fmt.Errorf("checkpoint %s: run state of step %d in a checkpoint of step %d", l.Path, st.Step, l.Step)
	}
	if st.Step > r.TotalSteps() {
		return setting.Errorf("Epochs", r.cfg.Epochs, "enough epochs for the %d steps of checkpoint %s (%d steps)", l.Step, l.Path, r.TotalSteps())
	}
	if err := r.it.Seek(st.Pos); err != nil {
		return fmt.Errorf("checkpoint %s: %w", l.Path, err)
	}
	if err := l.RestoreRNG(rngDropout, r.dropout); err != nil {
		return err
	}
	if err := estimator.SetState(r.est, st.Estimator); err != nil {
		return fmt.Errorf("checkpoint %s: %w", l.Path, err)
	}
	if err := l.Restore(r.model.Params(), r.opt); err != nil {
		return err
	}
	st.Estimator = nil
	r.st = st
	return nil
}
