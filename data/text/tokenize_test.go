package text

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestSplitText(t *testing.T) {
	for _, c := range []struct {
		text       string
		frac       float64
		train, val string
		err        string
	}{
		{"abcdefghij", 0.1, "abcdefghi", "j", ""},
		{"abcdefghij", 0.25, "abcdefg", "hij", ""}, // ⌊10·0.75⌋ = 7
		{"ééééé", 0.2, "éééé", "é", ""},            // characters, not bytes
		{"a\xff\xfeb", 0.5, "a\xff", "\xfeb", ""},  // an invalid byte is one character
		{"abc", 0, "", "", "outside (0, 1)"},
		{"abc", 1, "", "", "outside (0, 1)"},
		{"abc", 0.1, "ab", "c", ""}, // ⌊2.7⌋
		{"ab", 0.9, "", "", "empty part"},
	} {
		train, val, err := SplitText([]byte(c.text), c.frac)
		if c.err == "" && (err != nil || string(train) != c.train || string(val) != c.val) ||
			c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("SplitText(%q, %v) = %q, %q, %v; want %q, %q, error %q", c.text, c.frac, train, val, err, c.train, c.val, c.err)
		}
	}
}

// Tokenize at a validation fraction of 0.1 with a character vocabulary is
// FromText's 90/10 split of the tokens, nanoGPT's shakespeare_char.
func TestTokenizeMatchesFromText(t *testing.T) {
	text := shakespeare(t)
	want, err := FromText(text, Char)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Tokenize(text, 0.1, want.Vocab.Encode)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Train, want.Train) || !slices.Equal(got.Val, want.Val) {
		t.Errorf("Tokenize: %d train and %d val tokens differ from FromText's %d and %d", len(got.Train), len(got.Val), len(want.Train), len(want.Val))
	}
	if _, err := Tokenize([]byte("abc\xff"), 0.5, want.Vocab.Encode); err == nil || !strings.Contains(err.Error(), "invalid UTF-8") {
		t.Errorf("Tokenize of a character outside the vocabulary: %v", err)
	}
}

// WriteBin writes what LoadBin reads back: the tokens and, where the corpus
// has one, its Vocab, which then bounds the tokens.
func TestWriteBinLoadBin(t *testing.T) {
	dir := t.TempDir()
	c, err := FromText([]byte(strings.Repeat("to be or not to be\n", 10)), Char)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteBin(dir, c); err != nil {
		t.Fatal(err)
	}
	got, err := LoadBin(dir, 50304)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Train, c.Train) || !slices.Equal(got.Val, c.Val) || got.Vocab == nil || !got.Vocab.Equal(c.Vocab) {
		t.Errorf("LoadBin after WriteBin: vocab %v, %d/%d tokens, want %d/%d", got.Vocab, len(got.Train), len(got.Val), len(c.Train), len(c.Val))
	}
	// A token beyond the vocabulary file's size is refused.
	bad := &Corpus{Vocab: c.Vocab, Train: []uint16{0, uint16(c.Vocab.Size())}, Val: []uint16{0}}
	if err := WriteBin(dir, bad); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadBin(dir, 50304); err == nil || !strings.Contains(err.Error(), "not below the vocabulary size") {
		t.Errorf("token outside vocab.txt: %v", err)
	}
	// Without a Vocab, WriteBin removes a stale vocabulary file.
	if err := WriteBin(dir, &Corpus{Train: []uint16{300, 1}, Val: []uint16{2}}); err != nil {
		t.Fatal(err)
	}
	if got, err := LoadBin(dir, 50304); err != nil || got.Vocab != nil || got.Tokenizer != "" || !slices.Equal(got.Train, []uint16{300, 1}) {
		t.Errorf("token directory without a vocabulary: %v, %v", got, err)
	}
	// The tokenizer of one without a vocabulary is named in its own file,
	// which a corpus without one removes.
	if err := WriteBin(dir, &Corpus{Tokenizer: "bpe 0123", Train: []uint16{300, 1}, Val: []uint16{2}}); err != nil {
		t.Fatal(err)
	}
	if got, err := LoadBin(dir, 50304); err != nil || got.Tokenizer != "bpe 0123" {
		t.Errorf("token directory of a named tokenizer: %+v, %v", got, err)
	}
	for _, bad := range []string{"", "bpe\nbpe\n", strings.Repeat("x", 300)} {
		if err := os.WriteFile(filepath.Join(dir, TokenizerFile), []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadBin(dir, 50304); err == nil || !strings.Contains(err.Error(), TokenizerFile) {
			t.Errorf("tokenizer file %q: %v", bad, err)
		}
	}
	if err := WriteBin(dir, &Corpus{Train: []uint16{300, 1}, Val: []uint16{2}}); err != nil {
		t.Fatal(err)
	}
	if got, err := LoadBin(dir, 50304); err != nil || got.Tokenizer != "" {
		t.Errorf("a stale tokenizer file: %+v, %v", got, err)
	}
	// A damaged vocabulary file is named.
	if err := os.WriteFile(filepath.Join(dir, VocabFile), []byte("chars"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadBin(dir, 50304); err == nil || !strings.Contains(err.Error(), VocabFile) {
		t.Errorf("damaged vocabulary file: %v", err)
	}
}
