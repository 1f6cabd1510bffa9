package gpt

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"os/exec"
	"strconv"
	"strings"
	"sync"

	"github.com/psclip/psclip/data/text"
	"github.com/psclip/psclip/run"
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
	// VocabSize bounds Dir's tokens; 0 means GPT-2's padded 50304. A
	// directory with a text.VocabFile is bounded by that vocabulary
	// instead.
	VocabSize int
	// MaxBytes, if > 0, cuts the Go source to its first MaxBytes bytes.
	MaxBytes int64
	// TestFraction, if > 0, holds the last TestFraction of the text (Text
	// or the Go source) out as a test split (text.Corpus.HoldOut) before
	// the 90/10 split of the rest: no step and no choice among runs reads
	// it, and a run reports its loss at the end (Summary.FinalTestLoss). 0
	// is the 90/10 split of the whole text. A token directory has its own
	// splits and takes none.
	TestFraction float64
}

// DefaultBinVocab is the vocabulary size assumed for token files without
// one: GPT-2's 50257 BPE tokens padded to a multiple of 64, as nanoGPT.
const DefaultBinVocab = 50304

// TestSplitHash is the key of the held-out test split's hash in a run's
// data identity (run.Data.SHA256).
const TestSplitHash = "test_split"

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
		if spec.TestFraction != 0 {
			return nil, setting.Unread("TestFraction", spec.TestFraction, "a token directory has its own splits")
		}
		n := spec.VocabSize
		if n == 0 {
			n = DefaultBinVocab
		}
		return text.LoadBin(spec.Dir, n)
	}
	if err := setting.Fraction("TestFraction", spec.TestFraction); err != nil {
		return nil, err
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
	var c *text.Corpus
	if spec.Text != "" {
		var err error
		if c, err = text.LoadText(spec.Text, level); err != nil {
			return nil, err
		}
	} else {
		src, err := text.GoSource("", spec.MaxBytes)
		if err != nil {
			return nil, err
		}
		if c, err = text.FromText(src, level); err != nil {
			return nil, err
		}
		c.Name = GoSourceName
	}
	if err := c.HoldOut(spec.TestFraction); err != nil {
		return nil, setting.Errorf("TestFraction", spec.TestFraction, "a share of %s that holds at least one token out (%v)", c.Name, err)
	}
	return c, nil
}

// CorpusIdentity is the corpus's identity for the run layer: the content
// hashes of its training and validation tokens, of its held-out test
// tokens if any (as "test_split": not run.PublicData's "test", since the
// held-out end of a private text is as private as the rest), of its
// vocabulary or tokenizer and, for the Go source, the Go release.
func CorpusIdentity(c *text.Corpus) run.Data {
	d := run.Data{Source: c.Name, SHA256: map[string]string{"train": hashTokens(c.Train), "val": hashTokens(c.Val)}}
	if c.Test != nil {
		d.SHA256[TestSplitHash] = hashTokens(c.Test)
	}
	if c.Vocab != nil {
		v, err := c.Vocab.MarshalText()
		if err != nil {
			panic(err) // a vocabulary always marshals
		}
		d.SHA256["vocab"] = run.Hash(v)
	}
	if c.Tokenizer != "" {
		d.SHA256["tokenizer"] = run.Hash([]byte(c.Tokenizer))
	}
	if c.Name == GoSourceName {
		d.GoVersion = goVersion()
	}
	return d
}

// goVersion is the release of the Go toolchain whose source is the default
// corpus ("go env GOVERSION"), or "unknown".
var goVersion = sync.OnceValue(func() string {
	out, err := exec.Command("go", "env", "GOVERSION").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
})

// hashTokens is the hex SHA-256 of tokens as little-endian uint16, as
// nanoGPT's token files store them.
func hashTokens(tokens []uint16) string {
	h := sha256.New()
	buf := make([]byte, 0, 1<<16)
	for _, t := range tokens {
		buf = binary.LittleEndian.AppendUint16(buf, t)
		if len(buf) == cap(buf) {
			h.Write(buf)
			buf = buf[:0]
		}
	}
	h.Write(buf)
	return hex.EncodeToString(h.Sum(nil))
}
