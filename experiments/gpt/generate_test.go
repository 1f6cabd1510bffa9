package gpt

import (
	"testing"
	"unicode/utf8"

	"github.com/psclip/psclip/models"
)

// TestSampleFromCheckpoint trains a tiny model, reads it back from its
// directory and checks that sampling is deterministic in the seed.
func TestSampleFromCheckpoint(t *testing.T) {
	corpus := testCorpus(t)
	dir := t.TempDir()
	cfg := tinyConfig(ClipGlobal)
	cfg.Steps, cfg.Warmup = 3, 1
	if _, err := trainRun(t, cfg, corpus, RunOptions{Out: dir}); err != nil {
		t.Fatal(err)
	}
	m, err := LoadModel(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Step != 3 || m.Vocab == nil || m.Vocab.Size() != corpus.Vocab.Size() || m.Warning != "" {
		t.Fatalf("loaded step %d, vocab %v, warning %q", m.Step, m.Vocab, m.Warning)
	}
	o := models.GenerateOptions{Tokens: 40, Temperature: 1, TopK: 5, Seed: 7}
	a, err := m.Sample("the ", o)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := m.Sample("the ", o)
	o.Seed = 8
	c, _ := m.Sample("the ", o)
	if n := utf8.RuneCountInString(a); n != 40 {
		t.Errorf("sampled %d characters, want 40", n)
	}
	if a != b {
		t.Errorf("same seed, different text: %q, %q", a, b)
	}
	if a == c {
		t.Errorf("seeds 7 and 8 gave the same text %q", a)
	}
	// A prompt longer than the block is cropped, not an error.
	if _, err := m.Sample("the quick brown fox jumps over a lazy dog", o); err != nil {
		t.Error(err)
	}
	if _, err := m.Sample("Zebra", o); err == nil {
		t.Error("a prompt with characters outside the vocabulary was accepted")
	}
}
