package bpe

import (
	"bytes"
	"slices"
	"testing"
)

// FuzzRoundTrip checks on any bytes that the pieces are non-empty and
// concatenate to the input, that Decode(Encode(b)) is b, byte for byte,
// and that Encode gives encoder.py's tokens (referenceEncode), with a small
// tokenizer and, where its files are present, GPT-2's.
func FuzzRoundTrip(f *testing.F) {
	for _, s := range []string{"", "hello world", "  a\n\n b\t", "don't 's", "\xff\xfe\x80", "é中文 ١٢٣ \u3000x", "\xe2\x82", "0000000000"} {
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
