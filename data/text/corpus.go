package text

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/psclip/psclip/internal/regfile"
)

// Corpus is a token stream split into training and validation parts and,
// after HoldOut, a held-out test part.
type Corpus struct {
	// Name says where the tokens came from (a file, a directory); it prefixes
	// error messages about the corpus.
	Name string
	// Vocab decodes the tokens; it is nil for token files without a
	// VocabFile, whose tokenisation (GPT-2 BPE for OpenWebText) the
	// corpus does not know.
	Vocab *Vocab
	// Tokenizer names the tokenizer of token files without a Vocab, as
	// their TokenizerFile does (bpe.Tokenizer.ID for GPT-2's BPE);
	// empty when unknown.
	Tokenizer  string
	Train, Val []uint16
	// Test is the held-out end of the text (HoldOut); nil without one.
	Test []uint16
}

// Split cuts a token stream as nanoGPT does: the first 90 % (rounded down)
// for training, the rest for validation. Both share tokens' memory; train's
// capacity ends where val begins.
func Split(tokens []uint16) (train, val []uint16) {
	n := len(tokens) * 9 / 10
	return tokens[:n:n], tokens[n:]
}

// HoldOut holds the last fraction of the corpus's tokens (its training
// then validation tokens, as read), rounded down to whole tokens, out as
// Test, and splits the rest 90/10 as Split does: the text is cut into
// train, val and test in that order. Fraction 0 leaves c as it is. It
// refuses a fraction outside [0, 1), one that holds no token out, and a
// corpus already held out; the result shares no memory with the old
// splits.
func (c *Corpus) HoldOut(fraction float64) error {
	switch {
	case !(fraction >= 0 && fraction < 1):
		return fmt.Errorf("test fraction %v: want 0 ≤ f < 1", fraction)
	case fraction == 0:
		return nil
	case c.Test != nil:
		return errors.New("the corpus already holds a test split out")
	}
	all := slices.Concat(c.Train, c.Val)
	n := int(float64(len(all)) * fraction)
	if n == 0 {
		return fmt.Errorf("test fraction %v of %d tokens holds no token out", fraction, len(all))
	}
	rest := len(all) - n
	c.Train, c.Val = Split(all[:rest:rest])
	c.Test = all[rest:]
	return nil
}

// FromText tokenises text at the given level and splits it 90/10. At Char
// level the vocabulary is text's own characters.
func FromText(text []byte, level Level) (*Corpus, error) {
	if len(text) == 0 {
		return nil, errors.New("empty corpus")
	}
	var v *Vocab
	switch level {
	case Byte:
		v = ByteVocab()
	case Char:
		var err error
		if v, err = NewCharVocab(text); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("unknown tokenisation level %v", level)
	}
	tokens, err := v.Encode(text)
	if err != nil {
		return nil, err
	}
	c := &Corpus{Vocab: v}
	c.Train, c.Val = Split(tokens)
	return c, nil
}

// LoadText reads a text file and returns FromText of its contents, named
// after the file.
func LoadText(path string, level Level) (*Corpus, error) {
	text, err := ReadText(path)
	if err != nil {
		return nil, err
	}
	c, err := FromText(text, level)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	c.Name = path
	return c, nil
}

// ReadText reads a text file: a regular file of at most 32 GiB.
func ReadText(path string) ([]byte, error) {
	f, size, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	text := make([]byte, size)
	if _, err := io.ReadFull(f, text); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return text, nil
}

// maxFileBytes bounds the size of any file this package reads before it
// allocates for it: 32 GiB holds OpenWebText's 18 GB train.bin; larger is
// taken for a mistake. A variable so tests can lower it.
var maxFileBytes int64 = 32 << 30

// openRegular opens path for reading and returns its size, rejecting
// anything but a regular file (a device or pipe has no size to check and may
// never end) and files over maxFileBytes.
func openRegular(path string) (*os.File, int64, error) {
	f, size, err := regfile.Open(path) // a FIFO is refused, never waited on
	if err != nil {
		return nil, 0, err
	}
	if size > maxFileBytes {
		f.Close()
		return nil, 0, fmt.Errorf("%s has %d bytes, over the limit of %d", path, size, maxFileBytes)
	}
	return f, size, nil
}

// CheckBlock reports whether every split (train, val and a held-out test)
// is long enough to draw a window of block+1 tokens (an input of block
// tokens and its shifted target).
func (c *Corpus) CheckBlock(block int) error {
	type part struct {
		name   string
		tokens []uint16
	}
	splits := []part{{"train", c.Train}, {"val", c.Val}}
	if c.Test != nil {
		splits = append(splits, part{"test", c.Test})
	}
	for _, s := range splits {
		if err := checkWindow(len(s.tokens), block); err != nil {
			if c.Name != "" {
				return fmt.Errorf("%s: %s split: %w", c.Name, s.name, err)
			}
			return fmt.Errorf("%s split: %w", s.name, err)
		}
	}
	return nil
}

// checkWindow is the one rule for how many tokens a block size needs.
func checkWindow(n, block int) error {
	if block < 1 {
		return fmt.Errorf("block size %d is not positive", block)
	}
	if n < block+1 {
		return fmt.Errorf("%d tokens are fewer than block size + 1 = %d", n, block+1)
	}
	return nil
}

// GoSource returns the default corpus: the Go standard library's source.
// It concatenates, byte for byte and with no separator, every regular file
// whose name ends in ".go" under root/src, in the lexical order of
// filepath.WalkDir, skipping directories named "testdata". If root is "",
// it is the output of "go env GOROOT". If maxBytes > 0 the result is cut to
// at most maxBytes bytes, backed off to the start of a UTF-8 character, and
// files past the cut are not read.
//
// Go 1.26's tree gives 6495 files and 87,697,565 bytes; the exact text
// depends on the installed Go release, so record the release with results.
func GoSource(root string, maxBytes int64) ([]byte, error) {
	if root == "" {
		out, err := exec.Command("go", "env", "GOROOT").Output()
		if err != nil {
			return nil, fmt.Errorf("locating the Go source for the default corpus: go env GOROOT: %w", err)
		}
		root = strings.TrimSpace(string(out))
	}
	var buf bytes.Buffer
	full := false
	err := filepath.WalkDir(filepath.Join(root, "src"), func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && d.Name() == "testdata":
			return filepath.SkipDir
		case !d.Type().IsRegular() || !strings.HasSuffix(d.Name(), ".go"):
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		var r io.Reader = f
		if maxBytes > 0 {
			r = io.LimitReader(f, maxBytes-int64(buf.Len()))
		}
		if _, err := buf.ReadFrom(r); err != nil {
			return err
		}
		if maxBytes > 0 && int64(buf.Len()) == maxBytes {
			full = true
			return filepath.SkipAll
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the Go source: %w", err)
	}
	b := buf.Bytes()
	if full {
		// Drop a character the cut split in two, so that char-level
		// tokenisation sees valid UTF-8.
		for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
			if utf8.RuneStart(b[i]) {
				if !utf8.FullRune(b[i:]) {
					b = b[:i]
				}
				break
			}
		}
	}
	if len(b) == 0 {
		return nil, fmt.Errorf("no Go source under %s", filepath.Join(root, "src"))
	}
	return b, nil
}
