package text

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// LoadBin reads a nanoGPT token directory: train.bin and val.bin, each a
// stream of little-endian uint16 tokens below vocabSize, and VocabFile if
// there is one (WriteBin writes it for a Vocab): then the corpus has that
// Vocab and its tokens must be below the Vocab's size instead. Otherwise
// the corpus has no Vocab, and the Tokenizer its TokenizerFile names, if
// there is one.
func LoadBin(dir string, vocabSize int) (*Corpus, error) {
	if fi, err := os.Stat(dir); err != nil {
		return nil, err
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("data directory %s is not a directory", dir)
	}
	c := &Corpus{Name: dir}
	vocabPath := filepath.Join(dir, VocabFile)
	if b, err := readVocabFile(vocabPath); err == nil {
		c.Vocab = new(Vocab)
		if err := c.Vocab.UnmarshalText(b); err != nil {
			return nil, fmt.Errorf("%s: %w", vocabPath, err)
		}
		vocabSize = c.Vocab.Size()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if c.Vocab == nil {
		var err error
		if c.Tokenizer, err = readTokenizerFile(filepath.Join(dir, TokenizerFile)); err != nil {
			return nil, err
		}
	}
	for _, s := range []struct {
		file string
		dst  *[]uint16
	}{{"train.bin", &c.Train}, {"val.bin", &c.Val}} {
		tokens, err := LoadTokens(filepath.Join(dir, s.file), vocabSize)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("data directory %s has no %s", dir, s.file)
		}
		if err != nil {
			return nil, err
		}
		*s.dst = tokens
	}
	return c, nil
}

// LoadTokens reads a file of little-endian uint16 tokens, each of which must
// be below vocabSize (1 ≤ vocabSize ≤ MaxVocab). An empty file, an odd byte
// count or an out-of-range token is an error naming the file (and the byte
// offset of the token). The file is streamed into the result, so the memory
// needed is its size plus a small buffer.
func LoadTokens(path string, vocabSize int) ([]uint16, error) {
	if vocabSize < 1 || vocabSize > MaxVocab {
		return nil, fmt.Errorf("vocabulary size %d is outside [1, %d]", vocabSize, MaxVocab)
	}
	f, size, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	switch {
	case size == 0:
		return nil, fmt.Errorf("%s is empty", path)
	case size%2 != 0:
		return nil, fmt.Errorf("%s has an odd size of %d bytes; want little-endian uint16 tokens", path, size)
	}
	tokens := make([]uint16, size/2)
	buf := make([]byte, min(size, 1<<20))
	for i := 0; i < len(tokens); {
		chunk := buf[:min(len(buf), 2*(len(tokens)-i))]
		if _, err := io.ReadFull(f, chunk); err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		for j := 0; j < len(chunk); j += 2 {
			t := binary.LittleEndian.Uint16(chunk[j:])
			if int(t) >= vocabSize {
				return nil, fmt.Errorf("%s: token %d at byte offset %d is not below the vocabulary size %d", path, t, 2*i, vocabSize)
			}
			tokens[i] = t
			i++
		}
	}
	return tokens, nil
}

// readVocabFile reads a VocabFile: a regular file of at most 1 MiB (the
// largest character vocabulary, MaxVocab characters of up to 4 bytes, and
// its prefix take 256 KiB).
func readVocabFile(path string) ([]byte, error) {
	f, size, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if size > 1<<20 {
		return nil, fmt.Errorf("%s has %d bytes, more than a vocabulary takes", path, size)
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return b, nil
}

// readTokenizerFile returns the line of a TokenizerFile, or "" if there is
// none; a file larger than a line of a name and a hash, or of more than
// one line, is an error.
func readTokenizerFile(path string) (string, error) {
	f, size, err := openRegular(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	if size > 256 {
		return "", fmt.Errorf("%s has %d bytes, more than the line naming a tokenizer takes", path, size)
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(f, b); err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	line := strings.TrimSuffix(string(b), "\n")
	if line == "" || strings.ContainsAny(line, "\r\n") {
		return "", fmt.Errorf("%s is not one line naming a tokenizer", path)
	}
	return line, nil
}
