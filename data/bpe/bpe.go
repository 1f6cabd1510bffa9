package bpe

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"unicode/utf8"
)

// Tokenizer is a byte-level BPE tokenizer: GPT-2's pre-tokeniser (Pieces),
// then in each piece the merges applied by rank to its bytes. Encode and
// Decode are safe for concurrent use.
type Tokenizer struct {
	// tokens[id] is the token's bytes.
	tokens [][]byte
	// byteID[b] is the token of the single byte b.
	byteID [256]int32
	// merges maps an adjacent pair of tokens to the merge that joins them.
	merges map[pair]merge

	mu    sync.Mutex
	cache map[string][]int32 // a piece's tokens
}

type pair struct{ a, b int32 }

type merge struct {
	rank int32 // lower merges first
	id   int32 // the joined token
}

// maxCache bounds the number of pieces the cache keeps; it is emptied when
// full. Natural text repeats a few tens of thousands of distinct words.
const maxCache = 1 << 17

// newTokenizer checks that tokens give every byte a token of its own and
// that no two tokens are equal, and returns a Tokenizer without merges and
// the id of each token's bytes.
func newTokenizer(tokens [][]byte) (*Tokenizer, map[string]int32, error) {
	t := &Tokenizer{tokens: tokens, merges: map[pair]merge{}, cache: map[string][]int32{}}
	if len(tokens) > 1<<31-1 {
		return nil, nil, fmt.Errorf("%d tokens are too many", len(tokens))
	}
	for i := range t.byteID {
		t.byteID[i] = -1
	}
	seen := make(map[string]int32, len(tokens))
	for id, b := range tokens {
		if len(b) == 0 {
			return nil, nil, fmt.Errorf("token %d is empty", id)
		}
		if prev, dup := seen[string(b)]; dup {
			return nil, nil, fmt.Errorf("tokens %d and %d are both %q", prev, id, b)
		}
		seen[string(b)] = int32(id)
		if len(b) == 1 {
			t.byteID[b[0]] = int32(id)
		}
	}
	for b, id := range t.byteID {
		if id < 0 {
			return nil, nil, fmt.Errorf("no token for the byte 0x%02x: byte-level BPE needs all 256", b)
		}
	}
	return t, seen, nil
}

// ID identifies the tokenizer: "bpe " and the hex SHA-256 of its tokens'
// bytes in id order and of its merges in rank order, equal for two
// tokenizers that encode and decode alike, whichever files they were read
// from. A token directory records it (text.Corpus.Tokenizer), so that its
// tokens are decoded with the tokenizer that made them.
func (t *Tokenizer) ID() string {
	h := sha256.New()
	var n [4]byte
	for _, tok := range t.tokens {
		binary.LittleEndian.PutUint32(n[:], uint32(len(tok)))
		h.Write(n[:])
		h.Write(tok)
	}
	byRank := make([][3]int32, 0, len(t.merges))
	for p, m := range t.merges {
		byRank = append(byRank, [3]int32{m.rank, p.a, p.b})
	}
	slices.SortFunc(byRank, func(x, y [3]int32) int { return cmp.Compare(x[0], y[0]) })
	for _, m := range byRank {
		for _, v := range m[1:] {
			binary.LittleEndian.PutUint32(n[:], uint32(v))
			h.Write(n[:])
		}
	}
	return "bpe " + hex.EncodeToString(h.Sum(nil))
}

// Size is the number of tokens: valid ids are 0 ≤ id < Size().
func (t *Tokenizer) Size() int { return len(t.tokens) }

// Token returns the bytes of token id, or nil if id is not a token. The
// result must not be modified.
func (t *Tokenizer) Token(id int32) []byte {
	if id < 0 || int(id) >= len(t.tokens) {
		return nil
	}
	return t.tokens[id]
}

// Encode returns the tokens of text: its pieces (Pieces), each encoded by
// merging adjacent tokens from its bytes, the pair of lowest rank first
// (the leftmost of equal ranks), until no adjacent pair has a merge, as
// tiktoken and GPT-2's encoder.py do. Any bytes encode, valid UTF-8 or not,
// and Decode gives them back. Special tokens such as <|endoftext|> are not
// recognised in text: they are encoded as the characters they are made of.
//
// A text of more than parallelBytes is cut into parts at some line starts
// (cuts) and the parts are encoded on GOMAXPROCS goroutines; the tokens are
// the same.
func (t *Tokenizer) Encode(text []byte) []int32 {
	parts := cuts(text, max(len(text)/(4*runtime.GOMAXPROCS(0)), parallelBytes))
	if len(parts) == 1 {
		return t.encode(text)
	}
	out := make([][]int32, len(parts))
	var wg sync.WaitGroup
	work := make(chan int)
	for range min(runtime.GOMAXPROCS(0), len(parts)) {
		wg.Go(func() {
			for i := range work {
				out[i] = t.encode(parts[i])
			}
		})
	}
	for i := range parts {
		work <- i
	}
	close(work)
	wg.Wait()
	return slices.Concat(out...)
}

