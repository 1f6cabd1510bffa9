package bpe

import (
	"unicode"
	"unicode/utf8"
)

// Pieces calls yield with the pieces GPT-2's pre-tokeniser cuts text into,
// in order; their concatenation is text. It is the regular expression
//
//	's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// matched leftmost-first from the start of text and again after each match,
// written out by hand because Go's regexp has no lookahead. \s is Unicode's
// White_Space, \p{L} a letter and \p{N} a number, as Go's unicode package
// classifies them. A byte that is not part of valid UTF-8 counts as one
// character of the class [^\s\p{L}\p{N}] (as U+FFFD would), so every byte
// string has pieces and byte-level BPE encodes any input.
func Pieces(text []byte, yield func(piece []byte) bool) {
	for len(text) > 0 {
		n := pieceLen(text)
		if !yield(text[:n]) {
			return
		}
		text = text[n:]
	}
}

// class is a character's class for the pre-tokeniser.
type class uint8

const (
	letter class = iota
	number
	space
	other // neither: [^\s\p{L}\p{N}], and invalid bytes
)

// next returns the class and byte length of text's first character.
func next(text []byte) (class, int) {
	if c := text[0]; c < utf8.RuneSelf {
		switch {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
			return letter, 1
		case '0' <= c && c <= '9':
			return number, 1
		case c == ' ' || '\t' <= c && c <= '\r':
			return space, 1
		}
		return other, 1
	}
	r, n := utf8.DecodeRune(text)
	switch {
	case r == utf8.RuneError && n == 1:
		return other, 1
	case unicode.IsLetter(r):
		return letter, n
	case unicode.IsNumber(r):
		return number, n
	case unicode.Is(unicode.White_Space, r):
		return space, n
	}
	return other, n
}

// run returns the byte length of the longest prefix of text whose
// characters are all of class c.
func run(text []byte, c class) int {
	i := 0
	for i < len(text) {
		k, n := next(text[i:])
		if k != c {
			break
		}
		i += n
	}
	return i
}

// contractions are the pattern's first seven alternatives.
var contractions = []string{"'s", "'t", "'re", "'ve", "'m", "'ll", "'d"}

// pieceLen returns the length of the pattern's match at the start of the
// non-empty text: the first alternative that matches, as a backtracking
// regular expression engine picks it.
func pieceLen(text []byte) int {
	if text[0] == '\'' {
		for _, c := range contractions {
			if len(text) >= len(c) && string(text[:len(c)]) == c {
				return len(c)
			}
		}
	}
	// " ?\p{L}+", " ?\p{N}+", " ?[^\s\p{L}\p{N}]+": an optional space, then
	// a run of one class.
	start := 0
	if text[0] == ' ' && len(text) > 1 {
		start = 1
	}
	if k, _ := next(text[start:]); k != space {
		return start + run(text[start:], k)
	}
	// "\s+(?!\S)": the whitespace run, less its last character when a
	// non-space follows it, unless that leaves nothing; then "\s+" takes
	// the run of one.
	n := run(text, space)
	if n == len(text) {
		return n
	}
	last := n - 1
	for !utf8.RuneStart(text[last]) {
		last--
	}
	if last > 0 {
		return last
	}
	return n
}
