package gpt

import (
	"math"
	"math/rand/v2"
	"testing"
	"unicode/utf8"
)

func TestNextTokenProbs(t *testing.T) {
	logits := []float32{1, 3, -2, 3, 0.5, 2}
	for _, tc := range []struct {
		temperature float64
		topK        int
		kept        []bool
	}{
		{1, 0, []bool{true, true, true, true, true, true}},
		{0.5, 6, []bool{true, true, true, true, true, true}},
		{2, 3, []bool{false, true, false, true, false, true}},
		{1, 2, []bool{false, true, false, true, false, false}},
		// The two tied largest logits are both kept, as nanoGPT keeps
		// every logit ≥ the k-th largest.
		{1, 1, []bool{false, true, false, true, false, false}},
	} {
		p := nextTokenProbs(nil, logits, tc.temperature, tc.topK)
		// Brute force: exp(l/T) over the kept logits, normalised.
		var z float64
		for i, l := range logits {
			if tc.kept[i] {
				z += math.Exp(float64(l) / tc.temperature)
			}
		}
		for i, l := range logits {
			want := 0.0
			if tc.kept[i] {
				want = math.Exp(float64(l)/tc.temperature) / z
			}
			if math.Abs(p[i]-want) > 1e-12 {
				t.Errorf("T=%v top-k %d: p[%d] = %v, want %v", tc.temperature, tc.topK, i, p[i], want)
			}
		}
	}
}

func TestDrawFrequencies(t *testing.T) {
	p := []float64{0.1, 0, 0.6, 0.3}
	rng := rand.New(rand.NewPCG(4, 4))
	const n = 200000
	count := make([]int, len(p))
	for range n {
		count[draw(rng, p)]++
	}
	for i, c := range count {
		f := float64(c) / n
		// 5 standard deviations of a binomial frequency.
		if tol := 5 * math.Sqrt(p[i]*(1-p[i])/n); math.Abs(f-p[i]) > tol || (p[i] == 0 && c > 0) {
			t.Errorf("token %d drawn with frequency %.4f, want %.4f", i, f, p[i])
		}
	}
}

func TestGenerateOptionsCheck(t *testing.T) {
	good := GenerateOptions{Tokens: 5, Temperature: 1, TopK: 0}
	for _, o := range []GenerateOptions{
		{Tokens: 0, Temperature: 1},
		{Tokens: 5, Temperature: 0},
		{Tokens: 5, Temperature: math.NaN()},
		{Tokens: 5, Temperature: math.Inf(1)},
		{Tokens: 5, Temperature: 1, TopK: -1},
	} {
		if o.Check() == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	if err := good.Check(); err != nil {
		t.Errorf("%+v: %v", good, err)
	}
}

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
	o := GenerateOptions{Tokens: 40, Temperature: 1, TopK: 5, Seed: 7}
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
