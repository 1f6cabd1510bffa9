package text

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// shakespeare returns the tinyshakespeare corpus (Karpathy's char-rnn
// input.txt, the text of nanoGPT's shakespeare_char), kept in testdata so
// that the test runs in every clone.
func shakespeare(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "tinyshakespeare.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestShakespeareMatchesNanoGPT(t *testing.T) {
	text := shakespeare(t)
	c, err := FromText(text, Char)
	if err != nil {
		t.Fatal(err)
	}
	// The figures nanoGPT's data/shakespeare_char/prepare.py prints.
	const chars = "\n !$&',-.3:;?ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	if got, _ := c.Vocab.MarshalText(); string(got) != charPrefix+chars {
		t.Errorf("vocabulary = %q, want %q", got, charPrefix+chars)
	}
	if c.Vocab.Size() != 65 || len(c.Train) != 1003854 || len(c.Val) != 111540 {
		t.Errorf("vocab %d, train %d, val %d tokens; want 65, 1003854, 111540", c.Vocab.Size(), len(c.Train), len(c.Val))
	}
	// Token i is the i-th character of the sorted set.
	for i, tok := range c.Train[:1000] {
		if rune(chars[tok]) != rune(text[i]) {
			t.Fatalf("token %d = %d (%q), text has %q", i, tok, chars[tok], text[i])
		}
	}
	got, err := c.Vocab.Decode(widen(append(c.Train, c.Val...)))
	if err != nil {
		t.Fatal(err)
	}
	if got != string(text) {
		t.Error("decoding the train and val tokens does not give the text back")
	}
}

func widen(tokens []uint16) []int32 {
	out := make([]int32, len(tokens))
	for i, t := range tokens {
		out[i] = int32(t)
	}
	return out
}

func TestCharVocab(t *testing.T) {
	text := []byte("héllo wörld ✓ héllo")
	v, err := NewCharVocab(text)
	if err != nil {
		t.Fatal(err)
	}
	want := []rune{' ', 'd', 'h', 'l', 'o', 'r', 'w', 'é', 'ö', '✓'}
	if !slices.Equal(v.runes, want) {
		t.Fatalf("vocabulary %q, want %q", v.runes, want)
	}
	tokens, err := v.Encode(text)
	if err != nil {
		t.Fatal(err)
	}
	if len(tokens) != utf8.RuneCount(text) {
		t.Fatalf("%d tokens for %d characters", len(tokens), utf8.RuneCount(text))
	}
	for i, r := range []rune(string(text)) {
		if want[tokens[i]] != r {
			t.Fatalf("token %d = %d, is %q, want %q", i, tokens[i], want[tokens[i]], r)
		}
	}
	if got, err := v.Decode(widen(tokens)); err != nil || got != string(text) {
		t.Fatalf("Decode = %q, %v; want %q", got, err, text)
	}
}

func TestByteVocab(t *testing.T) {
	v := ByteVocab()
	text := []byte("a\xff\x00é") // any bytes, valid UTF-8 or not
	tokens, err := v.Encode(text)
	if err != nil {
		t.Fatal(err)
	}
	if want := []uint16{'a', 0xff, 0, 0xc3, 0xa9}; !slices.Equal(tokens, want) {
		t.Fatalf("Encode = %v, want %v", tokens, want)
	}
	if got, err := v.Decode(widen(tokens)); err != nil || got != string(text) {
		t.Fatalf("Decode = %q, %v; want %q", got, err, text)
	}
	if v.Size() != 256 || v.Level() != Byte {
		t.Fatalf("Size, Level = %d, %v", v.Size(), v.Level())
	}
}

