package gpt

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/psclip/psclip/checkpoint"
	"github.com/psclip/psclip/data/text"
	"github.com/psclip/psclip/models"
	"github.com/psclip/psclip/run"
	"github.com/psclip/psclip/setting"
)

// extraVocab is the checkpoint metadata key (checkpoint.Meta.Extra) of the
// corpus's vocabulary, which LoadModel decodes with.
const extraVocab = "vocab"

// Model is a trained GPT read back from a checkpoint, for sampling. The
// GPT of a LoRA run (Config.LoRARank) keeps its adapters; MergeLoRA merges
// them into its weights.
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
		path = filepath.Join(path, run.CheckpointFile)
	}
	l, err := checkpoint.Load(path)
	if err != nil {
		return nil, err
	}
	if err := run.CheckKind(l, Kind, "n_layer"); err != nil {
		return nil, err
	}
	var c Config
	if err := run.DecodeConfig(l.Config, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", l.Path, err)
	}
	g, err := models.NewGPT(c.model(), c.Seed)
	if err == nil {
		err = c.tune(g) // a LoRA run's adapters
	}
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

// Sample continues prompt by o.Tokens tokens (models.GPT.Generate) and
// returns the new text.
func (m *Model) Sample(prompt string, o models.GenerateOptions) (string, error) {
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
	out, err := m.GPT.Generate(p, o)
	if err != nil {
		return "", err
	}
	return m.Vocab.Decode(out)
}
