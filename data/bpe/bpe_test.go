package bpe

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// gpt2 returns GPT-2's tokenizer from DefaultDir, after checking its files
// against gpt2.sha256. Without the files (data/bpe/fetch.sh fetches them)
// the test is skipped, or fails under CI=true.
func gpt2(t testing.TB) *Tokenizer {
	t.Helper()
	dir, err := DefaultDir()
	if err != nil {
		t.Fatal(err)
	}
	sums, err := os.ReadFile("gpt2.sha256")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(sums)) {
		sum, name, _ := strings.Cut(strings.TrimSpace(line), "  ")
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("GPT-2's tokenizer files are needed under CI=true (run data/bpe/fetch.sh): %v", err)
			}
			t.Skipf("GPT-2's tokenizer files are absent (run data/bpe/fetch.sh): %v", err)
		}
		if got := fmt.Sprintf("%x", sha256.Sum256(b)); got != sum {
			t.Fatalf("%s has SHA-256 %s, want %s (gpt2.sha256)", name, got, sum)
		}
	}
	tok, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// published are token ids of GPT-2's tokenizer that others printed.
var published = []struct {
	text string
	ids  []int32
}{
	// tiktoken's tests/test_encoding.py (test_simple, test_simple_repeated).
	{"hello world", []int32{31373, 995}},
	{"0", []int32{15}},
	{"00", []int32{405}},
	{"000", []int32{830}},
	{"0000", []int32{2388}},
	{"00000", []int32{20483}},
	{"000000", []int32{10535}},
	{"0000000", []int32{24598}},
	{"00000000", []int32{8269}},
	{"000000000", []int32{10535, 830}},
	{"0000000000", []int32{8269, 405}},
	{"00000000000", []int32{8269, 830}},
	{"000000000000", []int32{8269, 2388}},
	{"0000000000000", []int32{8269, 20483}},
	{"00000000000000", []int32{8269, 10535}},
	{"000000000000000", []int32{8269, 24598}},
	{"0000000000000000", []int32{25645}},
	{"00000000000000000", []int32{8269, 10535, 830}},
	// tiktoken's test_simple with special tokens allowed gives
	// [31373, 220, 50256]; Encode treats the special token as text, so
	// only "hello " is checked.
	{"hello ", []int32{31373, 220}},
	{"", nil},
	// The prompt of nanoGPT's sample.py and build-nanogpt's train_gpt2.py.
	{"Hello, I'm a language model,", []int32{15496, 11, 314, 1101, 257, 3303, 2746, 11}},
	// Hugging Face tokenizers' ids as a Rust port's tests
	// (tests/bpe.rs, "matches_huggingface_on_a_gauntlet") record them.
	{"The quick brown fox jumps over the lazy dog.", []int32{464, 2068, 7586, 21831, 18045, 625, 262, 16931, 3290, 13}},
	{"  leading spaces and   runs\tand\nnewlines  ", []int32{220, 3756, 9029, 290, 220, 220, 4539, 197, 392, 198, 3605, 6615, 220, 220}},
	{"unicode: héllo wörld — em—dash, 中文字, emoji 🎉!", []int32{46903, 1098, 25, 289, 2634, 18798, 266, 30570, 335, 851, 795, 960, 42460, 11, 220,
		40792, 23877, 229, 27764, 245, 11, 44805, 12520, 236, 231, 0}},
	{"numbers 123 456789 mix3d, don't we'll they've I'd it's", []int32{77, 17024, 17031, 4153, 3134, 4531, 5022, 18, 67, 11, 836, 470, 356, 1183, 484,
		1053, 314, 1549, 340, 338}},
	{"CamelCase snake_case kebab-case UPPER 'quotes'", []int32{34, 17983, 20448, 17522, 62, 7442, 885, 65, 397, 12, 7442, 471, 10246, 1137, 705,
		421, 6421, 6}},
	{"trailing spaces   ", []int32{9535, 4386, 9029, 220, 220, 220}},
	{"a", []int32{64}},
	{" ", []int32{220}},
}