func TestVocabTextRoundTrip(t *testing.T) {
	cv, err := NewCharVocab([]byte("ba\n\"ü"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []*Vocab{cv, ByteVocab()} {
		// Through JSON, as checkpoint metadata would carry it.
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var got Vocab
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("unmarshal %s: %v", b, err)
		}
		if got.level != v.level || !slices.Equal(got.runes, v.runes) || got.ascii != v.ascii {
			t.Errorf("%s: round trip gave %+v, want %+v", b, got, *v)
		}
	}
	if b, _ := cv.MarshalText(); string(b) != "char:\n\"abü" {
		t.Errorf("MarshalText = %q", b)
	}
}

func TestVocabEqual(t *testing.T) {
	vocab := func(s string) *Vocab {
		v, err := NewCharVocab([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct {
		a, b *Vocab
		want bool
	}{
		{vocab("abc"), vocab("cba"), true},
		{vocab("abc"), vocab("abd"), false},
		{vocab("abc"), vocab("abcd"), false},
		{ByteVocab(), ByteVocab(), true},
		{ByteVocab(), vocab("ab"), false},
	} {
		if got := tc.a.Equal(tc.b); got != tc.want {
			t.Errorf("%v.Equal(%v) = %v, want %v", tc.a.runes, tc.b.runes, got, tc.want)
		}
	}
}

func TestParseLevel(t *testing.T) {
	for _, l := range []Level{Char, Byte} {
		if got, err := ParseLevel(l.String()); got != l || err != nil {
			t.Errorf("ParseLevel(%q) = %v, %v", l, got, err)
		}
	}
	if _, err := ParseLevel("word"); err == nil {
		t.Error("ParseLevel(word) succeeded")
	}
}

func TestVocabErrors(t *testing.T) {
	abc, err := NewCharVocab([]byte("abc"))
	if err != nil {
		t.Fatal(err)
	}
	unmarshal := func(s string) error { var v Vocab; return v.UnmarshalText([]byte(s)) }
	encode := func(v *Vocab, s string) error { _, err := v.Encode([]byte(s)); return err }
	decode := func(v *Vocab, tokens ...int32) error { _, err := v.Decode(tokens); return err }
	newChar := func(s string) error { _, err := NewCharVocab([]byte(s)); return err }
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"char vocab of nothing", newChar(""), "empty character vocabulary"},
		{"char vocab of invalid UTF-8", newChar("ab\xffc"), "invalid UTF-8 at byte offset 2"},
		{"char vocab of a surrogate", newChar("\xed\xa0\x80"), "invalid UTF-8 at byte offset 0"},
		{"unknown character", encode(abc, "abd"), `character 'd' at byte offset 2 is not in the vocabulary`},
		{"zero Vocab", encode(&Vocab{}, "a"), `character 'a' at byte offset 0 is not in the vocabulary`},
		{"unknown non-ASCII character", encode(abc, "aé"), `character 'é' at byte offset 1`},
		{"invalid UTF-8 to encode", encode(abc, "a\xc3"), "invalid UTF-8 at byte offset 1"},
		{"token past the vocabulary", decode(abc, 0, 3), "token 3 at position 1 is outside the vocabulary of 3"},
		{"negative token", decode(abc, -1), "token -1 at position 0"},
		{"byte token 256", decode(ByteVocab(), 256), "token 256 at position 0 is outside the vocabulary of 256"},
		{"empty text form", unmarshal(""), "neither"},
		{"unknown text form", unmarshal("word:abc"), "neither"},
		{"empty char form", unmarshal("char:"), "empty character vocabulary"},
		{"unsorted char form", unmarshal("char:ba"), "not in strictly increasing order"},
		{"repeated character", unmarshal("char:abb"), "not in strictly increasing order"},
		{"invalid UTF-8 form", unmarshal("char:a\xff"), "not valid UTF-8"},
	} {
		switch {
		case tc.err == nil:
			t.Errorf("%s: no error", tc.name)
		case !strings.Contains(tc.err.Error(), tc.want) || strings.Contains(tc.err.Error(), "\n"):
			t.Errorf("%s: error %q, want one line containing %q", tc.name, tc.err, tc.want)
		}
	}
}

func TestTooManyCharacters(t *testing.T) {
	var b bytes.Buffer
	for r := rune(0); r <= MaxVocab+2048; r++ { // past the surrogates' 2048
		if utf8.ValidRune(r) {
			b.WriteRune(r)
		}
	}
	if _, err := NewCharVocab(b.Bytes()); err == nil || !strings.Contains(err.Error(), "65537 distinct characters") {
		t.Fatalf("NewCharVocab of 65537 characters: %v", err)
	}
	b.Truncate(b.Len() - utf8.RuneLen(MaxVocab+2048))
	if v, err := NewCharVocab(b.Bytes()); err != nil || v.Size() != MaxVocab {
		t.Fatalf("NewCharVocab of 65536 characters: %v", err)
	}
}

// FuzzVocab checks that any text round-trips through its own character
// vocabulary and the byte vocabulary, and that the vocabulary's text form
// round-trips and is canonical.
func FuzzVocab(f *testing.F) {
	for _, s := range []string{"", "a", "hello, world\n", "héllo ✓ 𝄞", "a\xffb", "\xed\xa0\x80", "char:", "char:ab", "char:ba", "byte"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		b, err := ByteVocab().Encode(text)
		if err != nil || len(b) != len(text) {
			t.Fatalf("byte Encode: %d tokens, %v", len(b), err)
		}
		if got, err := ByteVocab().Decode(widen(b)); err != nil || got != string(text) {
			t.Fatalf("byte round trip gave %q, %v", got, err)
		}

		v, err := NewCharVocab(text)
		if (err == nil) != (len(text) > 0 && utf8.Valid(text)) {
			t.Fatalf("NewCharVocab(%q): %v", text, err)
		}
		if err == nil {
			distinct := map[rune]bool{}
			for _, r := range string(text) {
				distinct[r] = true
			}
			if v.Size() != len(distinct) {
				t.Fatalf("vocabulary of %d, text has %d distinct characters", v.Size(), len(distinct))
			}
			tokens, err := v.Encode(text)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := v.Decode(widen(tokens)); err != nil || got != string(text) {
				t.Fatalf("char round trip gave %q, %v", got, err)
			}
			form, _ := v.MarshalText()
			var back Vocab
			if err := back.UnmarshalText(form); err != nil || !slices.Equal(back.runes, v.runes) {
				t.Fatalf("text form %q gave %q, %v", form, back.runes, err)
			}
		}

		var u Vocab
		if err := u.UnmarshalText(text); err == nil {
			if form, _ := u.MarshalText(); !bytes.Equal(form, text) {
				t.Fatalf("UnmarshalText(%q) then MarshalText = %q", text, form)
			}
		}
	})
}
