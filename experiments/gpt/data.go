package gpt

import (
	"strconv"

	"github.com/psclip/psclip/data/text"
	"github.com/psclip/psclip/setting"
)

// DataSpec says which corpus to train on: a text file, a nanoGPT token
// directory, or (neither) the Go standard library's source.
type DataSpec struct {
	Text string // a text file, tokenised at Level
	Dir  string // a directory with nanoGPT's train.bin and val.bin
	// Level is the tokenisation of Text and of the Go source; "" means
	// char for Text and byte for the Go source, whose ~1900 distinct
	// characters would make a large, mostly idle output layer.
	Level string
	// VocabSize bounds Dir's tokens; 0 means GPT-2's padded 50304.
	VocabSize int
	// MaxBytes, if > 0, cuts the Go source to its first MaxBytes bytes.
	MaxBytes int64
}

// DefaultBinVocab is the vocabulary size assumed for token files without
// one: GPT-2's 50257 BPE tokens padded to a multiple of 64, as nanoGPT.
const DefaultBinVocab = 50304

// GoSourceName names the default corpus in results and messages.
const GoSourceName = "Go standard library source ($GOROOT/src)"

// LoadCorpus reads the corpus spec names.
func LoadCorpus(spec DataSpec) (*text.Corpus, error) {
	if spec.Text != "" && spec.Dir != "" {
		return nil, setting.Errorf("Dir", spec.Dir, "empty when a text file is given: the two are exclusive")
	}
	if spec.Dir != "" {
		if spec.Level != "" {
			return nil, setting.Unread("Level", spec.Level, "a token directory has its own tokens")
		}
		n := spec.VocabSize
		if n == 0 {
			n = DefaultBinVocab
		}
		return text.LoadBin(spec.Dir, n)
	}
	level := text.Byte
	if spec.Text != "" {
		level = text.Char
	}
	if spec.Level != "" {
		var err error
		if level, err = text.ParseLevel(spec.Level); err != nil {
			return nil, setting.Errorf("Level", strconv.Quote(spec.Level), "a tokenisation level (%v)", err)
		}
	}
	if spec.Text != "" {
		return text.LoadText(spec.Text, level)
	}
	src, err := text.GoSource("", spec.MaxBytes)
	if err != nil {
		return nil, err
	}
	c, err := text.FromText(src, level)
	if err != nil {
		return nil, err
	}
	c.Name = GoSourceName
	return c, nil
}
