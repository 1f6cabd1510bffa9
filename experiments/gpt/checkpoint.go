package gpt

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/psclip/psclip/checkpoint"
	"github.com/psclip/psclip/data/text"
	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/models"
	"github.com/psclip/psclip/setting"
)

// CheckpointFile is the name of a run's checkpoint in its output directory;
// the one before it is kept as checkpoint.PrevPath(CheckpointFile).
const CheckpointFile = "ckpt.safetensors"

// Keys of a checkpoint's Meta.RNG and Meta.Extra.
const (
	rngSampler = "sampler"
	rngDropout = "dropout"
	extraVocab = "vocab"
	extraState = "state"
)

// mayDiffer lists the settings a resumed run may change: they affect what
// is reported and when, not the trajectory.
var mayDiffer = []string{"eval_interval", "eval_iters", "log_interval", "ckpt_interval", "max_bad_steps"}

// configMap is c as a checkpoint stores it: every setting's JSON value under
// its JSON name.
func configMap(c Config) map[string]string {
	b, err := json.Marshal(c)
	if err != nil {
		panic(err) // a Config always marshals
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		panic(err)
	}
	m := make(map[string]string, len(raw))
	for k, v := range raw {
		m[k] = string(v)
	}
	return m
}

// configFromMap inverts configMap.
func configFromMap(m map[string]string) (Config, error) {
	raw := make(map[string]json.RawMessage, len(m))
	for k, v := range m {
		raw[k] = json.RawMessage(v)
	}
	var c Config
	b, err := json.Marshal(raw)
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err != nil {
		return Config{}, fmt.Errorf("checkpoint configuration: %w", err)
	}
	return c, nil
}

func (s *Run) ckptPath() string { return filepath.Join(s.opts.Out, CheckpointFile) }

// save writes the checkpoint of the run after s.st.Step steps. Without an
// output directory there is nowhere to write, and nothing to do.
func (s *Run) save() error {
	if s.opts.Out == "" {
		return nil
	}
	st := s.st
	st.Seconds = s.elapsed()
	var err error
	if st.Estimator, err = estimator.State(s.est); err != nil {
		return err
	}
	js, err := json.Marshal(st)
	if err != nil {
		return err
	}
	meta := checkpoint.Meta{Step: s.st.Step, Config: configMap(s.cfg), Extra: map[string]string{extraState: string(js)}}
	if s.corpus.Vocab != nil {
		v, err := s.corpus.Vocab.MarshalText()
		if err != nil {
			return err
		}
		meta.Extra[extraVocab] = string(v)
	}
	if err := meta.SetRNG(rngSampler, s.train); err != nil {
		return err
	}
	if err := meta.SetRNG(rngDropout, s.dropout); err != nil {
		return err
	}
	return checkpoint.Save(s.ckptPath(), meta, s.model.Params(), s.opt)
}

// restore loads the run's checkpoint, checks that it was written by the
// same configuration, and restores the weights, optimizer, data order,
// dropout stream and progress.
func (s *Run) restore() error {
	// Settings the clip mode does not read cannot change the run: older
	// checkpoints hold the defaults of other modes.
	l, err := checkpoint.Resume(s.opts.Out, CheckpointFile, s.opts.Progress, configMap(s.cfg), append(s.cfg.Unread(), mayDiffer...)...)
	if err != nil {
		return err
	}
	var st state
	if err := json.Unmarshal([]byte(l.Extra[extraState]), &st); err != nil {
		return fmt.Errorf("checkpoint %s: run state: %w", l.Path, err)
	}
	if st.Step != l.Step || st.Step > s.cfg.Steps {
		return fmt.Errorf("checkpoint %s: step %d does not fit a run of %d steps", l.Path, l.Step, s.cfg.Steps)
	}
	if err := l.RestoreRNG(rngSampler, s.train); err != nil {
		return err
	}
	if err := l.RestoreRNG(rngDropout, s.dropout); err != nil {
		return err
	}
	if err := estimator.SetState(s.est, st.Estimator); err != nil {
		return fmt.Errorf("checkpoint %s: %w", l.Path, err)
	}
	if err := l.Restore(s.model.Params(), s.opt); err != nil {
		return err
	}
	st.Estimator = nil
	s.st = st
	return nil
}

// Model is a trained GPT read back from a checkpoint, for sampling.
type Model struct {
	*models.GPT
	Config Config
	// Vocab decodes the model's tokens; nil for a model trained on token
	// files, whose tokenisation psclip does not know.
	Vocab *text.Vocab
	// Step is the number of training steps the checkpoint had completed.
	Step int
	// Warning is non-empty when the latest checkpoint was damaged and the
	// previous one was read instead.
	Warning string
}

// LoadModel reads the model of a checkpoint file, or of the checkpoint in
// a run's output directory.
func LoadModel(path string) (*Model, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		path = filepath.Join(path, CheckpointFile)
	}
	l, err := checkpoint.Load(path)
	if err != nil {
		return nil, err
	}
	c, err := configFromMap(l.Config)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", l.Path, err)
	}
	g, err := models.NewGPT(c.model(), c.Seed)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", l.Path, err)
	}
	if err := l.Restore(g.Params(), nil); err != nil {
		return nil, err
	}
	m := &Model{GPT: g, Config: c, Step: l.Step, Warning: l.Warning()}
	if v, ok := l.Extra[extraVocab]; ok {
		m.Vocab = new(text.Vocab)
		if err := m.Vocab.UnmarshalText([]byte(v)); err != nil {
			return nil, fmt.Errorf("%s: %w", l.Path, err)
		}
	}
	return m, nil
}

// Sample continues prompt by o.Tokens tokens and returns the new text.
func (m *Model) Sample(prompt string, o GenerateOptions) (string, error) {
	if m.Vocab == nil {
		return "", errors.New("the checkpoint has no vocabulary to decode with (the model was trained on token files)")
	}
	ids, err := m.Vocab.Encode([]byte(prompt))
	if err != nil {
		return "", setting.Errorf("Prompt", strconv.Quote(prompt), "text the vocabulary encodes (%v)", err)
	}
	p := make([]int32, len(ids))
	for i, t := range ids {
		p[i] = int32(t)
	}
	out, err := Generate(m.GPT, m.Config.BlockSize, p, o)
	if err != nil {
		return "", err
	}
	return m.Vocab.Decode(out)
}