func TestGPT2PublishedIDs(t *testing.T) {
	tok := gpt2(t)
	if tok.Size() != 50257 {
		t.Errorf("Size() = %d, want 50257", tok.Size())
	}
	for _, c := range published {
		if got := tok.Encode([]byte(c.text)); !slices.Equal(got, c.ids) {
			t.Errorf("Encode(%q) = %v, want %v", c.text, got, c.ids)
		}
		if got, err := tok.Decode(c.ids); err != nil || string(got) != c.text {
			t.Errorf("Decode(%v) = %q, %v; want %q", c.ids, got, err, c.text)
		}
	}
	// <|endoftext|> decodes, and is the last id.
	if got, err := tok.Decode([]int32{31373, 220, 50256}); err != nil || string(got) != "hello <|endoftext|>" {
		t.Errorf("Decode([31373 220 50256]) = %q, %v", got, err)
	}
}

// TestGPT2LongRuns: tiktoken's test_catastrophically_repetitive, which
// checks that long runs of one character round-trip.
func TestGPT2LongRuns(t *testing.T) {
	tok := gpt2(t)
	for _, c := range []string{"^", "0", "a", "'s", " ", "\n"} {
		big := strings.Repeat(c, 10000)
		for _, s := range []string{big, " " + big, " " + big + "\n"} {
			if got, _ := tok.Decode(tok.Encode([]byte(s))); string(got) != s {
				t.Errorf("%q × 10000: round trip differs", c)
			}
		}
	}
}

// TestTiktokenMatchesGPT2: GPT-2's vocabulary written as a tiktoken rank
// file (as r50k_base.tiktoken: the ids as ranks, without <|endoftext|>)
// encodes tinyshakespeare and mixed text exactly as the merges do.
func TestTiktokenMatchesGPT2(t *testing.T) {
	tok := gpt2(t)
	var b bytes.Buffer
	for id := range tok.Size() - 1 {
		fmt.Fprintf(&b, "%s %d\n", base64.StdEncoding.EncodeToString(tok.Token(int32(id))), id)
	}
	tik, err := ReadTiktoken(&b)
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(filepath.Join("..", "text", "testdata", "tinyshakespeare.txt"))
	if err != nil {
		t.Fatal(err)
	}
	text = append(text, "\n日本語のテキスト, Ünïcödé, \xff\xfe invalid bytes, tabs\t\t and  spaces \u3000 ideographic space 1,234.5"...)
	want := tok.Encode(text)
	if got := tik.Encode(text); !slices.Equal(got, want) {
		i := 0
		for i < min(len(got), len(want)) && got[i] == want[i] {
			i++
		}
		t.Fatalf("tiktoken ranks: %d tokens, merges: %d; first difference at token %d", len(got), len(want), i)
	}
	if got, _ := tok.Decode(want); !bytes.Equal(got, text) {
		t.Error("tinyshakespeare does not round-trip")
	}
	t.Logf("tinyshakespeare and the mixed text: %d bytes, %d GPT-2 tokens", len(text), len(want))
}

// TestByteAlphabet pins bytes_to_unicode's map at the bytes whose
// characters GPT-2's files show: Ġ for the space, Ċ for the newline.
func TestByteAlphabet(t *testing.T) {
	for b, r := range map[byte]rune{0x00: 'Ā', '\t': 'ĉ', '\n': 'Ċ', ' ': 'Ġ', '!': '!', '~': '~', 0x7f: 'ġ', 0xa0: 'ł', 0xa1: '¡', 0xac: '¬', 0xad: 'Ń', 0xae: '®', 0xff: 'ÿ'} {
		if byteRunes[b] != r {
			t.Errorf("byte 0x%02x ↦ %q, want %q", b, byteRunes[b], r)
		}
	}
}

