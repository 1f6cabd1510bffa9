package bpe

import (
	"encoding/base64"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// bytesVocab returns GPT-2-format vocabulary JSON of the 256 bytes (token
// b is byte b) and extra.
func bytesVocab(t *testing.T, extra map[string]int) string {
	v := map[string]int{}
	for b := range 256 {
		v[string(byteRunes[b])] = b
	}
	maps.Copy(v, extra)
	j, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(j)
}

func TestReadRejects(t *testing.T) {
	he := map[string]int{"he": 256}
	for _, c := range []struct {
		name, vocab, merges, want string
	}{
		{"not JSON", "[", "", "vocabulary"},
		{"id out of range", bytesVocab(t, map[string]int{"he": 300}), "", "outside [0, 257)"},
		{"id twice", bytesVocab(t, map[string]int{"he": 5}), "", "id 5 is given twice"},
		{"byte missing", `{"a":0}`, "", "no token for the byte 0x00"},
		{"not byte-level", bytesVocab(t, map[string]int{"a b": 256}), "", "outside GPT-2's byte alphabet"},
		{"merge of unknown tokens", bytesVocab(t, he), "#version: 0.2\nh x\n", "merges line 2"},
		{"merge without its token", bytesVocab(t, he), "h e\nl l\n", "merges line 2"},
		{"one token on a line", bytesVocab(t, he), "he\n", "merges line 1"},
		{"merge twice", bytesVocab(t, he), "h e\nh e\n", "given twice"},
		{"part made later", bytesVocab(t, map[string]int{"he": 256, "hel": 257}), "he l\nh e\n", `comes before the one that makes "he"`},
	} {
		_, err := Read(strings.NewReader(c.vocab), strings.NewReader(c.merges))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

func TestReadTiktokenRejects(t *testing.T) {
	var b strings.Builder
	for i := range 256 {
		b.WriteString(tiktokenLine([]byte{byte(i)}, i))
	}
	bytes256 := b.String()
	for _, c := range []struct{ name, file, want string }{
		{"rank out of order", bytes256 + tiktokenLine([]byte("he"), 257), "want 256"},
		{"no rank", bytes256 + "aGU=\n", "not a base64 token"},
		{"bad base64", bytes256 + "a$ 256\n", "not a base64 token"},
		{"byte missing", tiktokenLine([]byte("a"), 0), "no token for the byte 0x00"},
		{"duplicate", bytes256 + tiktokenLine([]byte("a"), 256), "both \"a\""},
	} {
		_, err := ReadTiktoken(strings.NewReader(c.file))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
	// A valid file merges by the rank of the concatenation.
	tok, err := ReadTiktoken(strings.NewReader(bytes256 + tiktokenLine([]byte("ll"), 256) + tiktokenLine([]byte("he"), 257) + tiktokenLine([]byte("hell"), 258)))
	if err != nil {
		t.Fatal(err)
	}
	if got := tok.Encode([]byte("hello")); len(got) != 2 || got[0] != 258 || got[1] != 'o' {
		t.Errorf("Encode(hello) = %v, want [258 111]", got)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "fetch.sh") {
		t.Errorf("empty directory: %v", err)
	}
	// Hugging Face's names; merges.txt missing, then present.
	if err := os.WriteFile(filepath.Join(dir, "vocab.json"), []byte(bytesVocab(t, map[string]int{"he": 256})), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "merges.txt") {
		t.Errorf("without merges.txt: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "merges.txt"), []byte("#version: 0.2\nh e\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tok, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := tok.Encode([]byte("he")); len(got) != 1 || got[0] != 256 {
		t.Errorf("Encode(he) = %v, want [256]", got)
	}
}

// tiktokenLine is one line of a tiktoken rank file.
func tiktokenLine(b []byte, rank int) string {
	return base64.StdEncoding.EncodeToString(b) + " " + strconv.Itoa(rank) + "\n"
}

// ID is the same for the same tokens and merges, from either file format,
// and differs when a merge or a token's id differs.
func TestID(t *testing.T) {
	read := func(vocab, merges string) string {
		tok, err := Read(strings.NewReader(vocab), strings.NewReader(merges))
		if err != nil {
			t.Fatal(err)
		}
		return tok.ID()
	}
	v := bytesVocab(t, map[string]int{"he": 256, "hel": 257})
	id := read(v, "#version: 0.2\nh e\nhe l\n")
	var rank strings.Builder
	for b := range 256 {
		rank.WriteString(tiktokenLine([]byte{byte(b)}, b))
	}
	rank.WriteString(tiktokenLine([]byte("he"), 256) + tiktokenLine([]byte("hel"), 257))
	tik, err := ReadTiktoken(strings.NewReader(rank.String()))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(id, "bpe ") || len(id) != len("bpe ")+64 || tik.ID() != id {
		t.Errorf("ID %q, of the same tokenizer from tiktoken's file %q", id, tik.ID())
	}
	for _, other := range []string{
		read(bytesVocab(t, map[string]int{"he": 257, "hel": 256}), "#version: 0.2\nh e\nhe l\n"),
		read(bytesVocab(t, map[string]int{"he": 256, "el": 257}), "#version: 0.2\nh e\ne l\n"),
	} {
		if other == id {
			t.Errorf("another tokenizer has the ID %s", id)
		}
	}
}
