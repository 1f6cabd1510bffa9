package gpt

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/psclip/psclip/data/text"
	"github.com/psclip/psclip/privacy"
	"github.com/psclip/psclip/run"
	"github.com/psclip/psclip/setting"
	"github.com/psclip/psclip/train"
)

// dpConfig is tinyConfig for per-sample mode's dp-sgd with the fixed noise
// seed noiseSeed (0: secure noise): records of 17 tokens, 6 expected a
// step, cut into micro-batches of at most 2.
func dpConfig(noiseSeed uint64) Config {
	c := tinyConfig(ClipPerSample)
	c.Estimator, c.NoiseMultiplier, c.NoiseSeed, c.Delta = "dp-sgd", 1.1, noiseSeed, 1e-5
	return c.Trim()
}

// shakespeare is data/text's tinyshakespeare at character level: 1,003,854
// training characters, 59,050 records of 17 tokens.
func shakespeare(t testing.TB) *text.Corpus {
	t.Helper()
	c, err := text.LoadText(filepath.Join("..", "..", "data", "text", "testdata", "tinyshakespeare.txt"), text.Char)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// wantEpsilon is privacy's RDP ε (Balle et al.) of steps steps at q and σ.
func wantEpsilon(t *testing.T, q, sigma float64, steps int, delta float64) float64 {
	t.Helper()
	var h privacy.History
	h.Add(q, sigma, steps)
	res, err := privacy.Epsilon(h, delta, privacy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res.Epsilon
}

// TestDPSGDShakespeare trains 8 dp-sgd steps on tinyshakespeare's
// training split: N = ⌊1,003,854/17⌋ = 59,050 records at q = 6/N; every
// evaluation's ε (steps 0, 4, 8) and result.json's are privacy's accountant
// for the steps taken (and not for one step fewer); each step's logged
// size (written with ReleaseUnprotected) is the size of the Poisson sample
// text.Records draws with the fixed noise seed's secret for that step, and
// the sizes add up to the clipped sequences' denominator.
func TestDPSGDShakespeare(t *testing.T) {
	corpus := shakespeare(t)
	c := dpConfig(7)
	c.ReleaseUnprotected = true // the log's sample sizes
	dir := t.TempDir()
	s, err := trainRun(t, c, corpus, RunOptions{Out: dir})
	if err != nil {
		t.Fatal(err)
	}
	n := len(corpus.Train) / 17
	q := 6 / float64(n)
	if n != 59050 || s.Records != n || s.SampleRate != q || s.Delta != c.Delta {
		t.Fatalf("records %d at q %g, δ %g; want %d at %g (N = %d training tokens / 17), %g", s.Records, s.SampleRate, s.Delta, 59050, q, len(corpus.Train), c.Delta)
	}
	want := wantEpsilon(t, q, 1.1, 8, c.Delta)
	if float64(*s.Epsilon) != want || !(want > wantEpsilon(t, q, 1.1, 7, c.Delta)) {
		t.Errorf("ε %v, want privacy's %v for 8 steps", s.Epsilon, want)
	}

	sizes, evals := dpLog(t, dir)
	ref, err := text.NewRecords(corpus.Train, c.BlockSize, c.ExpectedBatch(), privacy.NewSecret(c.NoiseSeed))
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for k, size := range sizes {
		if b := ref.Next(); size != len(b) {
			t.Errorf("step %d: %d sequences, want the %d records of the step's Poisson sample", k+1, size, len(b))
		}
		total += size
	}
	if len(sizes) != 8 || int64(total) != s.Clippable {
		t.Errorf("%d steps of %d sequences in all; want 8 steps, %d sequences (clippable)", len(sizes), total, s.Clippable)
	}
	for step, eps := range evals {
		if w := wantEpsilon(t, q, 1.1, step, c.Delta); eps != w {
			t.Errorf("evaluation at step %d: ε %v, want %v", step, eps, w)
		}
	}
	if len(evals) != 3 {
		t.Errorf("ε logged at %d evaluations, want 3 (steps 0, 4, 8)", len(evals))
	}
}

// dpLog returns a dp-sgd run's per-step Poisson sample sizes and its
// evaluations' ε by step.
func dpLog(t *testing.T, dir string) (sizes []int, evals map[int]float64) {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, run.LogFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	evals = map[int]float64{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r struct {
			Step      int      `json:"step"`
			Sequences *int     `json:"sequences"`
			Epsilon   *float64 `json:"epsilon"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if r.Sequences != nil {
			sizes = append(sizes, *r.Sequences)
		}
		if r.Epsilon != nil {
			evals[r.Step] = *r.Epsilon
		}
	}
	return sizes, evals
}

// The sample of a Poisson step is the records text.Records drew, in
// ascending order, each an input of T tokens of the training text and its
// target one token further; PrivateStep's train.Split cuts it into
// ⌈B/MicroBatch⌉ micro-batches of sizes that differ by at most one.
func TestPoissonBatches(t *testing.T) {
	corpus := testCorpus(t)
	c := dpConfig(1)
	c.MicroBatch, c.Accum = 3, 4 // 12 expected of 1,058
	r, err := New(c, corpus, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ref, err := text.NewRecords(corpus.Train, c.BlockSize, 12, privacy.NewSecret(c.NoiseSeed))
	if err != nil {
		t.Fatal(err)
	}
	T := c.BlockSize
	for step := range 200 {
		idx := slices.Clone(ref.Next())
		sample, size := r.poissonSample()
		if size != len(idx) {
			t.Fatalf("step %d: %d records, want %d", step, size, len(idx))
		}
		var bs []train.Batch
		if size > 0 {
			if bs, err = train.Split(sample, (size+2)/3); err != nil {
				t.Fatal(err)
			}
		}
		if want := (len(idx) + 2) / 3; len(bs) != want {
			t.Fatalf("step %d: %d micro-batches for %d records, want %d", step, len(bs), len(idx), want)
		}
		row := 0
		for _, b := range bs {
			m := b.X.Dim(0)
			if m > 3 || m < len(idx)/len(bs) || len(b.Y) != m*T {
				t.Fatalf("step %d: a micro-batch of %d (of %d records in %d)", step, m, len(idx), len(bs))
			}
			for j := range m {
				w := corpus.Train[idx[row]*(T+1):][:T+1]
				for k := range T {
					if b.X.Data[j*T+k] != float32(w[k]) || b.Y[j*T+k] != int32(w[k+1]) {
						t.Fatalf("step %d: row %d is not record %d", step, row, idx[row])
					}
				}
				row++
			}
		}
		if row != len(idx) {
			t.Fatalf("step %d: %d rows for %d records", step, row, len(idx))
		}
	}
}

// A dp-sgd run resumes exactly: interrupted after 3 of 8 steps and resumed,
// it ends with the weights, optimizer state, log and ε of an uninterrupted
// run (the records' count of draws and the privacy history are in the
// checkpoint). Its 2 expected records a step (micro-batches of 1) give
// steps of several micro-batches and an empty one, a noise-only step.
func TestDPSGDResume(t *testing.T) {
	corpus := testCorpus(t)
	c := dpConfig(3)
	c.MicroBatch, c.Accum = 1, 2
	c.ReleaseUnprotected = true // the logs' losses and sample sizes
	whole, parts := t.TempDir(), t.TempDir()
	sw, err := trainRun(t, c, corpus, RunOptions{Out: whole})
	if err != nil {
		t.Fatal(err)
	}
	interruptAt(t, c, corpus, RunOptions{Out: parts}, 3)
	sp, err := trainRun(t, c, corpus, RunOptions{Out: parts, Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	sameCheckpoints(t, filepath.Join(whole, run.CheckpointFile), filepath.Join(parts, run.CheckpointFile))
	if a, b := logLosses(t, whole), logLosses(t, parts); a != b {
		t.Errorf("logs differ:\nuninterrupted %s\nresumed       %s", a, b)
	}
	a, ea := dpLog(t, whole)
	b, eb := dpLog(t, parts)
	if !slices.Contains(a, 0) || slices.Max(a) < 2 {
		t.Errorf("step sizes %v: want an empty step and one of several micro-batches", a)
	}
	if !slices.Equal(a, b) || len(ea) != len(eb) || *sw.Epsilon != *sp.Epsilon || sw.Clippable != sp.Clippable {
		t.Errorf("resumed: sizes %v, ε %v (%v); uninterrupted %v, ε %v (%v)", b, *sp.Epsilon, eb, a, *sw.Epsilon, ea)
	}
	for k, e := range ea {
		if eb[k] != e {
			t.Errorf("ε at step %d: %v resumed, %v uninterrupted", k, eb[k], e)
		}
	}
}

// Settings that would make a dp-sgd run's ε wrong are refused with a
// *setting.Error naming the field: random windows, δ not below 1/N (N =
// 1,058 records of the test corpus), no δ, corruption; Poisson sampling
// and δ are dp-sgd's only.
func TestDPSGDRefused(t *testing.T) {
	corpus := testCorpus(t)
	for _, tc := range []struct {
		name  string
		edit  func(c *Config)
		field string
	}{
		{"random windows", func(c *Config) { c.Sampling = SamplingWindows }, "Sampling"},
		{"unknown sampling", func(c *Config) { c.Sampling = "sliding" }, "Sampling"},
		{"δ = 1/N", func(c *Config) { c.Delta = 1.0 / 1058 }, "Delta"},
		{"δ = 1", func(c *Config) { c.Delta = 1 }, "Delta"},
		{"no δ", func(c *Config) { c.Delta = 0 }, "Delta"},
		{"no σ", func(c *Config) { c.NoiseMultiplier = 0 }, "NoiseMultiplier"},
		{"corruption", func(c *Config) {
			c.Corruption = Corruption{Corrupt: 0.1, CorruptLayout: LayoutScattered, CorruptKind: KindRandom}
		}, "Corrupt"},
		{"poisson for ps-clip-sgd", func(c *Config) {
			*c = tinyConfig(ClipPerSample)
			c.Sampling = SamplingPoisson
		}, "Sampling"},
		{"δ for global clipping", func(c *Config) { *c = tinyConfig(ClipGlobal); c.Delta = 1e-5 }, "Delta"},
		{"σ for global clipping", func(c *Config) { *c = tinyConfig(ClipGlobal); c.NoiseMultiplier = 1 }, "NoiseMultiplier"},
	} {
		c := dpConfig(1)
		tc.edit(&c)
		_, err := New(c, corpus, RunOptions{})
		var se *setting.Error
		if !errors.As(err, &se) || se.Field != tc.field {
			t.Errorf("%s: %v, want a *setting.Error naming %s", tc.name, err, tc.field)
		}
	}
	c := dpConfig(1)
	c.Delta = 0.99 / 1058
	r, err := New(c, corpus, RunOptions{})
	if err != nil {
		t.Fatalf("δ just below 1/N: %v", err)
	}
	r.Close()
}

// NoiseMultiplier's σ spends the target ε over the run's steps: a run at
// that σ ends at privacy's ε for it, at most the target and within
// Opacus' tolerance 0.01 of it; a configuration that is not dp-sgd's is
// refused.
func TestNoiseMultiplier(t *testing.T) {
	corpus := testCorpus(t)
	c := dpConfig(2)
	c.Delta = 1e-4
	sigma, err := NoiseMultiplier(c, corpus, 3)
	if err != nil {
		t.Fatal(err)
	}
	c.NoiseMultiplier = sigma
	s, err := trainRun(t, c, corpus, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if e := float64(*s.Epsilon); !(e <= 3 && e > 2.99) || e != wantEpsilon(t, s.SampleRate, sigma, 8, 1e-4) {
		t.Errorf("σ %v for ε 3: the run spent %v", sigma, e)
	}
	var se *setting.Error
	if _, err := NoiseMultiplier(tinyConfig(ClipPerSample), corpus, 3); !errors.As(err, &se) || se.Field != "Estimator" {
		t.Errorf("ps-clip-sgd: %v, want a *setting.Error naming Estimator", err)
	}
}

// Two private runs of the same configuration (the same Seed) draw
// different Poisson samples of records, from keys of crypto/rand, and are
// private; two runs with one fixed noise seed draw the same samples and
// are not private, because of the seed.
func TestPrivateRunsDrawSecretSamples(t *testing.T) {
	corpus := testCorpus(t)
	draw := func(c Config) ([][]int, *run.Privacy) {
		r, err := New(c, corpus, RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var b [][]int
		for range 3 {
			b = append(b, slices.Clone(r.records.Next()))
		}
		return b, r.Privacy()
	}
	a, pa := draw(dpConfig(0))
	b, pb := draw(dpConfig(0))
	if slices.EqualFunc(a, b, slices.Equal) {
		t.Error("two private runs of one configuration draw the same records")
	}
	if !pa.Private() || !pb.Private() {
		t.Errorf("a private run is not private: %v", pa.NotPrivateBecause())
	}
	f, pf := draw(dpConfig(9))
	g, _ := draw(dpConfig(9))
	if !slices.EqualFunc(f, g, slices.Equal) {
		t.Error("two runs of one fixed noise seed draw different records")
	}
	if pf.Private() || !slices.Equal(pf.NotPrivateBecause(), []string{run.BecauseFixedSeed}) {
		t.Errorf("a fixed-seed run: private %v because %v", pf.Private(), pf.NotPrivateBecause())
	}
}
