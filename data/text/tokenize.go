package text

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"unicode/utf8"

	"github.com/psclip/psclip/internal/atomicfile"
)

// VocabFile is the file beside train.bin and val.bin that holds the tokens'
// Vocab in its text form (MarshalText), where WriteBin wrote one: LoadBin
// reads it, so that a character-level token directory decodes and sizes
// its model by itself.
const VocabFile = "vocab.txt"

// TokenizerFile is the file beside train.bin and val.bin that names the
// tokenizer of a directory without a VocabFile (Corpus.Tokenizer), in one
// line: WriteBin writes it, LoadBin reads it.
const TokenizerFile = "tokenizer.txt"

// SplitText cuts text as nanoGPT's prepare.py scripts do before they
// encode: the first ⌊n·(1−valFraction)⌋ of its n characters for training
// and the rest for validation, 0 < valFraction < 1. A byte that is not
// part of valid UTF-8 counts as one character. Both parts share text's
// memory; both must be non-empty.
func SplitText(text []byte, valFraction float64) (train, val []byte, err error) {
	if !(valFraction > 0 && valFraction < 1) {
		return nil, nil, fmt.Errorf("validation fraction %v is outside (0, 1)", valFraction)
	}
	n := utf8.RuneCount(text)
	cut := int(math.Floor(float64(n) * (1 - valFraction)))
	if cut == 0 || cut == n {
		return nil, nil, fmt.Errorf("%d characters split at a validation fraction of %v leave an empty part", n, valFraction)
	}
	i := 0
	for range cut {
		_, size := utf8.DecodeRune(text[i:])
		i += size
	}
	return text[:i:i], text[i:], nil
}

// Tokenize cuts text with SplitText and encodes both parts with encode
// (a Vocab's Encode, or GPT-2's BPE: bpe.Tokenizer.EncodeUint16), as
// nanoGPT's data/shakespeare/prepare.py does with GPT-2's tokenizer.
func Tokenize(text []byte, valFraction float64, encode func([]byte) ([]uint16, error)) (*Corpus, error) {
	train, val, err := SplitText(text, valFraction)
	if err != nil {
		return nil, err
	}
	c := &Corpus{}
	if c.Train, err = encode(train); err != nil {
		return nil, err
	}
	if c.Val, err = encode(val); err != nil {
		return nil, err
	}
	if len(c.Train) == 0 || len(c.Val) == 0 {
		return nil, errors.New("a split has no tokens")
	}
	return c, nil
}

// WriteBin writes c as a nanoGPT token directory, which LoadBin reads:
// train.bin and val.bin (little-endian uint16) and, if c has a Vocab,
// VocabFile. dir is created if needed; each file is written atomically, so
// a file there is whole or absent.
func WriteBin(dir string, c *Corpus) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	files := []struct {
		name string
		data []byte
	}{{"train.bin", tokenBytes(c.Train)}, {"val.bin", tokenBytes(c.Val)}}
	if c.Vocab != nil {
		v, err := c.Vocab.MarshalText()
		if err != nil {
			return err
		}
		files = append(files, struct {
			name string
			data []byte
		}{VocabFile, v})
	} else if err := os.Remove(filepath.Join(dir, VocabFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if c.Tokenizer != "" {
		files = append(files, struct {
			name string
			data []byte
		}{TokenizerFile, []byte(c.Tokenizer + "\n")})
	} else if err := os.Remove(filepath.Join(dir, TokenizerFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	for _, f := range files {
		if err := atomicfile.WriteFile(filepath.Join(dir, f.name), f.data); err != nil {
			return err
		}
	}
	return nil
}

// tokenBytes is tokens as little-endian uint16.
func tokenBytes(tokens []uint16) []byte {
	b := make([]byte, 0, 2*len(tokens))
	for _, t := range tokens {
		b = binary.LittleEndian.AppendUint16(b, t)
	}
	return b
}
