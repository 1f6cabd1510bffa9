package text

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSplit(t *testing.T) {
	for _, n := range []int{0, 1, 9, 10, 11, 19, 1115394} {
		tokens := make([]uint16, n)
		train, val := Split(tokens)
		// nanoGPT: train = data[:int(n*0.9)].
		if want := int(float64(n) * 0.9); len(train) != want || len(val) != n-want {
			t.Errorf("Split(%d) = %d + %d, want %d + %d", n, len(train), len(val), want, n-want)
		}
		if cap(train) != len(train) {
			t.Errorf("Split(%d): train has capacity %d past its length %d, into val", n, cap(train), len(train))
		}
	}
}

func TestFromTextByte(t *testing.T) {
	text := []byte("0123456789abcdefghij")
	c, err := FromText(text, Byte)
	if err != nil {
		t.Fatal(err)
	}
	if string(bytes8(c.Train)) != "0123456789abcdefgh" || string(bytes8(c.Val)) != "ij" || c.Vocab.Size() != 256 {
		t.Fatalf("train %q, val %q, vocab %d", bytes8(c.Train), bytes8(c.Val), c.Vocab.Size())
	}
}

func bytes8(tokens []uint16) []byte {
	b := make([]byte, len(tokens))
	for i, t := range tokens {
		b[i] = byte(t)
	}
	return b
}