func TestPieces(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string
	}{
		{"hello world", []string{"hello", " world"}},
		{"  leading", []string{" ", " leading"}},
		{"a  b", []string{"a", " ", " b"}},
		{"trailing   ", []string{"trailing", "   "}},
		{"x\n\ny", []string{"x", "\n", "\n", "y"}},
		{"hi\t\tthere", []string{"hi", "\t", "\t", "there"}},
		{"don't I'm we'll 'S 's", []string{"don", "'t", " I", "'m", " we", "'ll", " '", "S", " '", "s"}},
		{"''s", []string{"''", "s"}},
		{"3.14 x2", []string{"3", ".", "14", " x", "2"}},
		{"é中文 ١٢٣", []string{"é中文", " ١٢٣"}},
		{" !!?", []string{" !!?"}},
		{"a \u3000b", []string{"a", " ", "\u3000", "b"}},
		{"\xff\xfe a\xffb", []string{"\xff\xfe", " a", "\xff", "b"}},
		{" ", []string{" "}},
		{" \xff", []string{" \xff"}},
		{"\u00a0x", []string{"\u00a0", "x"}},
	} {
		var got []string
		Pieces([]byte(c.text), func(p []byte) bool { got = append(got, string(p)); return true })
		if !slices.Equal(got, c.want) {
			t.Errorf("Pieces(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

// small returns a tokenizer of the 256 bytes, in increasing order, and the
// merges "h e", "l l", "he ll", "Ġ w", "o r" and "Ġw or".
func small(t testing.TB) *Tokenizer {
	t.Helper()
	vocab := map[string]int{}
	for b := range 256 {
		vocab[string(byteRunes[b])] = b
	}
	merges := []string{"h e", "l l", "he ll", "Ġ w", "o r", "Ġw or"}
	for _, m := range merges {
		vocab[strings.ReplaceAll(m, " ", "")] = len(vocab)
	}
	j, err := json.Marshal(vocab)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := Read(bytes.NewReader(j), strings.NewReader("#version: 0.2\n"+strings.Join(merges, "\n")+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestSmallEncode(t *testing.T) {
	tok := small(t)
	// 256 he, 257 ll, 258 hell, 259 Ġw, 260 or, 261 Ġwor.
	for _, c := range []struct {
		text string
		want []int32
	}{
		{"hello world", []int32{258, 'o', 261, 'l', 'd'}},
		{"hhe llll", []int32{'h', 256, ' ', 257, 257}},
		{"wor", []int32{'w', 260}},
		{"\xffhe", []int32{0xff, 256}},
		{"", nil},
	} {
		got := tok.Encode([]byte(c.text))
		if !slices.Equal(got, c.want) {
			t.Errorf("Encode(%q) = %v, want %v", c.text, got, c.want)
		}
		if back, err := tok.Decode(got); err != nil || string(back) != c.text {
			t.Errorf("Decode(Encode(%q)) = %q, %v", c.text, back, err)
		}
	}
	if _, err := tok.Decode([]int32{1, 262}); err == nil || !strings.Contains(err.Error(), "position 1") {
		t.Errorf("Decode of id 262 of 262 tokens: %v", err)
	}
}

// TestShakespeareMatchesNanoGPT: nanoGPT's data/shakespeare/prepare.py
// cuts tinyshakespeare at 90 % of its characters, encodes both parts with
// tiktoken's gpt2 and prints "train has 301,966 tokens", "val has 36,059
// tokens".
func TestShakespeareMatchesNanoGPT(t *testing.T) {
	tok := gpt2(t)
	text, err := os.ReadFile(filepath.Join("..", "text", "testdata", "tinyshakespeare.txt"))
	if err != nil {
		t.Fatal(err)
	}
	n := len(text) * 9 / 10 // ASCII: bytes are characters
	if train, val := len(tok.Encode(text[:n])), len(tok.Encode(text[n:])); train != 301966 || val != 36059 {
		t.Errorf("train %d, val %d tokens; want 301966, 36059", train, val)
	}
}

// BenchmarkEncode encodes tinyshakespeare (1.1 MB) with GPT-2's tokenizer,
// a fresh cache each time.
func BenchmarkEncode(b *testing.B) {
	tok := gpt2(b)
	text, err := os.ReadFile(filepath.Join("..", "text", "testdata", "tinyshakespeare.txt"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		clear(tok.cache)
		tok.Encode(text)
	}
}

// TestPiecesMatchRegexp compares Pieces with the pattern as a regular
// expression engine with lookahead runs it: 2000 random strings of
// spaces, line breaks, letters, digits, symbols and contractions, cut by
// JavaScript's engine (testdata/pieces.js wrote testdata/pieces.json).
func TestPiecesMatchRegexp(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "pieces.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Text   string
		Pieces []string
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		got := []string{}
		Pieces([]byte(c.Text), func(p []byte) bool { got = append(got, string(p)); return true })
		if !slices.Equal(got, c.Pieces) {
			t.Errorf("Pieces(%q) = %q, want %q", c.Text, got, c.Pieces)
		}
	}
}

// referenceEncode is GPT-2's encoder.py, written plainly for the tests:
// in each piece, the lowest-ranked pair is found, every occurrence of it
// joined left to right, and the pairs looked at again (O(n²) in a piece's
// length n).
func referenceEncode(t *Tokenizer, text []byte) []int32 {
	var out []int32
	Pieces(text, func(p []byte) bool {
		word := make([]int32, len(p))
		for i, b := range p {
			word[i] = t.byteID[b]
		}
		for len(word) > 1 {
			best, found := merge{}, false
			var bp pair
			for i := 0; i+1 < len(word); i++ {
				pr := pair{word[i], word[i+1]}
				if m, ok := t.merges[pr]; ok && (!found || m.rank < best.rank) {
					best, bp, found = m, pr, true
				}
			}
			if !found {
				break
			}
			var joined []int32
			for i := 0; i < len(word); {
				if i+1 < len(word) && word[i] == bp.a && word[i+1] == bp.b {
					joined = append(joined, best.id)
					i += 2
				} else {
					joined = append(joined, word[i])
					i++
				}
			}
			word = joined
		}
		out = append(out, word...)
		return true
	})
	return out
}

// TestEncodeMatchesReference: the heap-ordered merging gives encoder.py's
// tokens on tinyshakespeare and on a 10,000-letter word without spaces,
// and a 100,000-letter word takes well under 10 s (0.5 s on a loaded 2-core
// AMD EPYC; encoder.py's order, O(n²), takes about a minute).
func TestEncodeMatchesReference(t *testing.T) {
	tok := gpt2(t)
	text, err := os.ReadFile(filepath.Join("..", "text", "testdata", "tinyshakespeare.txt"))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	letters := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('a' + rng.IntN(26))
		}
		return b
	}
	for _, s := range [][]byte{text, letters(10000)} {
		if got, want := tok.Encode(s), referenceEncode(tok, s); !slices.Equal(got, want) {
			t.Errorf("Encode of %d bytes: %d tokens, the reference %d", len(s), len(got), len(want))
		}
	}
	long := letters(100000)
	start := time.Now()
	tok.Encode(long)
	d := time.Since(start)
	if d > 10*time.Second {
		t.Errorf("a word of 100,000 letters took %v", d)
	}
	t.Logf("a word of 100,000 letters: %v", d)
}

// TestEncodeParallel: a text cut into parts and encoded on several
// goroutines gives the tokens of one pass.
func TestEncodeParallel(t *testing.T) {
	tok := gpt2(t)
	text, err := os.ReadFile(filepath.Join("..", "text", "testdata", "tinyshakespeare.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := tok.encode(text)
	defer func(n int) { parallelBytes = n }(parallelBytes)
	parallelBytes = 1000
	if n := len(cuts(text, parallelBytes)); n < 100 {
		t.Fatalf("%d parts", n)
	}
	if got := tok.Encode(text); !slices.Equal(got, want) {
		t.Errorf("in parts: %d tokens, in one pass %d", len(got), len(want))
	}
}

// TestCutsKeepPieces: on every string of up to six symbols from spaces,
// line feeds, tabs, U+3000, letters, digits, punctuation and an invalid
// byte, the parts cuts makes have the whole string's pieces.
func TestCutsKeepPieces(t *testing.T) {
	symbols := []string{" ", "\n", "\t", "\u3000", "a", "1", ".", "\xff"}
	pieces := func(b []byte) []string {
		var out []string
		Pieces(b, func(p []byte) bool { out = append(out, string(p)); return true })
		return out
	}
	var walk func(s string, depth int)
	walk = func(s string, depth int) {
		for size := 1; size <= 3; size++ {
			var got []string
			for _, part := range cuts([]byte(s), size) {
				got = append(got, pieces(part)...)
			}
			if want := pieces([]byte(s)); !slices.Equal(got, want) {
				t.Fatalf("cuts(%q, %d): pieces %q, the whole's %q", s, size, got, want)
			}
		}
		if depth < 6 {
			for _, c := range symbols {
				walk(s+c, depth+1)
			}
		}
	}
	walk("", 0)
}
