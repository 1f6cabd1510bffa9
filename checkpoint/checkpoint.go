// Package checkpoint saves and restores training runs as single safetensors
// files that survive crashes and detect corruption.
//
// A checkpoint holds the model's tensors under their PyTorch names (so
// safetensors.torch.load_file and model.load_state_dict read them after
// dropping the "optimizer." entries), the optimizer's state under
// "optimizer.<param name>.<state name>", and in the "__metadata__" map:
//
//	"format":             "pt"
//	"psclip.checkpoint":  JSON: version, step, RNG states, the run's
//	                      configuration, the trainer's extra state,
//	                      the train.Trainer's state (estimator, own
//	                      generator), optimizer step count
//	"psclip.sha256":      SHA-256 over every tensor's name, dtype, shape and
//	                      data and every other metadata entry
//
// Save writes the new file to a temporary file, syncs it, moves the current
// checkpoint to PrevPath (ckpt.safetensors → ckpt.prev.safetensors) and
// renames the new one into place, so that at every instant a complete
// checkpoint exists. Load verifies the header, sizes and checksum; when the
// latest checkpoint is missing, truncated or corrupt it falls back to the
// previous one and says so in Loaded.Fallback.
//
// A run driven by a train.Trainer resumes exactly with SaveTrainer and
// Loaded.RestoreTrainer: they save and restore, with the weights and the
// optimizer's state, the Trainer's State (an adaptive estimator's window
// or threshold, the Trainer's own dropout generator when Config.Rand is
// nil, and Config.Progress's state: a data/dataset sampler's position, or
// a dp.Trainer's sampler and accountant), so that the resumed run makes
// the uninterrupted run's steps bit for bit. A generator the caller gave
// as Config.Rand, and a position in the data kept outside
// Config.Progress, the caller saves itself (SetRNG, Extra).
//
// Save briefly holds a little-endian copy of every tensor, so it needs
// memory for the model and optimizer state once more.
package checkpoint

import (
	"bufio"
	"cmp"
	"crypto/sha256"
	"encoding"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/psclip/psclip/internal/atomicfile"
	"github.com/psclip/psclip/internal/isnil"
	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/optim"
	"github.com/psclip/psclip/safetensors"
	"github.com/psclip/psclip/tensor"
	"github.com/psclip/psclip/train"
)

// Metadata keys and the optimizer tensors' name prefix.
const (
	metaKey     = "psclip.checkpoint"
	checksumKey = "psclip.sha256"
	optimPrefix = "optimizer."
	version     = 1
)

// Meta is what a run needs to resume besides the tensors.
type Meta struct {
	// Step is the number of completed training steps; learning-rate
	// schedules are functions of it.
	Step int `json:"step"`
	// RNG holds random generators' states by name (see SetRNG).
	RNG map[string][]byte `json:"rng,omitempty"`
	// Config is the run's configuration, its settings by name, so that a
	// resume can check it with CheckConfig.
	Config map[string]string `json:"config,omitempty"`
	// Extra holds anything else a trainer must carry across a resume,
	// such as its position in the data or the best validation loss so far.
	Extra map[string]string `json:"extra,omitempty"`
	// Trainer is the train.Trainer's State, which SaveTrainer fills in and
	// RestoreTrainer restores; nil in a checkpoint written by Save.
	Trainer *train.State `json:"trainer,omitempty"`
}

// SetRNG stores the state of a random generator, such as a *rand.PCG or
// *rand.ChaCha8 from math/rand/v2, under name.
func (m *Meta) SetRNG(name string, src encoding.BinaryMarshaler) error {
	b, err := src.MarshalBinary()
	if err != nil {
		return fmt.Errorf("checkpoint: RNG %q: %w", name, err)
	}
	if m.RNG == nil {
		m.RNG = map[string][]byte{}
	}
	m.RNG[name] = b
	return nil
}

// RestoreRNG sets dst to the state stored under name.
func (m *Meta) RestoreRNG(name string, dst encoding.BinaryUnmarshaler) error {
	b, ok := m.RNG[name]
	if !ok {
		return fmt.Errorf("checkpoint: no state for RNG %q", name)
	}
	if err := dst.UnmarshalBinary(b); err != nil {
		return fmt.Errorf("checkpoint: RNG %q: %w", name, err)
	}
	return nil
}