func TestLoadText(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.txt")
	if err := os.WriteFile(path, []byte("abracadabra"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := LoadText(path, Char)
	if err != nil {
		t.Fatal(err)
	}
	// Vocabulary a b c d r; "abracadab" | "ra".
	want := []uint16{0, 1, 4, 0, 2, 0, 3, 0, 1, 4, 0}
	if c.Name != path || !slices.Equal(c.Train, want[:9]) || !slices.Equal(c.Val, want[9:]) {
		t.Fatalf("corpus %q: train %v, val %v; want %v | %v", c.Name, c.Train, c.Val, want[:9], want[9:])
	}
	if err := c.CheckBlock(1); err != nil {
		t.Errorf("CheckBlock(1) with 2 val tokens: %v", err)
	}
}

// TestGoSourceRule checks the default corpus's file rule on a made-up tree.
func TestGoSourceRule(t *testing.T) {
	root := t.TempDir()
	for name, body := range map[string]string{
		"src/z.go":            "Z",
		"src/a.go":            "A",
		"src/a.txt":           "not Go",
		"src/b/c.go":          "C",
		"src/b/testdata/t.go": "testdata",
		"src/b/x_test.go":     "X",
		"src/testdata.go":     "T", // only directories named testdata are skipped
		"README.go":           "outside src",
	} {
		path := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := GoSource(root, 0)
	if err != nil || string(got) != "ACXTZ" {
		t.Fatalf("GoSource = %q, %v; want ACXTZ", got, err)
	}
	got, err = GoSource(root, 3)
	if err != nil || string(got) != "ACX" {
		t.Fatalf("GoSource capped at 3 = %q, %v; want ACX", got, err)
	}
	if _, err := GoSource(t.TempDir(), 0); err == nil {
		t.Error("GoSource of a root without src succeeded")
	}
	empty := t.TempDir()
	os.Mkdir(filepath.Join(empty, "src"), 0o755)
	if _, err := GoSource(empty, 0); err == nil || !strings.Contains(err.Error(), "no Go source under") {
		t.Errorf("GoSource of an empty src: %v", err)
	}
}

func TestGoSourceCutKeepsWholeCharacters(t *testing.T) {
	root := t.TempDir()
	os.Mkdir(filepath.Join(root, "src"), 0o755)
	if err := os.WriteFile(filepath.Join(root, "src", "a.go"), []byte("ab𝄞c"), 0o644); err != nil {
		t.Fatal(err)
	}
	for limit, want := range map[int64]string{2: "ab", 3: "ab", 5: "ab", 6: "ab𝄞", 7: "ab𝄞c", 100: "ab𝄞c"} {
		if got, err := GoSource(root, limit); err != nil || string(got) != want {
			t.Errorf("GoSource capped at %d = %q, %v; want %q", limit, got, err, want)
		}
	}
}

// TestGoSourceInstalled reads the start of the real default corpus.
func TestGoSourceInstalled(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	const limit = 256 << 10
	a, err := GoSource("", limit)
	if err != nil {
		t.Fatal(err)
	}
	if len(a) > limit || len(a) < limit-utf8.UTFMax || !utf8.Valid(a) || !bytes.HasPrefix(a, []byte("// Copyright")) {
		t.Fatalf("%d bytes (limit %d), valid UTF-8 %v, starts %.20q", len(a), limit, utf8.Valid(a), a)
	}
	b, err := GoSource("", limit)
	if err != nil || !bytes.Equal(a, b) {
		t.Fatalf("second read differs (%v)", err)
	}
	c, err := FromText(a, Char)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CheckBlock(256); err != nil {
		t.Fatal(err)
	}
}

func writeBin(t testing.TB, path string, tokens ...uint16) {
	t.Helper()
	b := make([]byte, 2*len(tokens))
	for i, tok := range tokens {
		binary.LittleEndian.PutUint16(b[2*i:], tok)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadBin(t *testing.T) {
	dir := t.TempDir()
	writeBin(t, filepath.Join(dir, "train.bin"), 1, 50303, 0, 258)
	writeBin(t, filepath.Join(dir, "val.bin"), 7, 0x1234)
	c, err := LoadBin(dir, 50304)
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != dir || c.Vocab != nil || !slices.Equal(c.Train, []uint16{1, 50303, 0, 258}) || !slices.Equal(c.Val, []uint16{7, 0x1234}) {
		t.Fatalf("LoadBin = %+v", c)
	}
}

// TestLoadTokensLarge crosses the read buffer's boundary.
func TestLoadTokensLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.bin")
	tokens := make([]uint16, 3<<19+1)
	for i := range tokens {
		tokens[i] = uint16(i * 7919 % 65535)
	}
	writeBin(t, path, tokens...)
	got, err := LoadTokens(path, MaxVocab)
	if err != nil || !slices.Equal(got, tokens) {
		t.Fatalf("LoadTokens: equal %v, %v", slices.Equal(got, tokens), err)
	}
	tokens[len(tokens)-1] = 65535
	writeBin(t, path, tokens...)
	if _, err := LoadTokens(path, 65535); err == nil || !strings.Contains(err.Error(), "token 65535 at byte offset 3145728 ") {
		t.Fatalf("last token out of range: %v", err)
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	path := func(name string) string { return filepath.Join(dir, name) }
	write := func(name string, b []byte) string {
		if err := os.MkdirAll(filepath.Dir(path(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path(name), b, 0o644); err != nil {
			t.Fatal(err)
		}
		return path(name)
	}
	write("empty.txt", nil)
	write("bad.txt", []byte("ok\xff"))
	write("short.txt", []byte("0123456789abcdefghij")) // 18 train, 2 val tokens
	write("no-val/train.bin", []byte{1, 0})
	write("no-train/val.bin", []byte{1, 0})
	write("odd/train.bin", []byte{1, 0, 2})
	write("odd/val.bin", []byte{1, 0})
	write("big-token/train.bin", []byte{1, 0, 0x80, 0xc4}) // 50304 at offset 2
	write("big-token/val.bin", []byte{1, 0})
	write("empty-val/train.bin", []byte{1, 0})
	write("empty-val/val.bin", nil)
	write("huge/train.bin", make([]byte, 64))
	write("huge/val.bin", []byte{1, 0})
	write("file/train.bin", []byte{1, 0})
	os.Mkdir(path("dir-train"), 0o755)
	os.Mkdir(path("dir-train/train.bin"), 0o755)
	write("dir-train/val.bin", []byte{1, 0})

	loadText := func(name string, l Level) error { _, err := LoadText(path(name), l); return err }
	loadBin := func(name string, vocab int) error { _, err := LoadBin(path(name), vocab); return err }
	checkBlock := func(name string, block int) error {
		c, err := LoadText(path(name), Byte)
		if err != nil {
			t.Fatal(err)
		}
		return c.CheckBlock(block)
	}
	sampler := func(n, batch, block int) error { _, err := NewSampler(make([]uint16, n), batch, block, 1); return err }
	limited := func(f func() error) error {
		defer func(old int64) { maxFileBytes = old }(maxFileBytes)
		maxFileBytes = 63
		return f()
	}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"empty text", loadText("empty.txt", Char), "empty.txt: empty corpus"},
		{"empty text at byte level", loadText("empty.txt", Byte), "empty.txt: empty corpus"},
		{"invalid UTF-8 at char level", loadText("bad.txt", Char), "bad.txt: invalid UTF-8 at byte offset 2"},
		{"missing text", loadText("nope.txt", Char), "nope.txt: no such file"},
		{"text is a directory", loadText("odd", Char), "odd is not a regular file"},
		{"text too large", limited(func() error { return loadText("huge/train.bin", Byte) }), "train.bin has 64 bytes, over the limit of 63"},
		{"train split too short", checkBlock("short.txt", 18), "short.txt: train split: 18 tokens are fewer than block size + 1 = 19"},
		{"val split too short", checkBlock("short.txt", 2), "short.txt: val split: 2 tokens are fewer than block size + 1 = 3"},
		{"block size zero", checkBlock("short.txt", 0), "block size 0 is not positive"},
		{"missing data directory", loadBin("nope", 256), "nope: no such file"},
		{"data directory is a file", loadBin("file/train.bin", 256), "train.bin is not a directory"},
		{"no train.bin", loadBin("no-train", 256), "no-train has no train.bin"},
		{"no val.bin", loadBin("no-val", 256), "no-val has no val.bin"},
		{"train.bin is a directory", loadBin("dir-train", 256), "train.bin is not a regular file"},
		{"odd size", loadBin("odd", 256), "odd/train.bin has an odd size of 3 bytes"},
		{"empty val.bin", loadBin("empty-val", 256), "empty-val/val.bin is empty"},
		{"token past the vocabulary", loadBin("big-token", 50304), "big-token/train.bin: token 50304 at byte offset 2 is not below the vocabulary size 50304"},
		{"oversized train.bin", limited(func() error { return loadBin("huge", 256) }), "huge/train.bin has 64 bytes, over the limit of 63"},
		{"vocabulary size zero", loadBin("huge", 0), "vocabulary size 0 is outside [1, 65536]"},
		{"vocabulary size past uint16", loadBin("huge", 65537), "vocabulary size 65537 is outside"},
		{"sampler batch zero", sampler(10, 0, 4), "batch size 0 is not positive"},
		{"sampler block zero", sampler(10, 1, 0), "block size 0 is not positive"},
		{"sampler too few tokens", sampler(4, 1, 4), "4 tokens are fewer than block size + 1 = 5"},
		{"unknown level", func() error { _, err := FromText([]byte("a"), Level(7)); return err }(), "unknown tokenisation level Level(7)"},
	} {
		switch {
		case tc.err == nil:
			t.Errorf("%s: no error", tc.name)
		case !strings.Contains(tc.err.Error(), tc.want) || strings.Contains(tc.err.Error(), "\n"):
			t.Errorf("%s: error %q, want one line containing %q", tc.name, tc.err, tc.want)
		}
	}
}

// FuzzLoadTokens checks that LoadTokens accepts exactly the non-empty,
// even-sized files whose tokens are all below the vocabulary size, and then
// returns those tokens.
func FuzzLoadTokens(f *testing.F) {
	f.Add([]byte{}, uint32(256))
	f.Add([]byte{1}, uint32(256))
	f.Add([]byte{1, 0, 255, 0}, uint32(256))
	f.Add([]byte{1, 0, 0, 1}, uint32(256))
	f.Add([]byte{0xff, 0xff}, uint32(65536))
	f.Add([]byte{0xff, 0xff}, uint32(65535))
	f.Add([]byte{0, 0}, uint32(0))
	f.Add([]byte{0, 0}, uint32(1<<31))
	path := filepath.Join(f.TempDir(), "tokens.bin")
	f.Fuzz(func(t *testing.T, data []byte, vocab uint32) {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := LoadTokens(path, int(vocab))
		valid := len(data) > 0 && len(data)%2 == 0 && vocab >= 1 && vocab <= MaxVocab
		var want []uint16
		for i := 0; valid && i+1 < len(data); i += 2 {
			tok := uint16(data[i]) | uint16(data[i+1])<<8
			valid = uint32(tok) < vocab
			want = append(want, tok)
		}
		if (err == nil) != valid {
			t.Fatalf("LoadTokens(% x, %d) error %v, want valid %v", data, vocab, err, valid)
		}
		if err == nil && !slices.Equal(got, want) {
			t.Fatalf("LoadTokens(% x) = %v, want %v", data, got, want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Fatalf("error of more than one line: %q", err)
		}
	})
}
