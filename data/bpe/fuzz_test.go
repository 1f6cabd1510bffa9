package bpe

import (
	"bytes"
	"slices"
	"testing"
)

// FuzzRoundTrip checks on any bytes that the pieces are non-empty and
// concatenate to the input, that the parts Encode cuts a long text into
// have the same pieces, that Decode(Encode(b)) is b, byte for byte,
// and that Encode gives encoder.py's tokens (referenceEncode), with a small
// tokenizer and, where its files are present, GPT-2's.
func FuzzRoundTrip(f *testing.F) {
	for _, s := range []string{"", "hello world", "  a\n\n b\t", "don't 's", "\xff\xfe\x80", "é中文 ١٢٣ \u3000x", "\xe2\x82", "0000000000", "ab\ncd\n\n ef\n gh\n\u3000i\n\xffj"} {
		f.Add([]byte(s))
	}
	toks := []*Tokenizer{small(f)}
	if dir, err := DefaultDir(); err == nil {
		if tok, err := Load(dir); err == nil {
			toks = append(toks, tok)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var cat []byte
		Pieces(b, func(p []byte) bool {
			if len(p) == 0 {
				t.Fatalf("Pieces(%q): an empty piece", b)
			}
			cat = append(cat, p...)
			return true
		})
		if !bytes.Equal(cat, b) {
			t.Fatalf("Pieces(%q) concatenate to %q", b, cat)
		}
		// Encode's parts have the whole text's pieces.
		var whole, parts []string
		Pieces(b, func(p []byte) bool { whole = append(whole, string(p)); return true })
		for _, part := range cuts(b, 3) {
			Pieces(part, func(p []byte) bool { parts = append(parts, string(p)); return true })
		}
		if !slices.Equal(parts, whole) {
			t.Fatalf("Pieces of cuts(%q, 3) = %q, of the whole %q", b, parts, whole)
		}
		for _, tok := range toks {
			ids := tok.Encode(b)
			back, err := tok.Decode(ids)
			if err != nil || !bytes.Equal(back, b) {
				t.Fatalf("Decode(Encode(%q)) = %q, %v", b, back, err)
			}
			if again := tok.Encode(b); !slices.Equal(again, ids) {
				t.Fatalf("Encode(%q) from the cache = %v, first %v", b, again, ids)
			}
			if want := referenceEncode(tok, b); !slices.Equal(ids, want) {
				t.Fatalf("Encode(%q) = %v, the reference %v", b, ids, want)
			}
		}
	})
}