// ConfigError is CheckConfig's error: the settings in which a run's
// configuration differs from its checkpoint's. A command reports it as a
// mistake in its input (other settings than the run's), not a failure.
type ConfigError struct {
	Diffs []string // one per setting, e.g. `lr="0.2" (checkpoint "0.1")`
}

func (e *ConfigError) Error() string {
	return "checkpoint: the run's configuration differs from the checkpoint's: " + strings.Join(e.Diffs, ", ")
}

// ForeignError is a safetensors file that is no psclip checkpoint (it has
// none of a checkpoint's metadata): another program's weights, say. It is
// the wrong input, not a damaged checkpoint.
type ForeignError struct{ Path string }

func (e *ForeignError) Error() string {
	return fmt.Sprintf("checkpoint: %s: no checksum: a safetensors file, but not a psclip checkpoint", e.Path)
}

// CheckConfig returns a *ConfigError listing every setting in which current
// and the checkpoint's configuration differ, ignoring the keys in mayDiffer
// (settings such as the number of epochs or the output directory that a
// resumed run may change).
func (m *Meta) CheckConfig(current map[string]string, mayDiffer ...string) error {
	all := maps.Clone(m.Config)
	if all == nil {
		all = map[string]string{}
	}
	maps.Copy(all, current)
	var diffs []string
	for _, k := range slices.Sorted(maps.Keys(all)) {
		if slices.Contains(mayDiffer, k) {
			continue
		}
		was, inOld := m.Config[k]
		now, inNew := current[k]
		switch {
		case !inOld:
			diffs = append(diffs, fmt.Sprintf("%s=%s is not in the checkpoint", k, now))
		case !inNew:
			diffs = append(diffs, fmt.Sprintf("%s (checkpoint %s) is not set now", k, was))
		case was != now:
			// The values as they are: the run layer's are JSON, whose
			// strings carry their own quotes.
			diffs = append(diffs, fmt.Sprintf("%s=%s (checkpoint %s)", k, now, was))
		}
	}
	if diffs != nil {
		return &ConfigError{Diffs: diffs}
	}
	return nil
}

// record is the JSON stored under metaKey.
type record struct {
	Version int `json:"version"`
	Meta
	// LegacyEpoch and LegacyBatch are read, and ignored, in checkpoints
	// written before the trainers kept their data position themselves, so
	// that those still load.
	LegacyEpoch *int `json:"epoch,omitempty"`
	LegacyBatch *int `json:"batch,omitempty"`
	// OptimizerSteps is the optimizer's step count, absent when the
	// checkpoint has no optimizer state.
	OptimizerSteps *int `json:"optimizer_steps,omitempty"`
}

// PrevPath is where Save keeps the previous checkpoint of path:
// "run/ckpt.safetensors" → "run/ckpt.prev.safetensors".
func PrevPath(path string) string {
	if base, ok := strings.CutSuffix(path, ".safetensors"); ok {
		return base + ".prev.safetensors"
	}
	return path + ".prev"
}

// Save writes a checkpoint of params (their values), the optimizer's state
// and meta to path, keeping the checkpoint it replaces as PrevPath(path).
// opt may be nil (or a nil *optim.SGD, say): the checkpoint then holds no
// optimizer state, and Restore with an optimizer refuses it. On error
// neither file is changed.
func Save(path string, meta Meta, params []*nn.Param, opt optim.Optimizer) error {
	tensors := make([]safetensors.Tensor, 0, len(params))
	for _, p := range params {
		if p == nil || p.Value == nil {
			return errors.New("checkpoint: a parameter is nil or has no value")
		}
		if strings.HasPrefix(p.Name, optimPrefix) {
			return fmt.Errorf("checkpoint: parameter name %q uses the reserved prefix %q", p.Name, optimPrefix)
		}
		tensors = append(tensors, safetensors.FromTensor(p.Name, p.Value))
	}
	rec := record{Version: version, Meta: meta}
	if !isnil.IsNil(opt) {
		st := opt.State()
		rec.OptimizerSteps = &st.Steps
		for _, name := range slices.Sorted(maps.Keys(st.Tensors)) {
			tensors = append(tensors, safetensors.FromTensor(optimPrefix+name, st.Tensors[name]))
		}
	}
	js, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	metadata := map[string]string{"format": "pt", metaKey: string(js)}
	metadata[checksumKey] = digest(tensors, metadata)

	// A process killed while saving leaves its temporary file: as large as
	// the checkpoint, and one more per crash.
	if err := atomicfile.RemoveStale(path); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	prev := PrevPath(path)
	return atomicfile.Write(path, func(f *os.File) error {
		w := bufio.NewWriterSize(f, 1<<20)
		if err := safetensors.Encode(w, tensors, metadata); err != nil {
			return err
		}
		if err := w.Flush(); err != nil {
			return err
		}
		// The new checkpoint is complete in the temporary file: only now
		// move the current one aside. A current checkpoint that is already
		// damaged is not kept: the previous one is the better fallback.
		// Verifying it costs a read of the file.
		if _, err := load(path); err == nil {
			if err := os.Rename(path, prev); err != nil {
				return fmt.Errorf("checkpoint: keeping the previous checkpoint: %w", err)
			}
		}
		return nil
	})
}

