package text

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Level is the unit of tokenisation.
type Level int

const (
	// Char makes one token per Unicode character, with the vocabulary the
	// sorted set of characters of the corpus, as nanoGPT's shakespeare_char.
	Char Level = iota
	// Byte makes one token per byte: a fixed vocabulary of 256 that needs no
	// corpus and accepts any input, valid UTF-8 or not.
	Byte
)

func (l Level) String() string {
	switch l {
	case Char:
		return "char"
	case Byte:
		return "byte"
	}
	return fmt.Sprintf("Level(%d)", int(l))
}

// ParseLevel parses "char" or "byte".
func ParseLevel(s string) (Level, error) {
	switch s {
	case "char":
		return Char, nil
	case "byte":
		return Byte, nil
	}
	return 0, fmt.Errorf("unknown tokenisation level %q (want char or byte)", s)
}

// MaxVocab is the largest vocabulary a token stream can use: tokens are
// stored as uint16, as in nanoGPT's .bin files.
const MaxVocab = 1 << 16

// Vocab maps text to tokens and back. Its text form (MarshalText) is what a
// checkpoint stores so that sampling can decode without the corpus.
type Vocab struct {
	level Level
	// At Char level: the characters in increasing code-point order (token i
	// is runes[i]), and 1 + the token of each ASCII character, 0 if absent,
	// so that the common case skips the binary search. ASCII characters sort
	// first, so their tokens are below 128.
	runes []rune
	ascii [utf8.RuneSelf]uint8
}

// ByteVocab returns the byte-level vocabulary: token b is byte b.
func ByteVocab() *Vocab { return &Vocab{level: Byte} }

// NewCharVocab returns the character-level vocabulary of text: its distinct
// characters in increasing code-point order, as Python's sorted(set(text)).
// text must be non-empty valid UTF-8 with at most MaxVocab distinct
// characters.
func NewCharVocab(text []byte) (*Vocab, error) {
	var seen [utf8.RuneSelf]bool
	other := map[rune]bool{}
	for i := 0; i < len(text); {
		if c := text[i]; c < utf8.RuneSelf {
			seen[c] = true
			i++
			continue
		}
		r, size := utf8.DecodeRune(text[i:])
		if r == utf8.RuneError && size == 1 {
			return nil, invalidUTF8(i)
		}
		other[r] = true
		i += size
	}
	var runes []rune
	for c, ok := range seen {
		if ok {
			runes = append(runes, rune(c))
		}
	}
	rest := make([]rune, 0, len(other))
	for r := range other {
		rest = append(rest, r)
	}
	slices.Sort(rest)
	return newCharVocab(append(runes, rest...))
}

func invalidUTF8(offset int) error {
	return fmt.Errorf("invalid UTF-8 at byte offset %d (use byte-level tokenisation)", offset)
}

// newCharVocab builds the vocabulary of runes, which must be strictly
// increasing.
func newCharVocab(runes []rune) (*Vocab, error) {
	switch {
	case len(runes) == 0:
		return nil, errors.New("empty character vocabulary")
	case len(runes) > MaxVocab:
		return nil, fmt.Errorf("%d distinct characters exceed the %d tokens of uint16 (use byte-level tokenisation)", len(runes), MaxVocab)
	}
	v := &Vocab{level: Char, runes: runes}
	for i, r := range runes {
		if r < utf8.RuneSelf {
			v.ascii[r] = uint8(i + 1)
		}
	}
	return v, nil
}

// Level returns the vocabulary's tokenisation level.
func (v *Vocab) Level() Level { return v.level }

// Size is the number of tokens: valid tokens are 0 ≤ t < Size().
func (v *Vocab) Size() int {
	if v.level == Byte {
		return 256
	}
	return len(v.runes)
}

// Equal reports whether v and w map the same tokens to the same text.
func (v *Vocab) Equal(w *Vocab) bool {
	return v.level == w.level && slices.Equal(v.runes, w.runes)
}

// Encode tokenises text into the compact uint16 stream that corpora, .bin
// files and samplers use. At Char level a character outside the vocabulary
// or invalid UTF-8 is an error naming its byte offset.
func (v *Vocab) Encode(text []byte) ([]uint16, error) {
	if v.level == Byte {
		out := make([]uint16, len(text))
		for i, c := range text {
			out[i] = uint16(c)
		}
		return out, nil
	}
	out := make([]uint16, 0, len(text))
	for i := 0; i < len(text); {
		if c := text[i]; c < utf8.RuneSelf {
			t := v.ascii[c]
			if t == 0 {
				return nil, notInVocab(rune(c), i)
			}
			out = append(out, uint16(t-1))
			i++
			continue
		}
		r, size := utf8.DecodeRune(text[i:])
		if r == utf8.RuneError && size == 1 {
			return nil, invalidUTF8(i)
		}
		t, ok := slices.BinarySearch(v.runes, r)
		if !ok {
			return nil, notInVocab(r, i)
		}
		out = append(out, uint16(t))
		i += size
	}
	return out, nil
}

func notInVocab(r rune, offset int) error {
	return fmt.Errorf("character %q at byte offset %d is not in the vocabulary", r, offset)
}

// Decode turns tokens back into text. It takes int32 tokens, the type the
// samplers and models use. A token outside the vocabulary is an error.
func (v *Vocab) Decode(tokens []int32) (string, error) {
	var b strings.Builder
	b.Grow(len(tokens))
	for i, t := range tokens {
		if t < 0 || int(t) >= v.Size() {
			return "", fmt.Errorf("token %d at position %d is outside the vocabulary of %d", t, i, v.Size())
		}
		if v.level == Byte {
			b.WriteByte(byte(t))
		} else {
			b.WriteRune(v.runes[t])
		}
	}
	return b.String(), nil
}

const charPrefix = "char:"

// MarshalText encodes the vocabulary as "byte", or as "char:" followed by its
// characters in token order, e.g. "char:\n !$&',-.3:;?AB…". The form is
// canonical: equal vocabularies give equal text.
func (v *Vocab) MarshalText() ([]byte, error) {
	if v.level == Byte {
		return []byte("byte"), nil
	}
	return []byte(charPrefix + string(v.runes)), nil
}

// UnmarshalText decodes what MarshalText produces. The characters of a
// "char:" form must be valid UTF-8 and strictly increasing.
func (v *Vocab) UnmarshalText(b []byte) error {
	s := string(b)
	if s == "byte" {
		*v = Vocab{level: Byte}
		return nil
	}
	chars, ok := strings.CutPrefix(s, charPrefix)
	if !ok {
		return fmt.Errorf("vocabulary %.20q is neither %q nor %q followed by characters", s, "byte", charPrefix)
	}
	if !utf8.ValidString(chars) {
		return errors.New("vocabulary characters are not valid UTF-8")
	}
	runes := []rune(chars)
	for i := 1; i < len(runes); i++ {
		if runes[i] <= runes[i-1] {
			return fmt.Errorf("vocabulary characters %q, %q are not in strictly increasing order", runes[i-1], runes[i])
		}
	}
	nv, err := newCharVocab(runes)
	if err != nil {
		return err
	}
	*v = *nv
	return nil
}