// encode is Encode on one goroutine.
func (t *Tokenizer) encode(text []byte) []int32 {
	var out []int32
	Pieces(text, func(p []byte) bool {
		out = append(out, t.piece(p)...)
		return true
	})
	return out
}

// parallelBytes is the shortest part Encode cuts a text into; a variable so
// that tests can lower it.
var parallelBytes = 1 << 20

// cuts cuts text into parts of at least size bytes (the last may be
// shorter) where a piece of Pieces begins and each part's pieces are the
// whole text's: after a line feed that follows an ASCII character other
// than white space and precedes any character but white space. The line
// feed is then a white-space run of one character, a piece of its own
// whether the text goes on or ends there (a longer run would keep its
// last character apart only where a non-space follows), and no piece
// before it looks past it: Pieces reads forward, a run of letters, numbers
// or symbols ends at the line feed, and the optional space of " ?\p{L}+"
// and its like is taken only before the character it precedes.
func cuts(text []byte, size int) [][]byte {
	var parts [][]byte
	for len(text) > size {
		i := size
		for ; i < len(text); i++ {
			if text[i-1] != '\n' || i < 2 || text[i-2] >= utf8.RuneSelf {
				continue
			}
			before, _ := next(text[i-2 : i-1])
			after, _ := next(text[i:])
			if before != space && after != space {
				break
			}
		}
		parts = append(parts, text[:i])
		text = text[i:]
	}
	if len(text) > 0 || len(parts) == 0 {
		parts = append(parts, text)
	}
	return parts
}

// EncodeUint16 is Encode with the tokens as uint16, the type of nanoGPT's
// token files and of package text's corpora (text.Tokenize): an error if
// the vocabulary has more than 65536 tokens.
func (t *Tokenizer) EncodeUint16(text []byte) ([]uint16, error) {
	if len(t.tokens) > 1<<16 {
		return nil, fmt.Errorf("a vocabulary of %d tokens does not fit uint16 tokens", len(t.tokens))
	}
	ids := t.Encode(text)
	out := make([]uint16, len(ids))
	for i, id := range ids {
		out[i] = uint16(id)
	}
	return out, nil
}

// piece returns the tokens of one piece, from the cache when it has them.
func (t *Tokenizer) piece(p []byte) []int32 {
	t.mu.Lock()
	ids, ok := t.cache[string(p)]
	t.mu.Unlock()
	if ok {
		return ids
	}
	ids = t.bpe(p)
	t.mu.Lock()
	if len(t.cache) >= maxCache {
		clear(t.cache)
	}
	t.cache[string(p)] = ids
	t.mu.Unlock()
	return ids
}

// Decode returns the bytes of tokens, concatenated. An id that is not a
// token is an error naming its position.
func (t *Tokenizer) Decode(tokens []int32) ([]byte, error) {
	var out []byte
	for i, id := range tokens {
		b := t.Token(id)
		if b == nil {
			return nil, fmt.Errorf("token %d at position %d is outside the vocabulary of %d", id, i, len(t.tokens))
		}
		out = append(out, b...)
	}
	return out, nil
}

// byteRunes is GPT-2's bytes_to_unicode: the printable characters of
// Latin-1 ('!'–'~', '¡'–'¬', '®'–'ÿ') stand for their own byte, and the
// other 68 bytes, in increasing order, for U+0100 onwards, so that every
// token of vocab.json and merges.txt is printable text without spaces.
var byteRunes, runeBytes = func() ([256]rune, map[rune]byte) {
	var enc [256]rune
	dec := make(map[rune]byte, 256)
	n := rune(0)
	for b := range 256 {
		r := rune(b)
		if !('!' <= b && b <= '~' || '¡' <= b && b <= '¬' || '®' <= b && b <= 'ÿ') {
			r = 256 + n
			n++
		}
		enc[b], dec[r] = r, byte(b)
	}
	return enc, dec
}()

// unmapBytes returns the bytes a vocab.json or merges.txt token stands for.
func unmapBytes(s string) ([]byte, error) {
	b := make([]byte, 0, len(s))
	for _, r := range s {
		c, ok := runeBytes[r]
		if !ok {
			return nil, fmt.Errorf("token %q has the character %q, outside GPT-2's byte alphabet", s, r)
		}
		b = append(b, c)
	}
	return b, nil
}
