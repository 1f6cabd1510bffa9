package gpt

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/psclip/psclip/checkpoint"
	"github.com/psclip/psclip/data/bpe"
	"github.com/psclip/psclip/data/text"
	"github.com/psclip/psclip/models"
	"github.com/psclip/psclip/run"
	"github.com/psclip/psclip/setting"
)

// extraVocab and extraTokenizer are the checkpoint metadata keys
// (checkpoint.Meta.Extra) of the corpus's vocabulary, which LoadModel
// decodes with, and of the tokenizer of token files without one
// (text.Corpus.Tokenizer).
const (
	extraVocab     = "vocab"
	extraTokenizer = "tokenizer"
)

// Model is a trained GPT read back from a checkpoint, for sampling. The
// GPT of a LoRA run (Config.LoRARank) keeps its adapters; MergeLoRA merges
// them into its weights.
type Model struct {
	*models.GPT
	Config Config
	// Vocab decodes the model's tokens; nil for a model trained on token
	// files without a vocabulary.
	Vocab *text.Vocab
	// Tokenizer identifies the tokenizer of such token files
	// (text.Corpus.Tokenizer: bpe.Tokenizer.ID for GPT-2's BPE), which
	// UseBPE gives the model to decode with; "" when psclip does not know
	// it.
	Tokenizer string
	bpe       *bpe.Tokenizer
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
	m.Tokenizer = l.Extra[extraTokenizer]
	if v, ok := l.Extra[extraVocab]; ok {
		m.Vocab = new(text.Vocab)
		if err := m.Vocab.UnmarshalText([]byte(v)); err != nil {
			return nil, fmt.Errorf("%s: %w", l.Path, err)
		}
	}
	return m, nil
}

// UseBPE gives the model the byte-level BPE t to encode prompts and
// decode samples with: t must be the tokenizer its token files were made
// with (its ID the recorded Tokenizer).
func (m *Model) UseBPE(t *bpe.Tokenizer) error {
	switch {
	case m.Vocab != nil:
		return errors.New("the model decodes with its own vocabulary, not a BPE tokenizer")
	case m.Tokenizer == "":
		return errors.New("the model's token files did not record their tokenizer (written before psclip data tokenize named it), so a BPE tokenizer cannot be checked against it")
	case t.ID() != m.Tokenizer:
		return fmt.Errorf("the tokenizer is not the one the model's token files were made with (%s, not %s)", t.ID(), m.Tokenizer)
	}
	m.bpe = t
	return nil
}

// Decode returns the text of tokens, with the model's vocabulary or its
// BPE tokenizer (UseBPE). The text of one token of a BPE may be part of a
// character, which the next tokens complete.
func (m *Model) Decode(tokens []int32) (string, error) {
	switch {
	case m.Vocab != nil:
		return m.Vocab.Decode(tokens)
	case m.bpe != nil:
		b, err := m.bpe.Decode(tokens)
		return string(b), err
	}
	return "", m.noDecoder()
}

// noDecoder is the error of a model that has nothing to decode with.
func (m *Model) noDecoder() error {
	if m.Tokenizer != "" {
		return errors.New("the model was trained on token files of a BPE tokenizer: give it the tokenizer (UseBPE)")
	}
	return errors.New("the checkpoint has no vocabulary to decode with (the model was trained on token files that do not name their tokenizer)")
}

// Sample continues prompt by o.Tokens tokens (models.GPT.Generate) and
// returns the new text. The tokens are drawn among those the model's
// vocabulary or tokenizer decodes (GenerateOptions.Vocab, unless set):
// not the padding of a larger embedding.
func (m *Model) Sample(prompt string, o models.GenerateOptions) (string, error) {
	var p []int32
	switch {
	case o.Vocab > 0:
	case m.Vocab != nil:
		o.Vocab = m.Vocab.Size()
	case m.bpe != nil:
		o.Vocab = m.bpe.Size()
	}
	switch {
	case m.Vocab != nil:
		ids, err := m.Vocab.Encode([]byte(prompt))
		if err != nil {
			return "", setting.Errorf("Prompt", strconv.Quote(prompt), "text the vocabulary encodes (%v)", err)
		}
		p = make([]int32, len(ids))
		for i, t := range ids {
			p[i] = int32(t)
		}
	case m.bpe != nil:
		p = m.bpe.Encode([]byte(prompt))
	default:
		return "", m.noDecoder()
	}
	out, err := m.GPT.Generate(p, o)
	if err != nil {
		return "", err
	}
	return m.Decode(out)
}