// digest is the SHA-256 of the tensors, in name order, and of the metadata
// other than the checksum, with every field length-prefixed.
func digest(tensors []safetensors.Tensor, metadata map[string]string) string {
	h := sha256.New()
	var buf []byte
	field := func(b []byte) {
		buf = binary.AppendUvarint(buf[:0], uint64(len(b)))
		h.Write(buf)
		h.Write(b)
	}
	order := slices.SortedFunc(slices.Values(tensors), func(a, b safetensors.Tensor) int { return cmp.Compare(a.Name, b.Name) })
	for _, t := range order {
		field([]byte(t.Name))
		field([]byte(t.DType))
		buf = binary.AppendUvarint(buf[:0], uint64(len(t.Shape)))
		for _, d := range t.Shape {
			buf = binary.AppendUvarint(buf, uint64(d))
		}
		h.Write(buf)
		field(t.Data)
	}
	for _, k := range slices.Sorted(maps.Keys(metadata)) {
		if k != checksumKey {
			field([]byte(k))
			field([]byte(metadata[k]))
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Loaded is a checkpoint read back by Load.
type Loaded struct {
	Meta
	// Model holds the model's tensors by name.
	Model map[string]*tensor.Tensor
	// Optimizer is the optimizer's state, nil if none was saved.
	Optimizer *optim.State
	// Path is the file the checkpoint came from.
	Path string
	// Fallback, if not nil, says why the latest checkpoint could not be
	// used; Path is then the previous checkpoint.
	Fallback error
}

// Warning is a one-line message for the user when Load fell back to the
// previous checkpoint, and empty otherwise.
func (l *Loaded) Warning() string {
	if l.Fallback == nil {
		return ""
	}
	return fmt.Sprintf("warning: %v; using the previous checkpoint %s (step %d)", l.Fallback, l.Path, l.Step)
}

// Load reads the checkpoint at path, or, if it is missing or damaged, the
// previous one at PrevPath(path). If neither exists the error satisfies
// errors.Is(err, fs.ErrNotExist), so a run can tell "start afresh" from
// "damaged".
func Load(path string) (*Loaded, error) {
	l, err := load(path)
	if err == nil {
		return l, nil
	}
	prev := PrevPath(path)
	lp, perr := load(prev)
	switch {
	case perr == nil:
		lp.Fallback = err
		return lp, nil
	case errors.Is(perr, fs.ErrNotExist):
		return nil, err
	}
	return nil, fmt.Errorf("%w; the previous checkpoint is unusable too: %v", err, perr)
}

// load reads and verifies one checkpoint file.
func load(path string) (*Loaded, error) {
	f, err := safetensors.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return decode(path, f)
}

// decode verifies and decodes the content f of the checkpoint file path.
func decode(path string, f *safetensors.File) (*Loaded, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("checkpoint: %s: "+format, append([]any{path}, args...)...)
	}
	sum, ok := f.Metadata[checksumKey]
	if !ok {
		return nil, &ForeignError{Path: path}
	}
	if got := digest(f.Tensors, f.Metadata); got != sum {
		return nil, bad("checksum mismatch: the file is corrupt")
	}
	var rec record
	dec := json.NewDecoder(strings.NewReader(f.Metadata[metaKey]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rec); err != nil {
		return nil, bad("bad %s: %v", metaKey, err)
	}
	if rec.Version != version {
		return nil, bad("checkpoint format version %d, this psclip reads version %d", rec.Version, version)
	}
	l := &Loaded{Meta: rec.Meta, Model: map[string]*tensor.Tensor{}, Path: path}
	if rec.OptimizerSteps != nil {
		l.Optimizer = &optim.State{Steps: *rec.OptimizerSteps, Tensors: map[string]*tensor.Tensor{}}
	}
	for _, t := range f.Tensors {
		v, err := f.Float32(t.Name)
		if err != nil {
			return nil, bad("%v", err)
		}
		if name, ok := strings.CutPrefix(t.Name, optimPrefix); ok {
			if l.Optimizer == nil {
				return nil, bad("optimizer tensor %q without an optimizer step count", t.Name)
			}
			l.Optimizer.Tensors[name] = v
		} else {
			l.Model[t.Name] = v
		}
	}
	return l, nil
}

// Restore copies the checkpoint's model tensors into params, which must
// match them exactly in names and shapes, and its optimizer state into opt
// (if not nil, nor a typed nil). On error nothing is changed.
func (l *Loaded) Restore(params []*nn.Param, opt optim.Optimizer) error {
	names := map[string]bool{}
	for _, p := range params {
		if p == nil || p.Value == nil {
			return errors.New("checkpoint: a parameter is nil or has no value")
		}
		t, ok := l.Model[p.Name]
		if !ok {
			return fmt.Errorf("checkpoint: %s has no tensor for parameter %q", l.Path, p.Name)
		}
		if !t.SameShape(p.Value) {
			return fmt.Errorf("checkpoint: %s: parameter %q is %v, the checkpoint's is %v", l.Path, p.Name, p.Value, t)
		}
		names[p.Name] = true
	}
	for _, name := range slices.Sorted(maps.Keys(l.Model)) {
		if !names[name] {
			return fmt.Errorf("checkpoint: %s has tensor %q that the model does not", l.Path, name)
		}
	}
	if !isnil.IsNil(opt) {
		if l.Optimizer == nil {
			return fmt.Errorf("checkpoint: %s has no optimizer state", l.Path)
		}
		if err := opt.SetState(*l.Optimizer); err != nil {
			return fmt.Errorf("checkpoint: %s: %w", l.Path, err)
		}
	}
	for _, p := range params {
		copy(p.Value.Data, l.Model[p.Name].Data)
	}
	return nil
}

// SaveTrainer is Save for a run driven by t: it saves t's parameters, its
// optimizer's state and its State (in Meta.Trainer, replacing what meta
// held there), everything RestoreTrainer needs to continue the run bit for
// bit. t's optimizer must be an optim.Optimizer, whose state can be saved.
func SaveTrainer(path string, meta Meta, t *train.Trainer) error {
	opt, err := optimizerOf(t)
	if err != nil {
		return err
	}
	st, err := t.State()
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	meta.Trainer = &st
	return Save(path, meta, t.Params(), opt)
}

// RestoreTrainer is Restore for a run driven by t: it restores t's
// parameters, its optimizer's state and its State from a checkpoint
// written by SaveTrainer, and refuses one written by Save (it has no
// Trainer state: the estimator and the dropout masks would restart). On
// error nothing is changed.
func (l *Loaded) RestoreTrainer(t *train.Trainer) error {
	opt, err := optimizerOf(t)
	if err != nil {
		return err
	}
	if l.Trainer == nil {
		return fmt.Errorf("checkpoint: %s has no trainer state (written by Save, not SaveTrainer)", l.Path)
	}
	old, err := t.State()
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := t.SetState(*l.Trainer); err != nil {
		return fmt.Errorf("checkpoint: %s: %w", l.Path, err)
	}
	if err := l.Restore(t.Params(), opt); err != nil {
		if rerr := t.SetState(old); rerr != nil {
			return errors.Join(err, rerr)
		}
		return err
	}
	return nil
}

// optimizerOf returns t's optimizer as an optim.Optimizer.
func optimizerOf(t *train.Trainer) (optim.Optimizer, error) {
	if t == nil {
		return nil, errors.New("checkpoint: no trainer (nil)")
	}
	opt, ok := t.Optimizer().(optim.Optimizer)
	if !ok {
		return nil, fmt.Errorf("checkpoint: the trainer's optimizer %T has no state to save (not an optim.Optimizer)", t.Optimizer())
	}
	return opt, nil
}
