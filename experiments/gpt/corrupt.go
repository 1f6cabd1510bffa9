package gpt

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"strconv"

	"github.com/psclip/psclip/data/text"
	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/run"
	"github.com/psclip/psclip/setting"
)

// CorruptLayout says where a step's corrupted sequences lie among its
// micro-batches.
type CorruptLayout string

const (
	// LayoutScattered corrupts a uniformly random subset of the step's
	// sequences, spread over its micro-batches.
	LayoutScattered CorruptLayout = "scattered"
	// LayoutClustered corrupts c consecutive sequences of the step, so
	// that whole micro-batches are corrupt (as bad documents or shards
	// arrive together). The run starts at a random multiple of a, the
	// smallest power of two ≥ c, among the step's n = M·K sequences: the
	// draw reads n and c only, so a seed corrupts the same sequences at
	// every split of the step into K micro-batches of M. When M is a power
	// of two, the run touches the fewest micro-batches it can, ⌈c/M⌉: from
	// a micro-batch's start it fills ⌊c/M⌋ of them and part of one more
	// (M ≤ a), or it lies inside one (M ≥ a).
	LayoutClustered CorruptLayout = "clustered"
)

// CorruptLayouts lists the layouts in their command-line spelling.
var CorruptLayouts = []CorruptLayout{LayoutScattered, LayoutClustered}

// CorruptKind says what a corrupted sequence holds. Its inputs and targets
// are both the corrupted window's: the model is trained to predict the
// corrupted text.
type CorruptKind string

const (
	// KindRandom replaces every token by one uniform over the corpus's
	// vocabulary (the model's, for token files, which carry none).
	KindRandom CorruptKind = "random"
	// KindShuffle permutes the clean window's tokens uniformly at random:
	// the right characters in the wrong order.
	KindShuffle CorruptKind = "shuffle"
	// KindRepeat fills the window with one of its own tokens, drawn
	// uniformly from its positions: a run of one repeated character, as
	// scraped text has (rules, padding, runs of spaces).
	KindRepeat CorruptKind = "repeat"
)

// CorruptKinds lists the kinds in their command-line spelling.
var CorruptKinds = []CorruptKind{KindRandom, KindShuffle, KindRepeat}

// Corruption is the share of corrupted training sequences, where they lie
// and what they hold, as Config embeds it and a study lists its settings.
// The zero value is clean data, and a clean configuration's JSON has none
// of its keys, as before corruption existed.
type Corruption struct {
	Corrupt       float64       `json:"corrupt,omitempty"`
	CorruptLayout CorruptLayout `json:"corrupt_layout,omitempty"`
	CorruptKind   CorruptKind   `json:"corrupt_kind,omitempty"`
}

// CorruptionName names the corruption in data identities, tables and
// figures: "clean" or e.g. "F=0.2 scattered random".
func (c Corruption) CorruptionName() string {
	if c.Corrupt == 0 {
		return "clean"
	}
	return fmt.Sprintf("F=%s %s %s", strconv.FormatFloat(c.Corrupt, 'g', -1, 64), c.CorruptLayout, c.CorruptKind)
}

// Validate checks the corruption: 0 ≤ Corrupt < 1, and a known layout and
// kind when Corrupt > 0, unset when it is 0 (clean data reads neither).
func (c Corruption) Validate() error {
	if c.Corrupt != 0 {
		if err := setting.Fraction("Corrupt", c.Corrupt); err != nil {
			return err
		}
	}
	if c.Corrupt == 0 {
		switch {
		case c.CorruptLayout != "":
			return setting.Unread("CorruptLayout", c.CorruptLayout, "read only when Corrupt > 0")
		case c.CorruptKind != "":
			return setting.Unread("CorruptKind", c.CorruptKind, "read only when Corrupt > 0")
		}
		return nil
	}
	if _, err := ParseCorruptLayout(string(c.CorruptLayout)); err != nil {
		return err
	}
	_, err := ParseCorruptKind(string(c.CorruptKind))
	return err
}

// ParseCorruptLayout parses a command-line layout.
func ParseCorruptLayout(s string) (CorruptLayout, error) {
	for _, l := range CorruptLayouts {
		if string(l) == s {
			return l, nil
		}
	}
	return "", setting.Errorf("CorruptLayout", strconv.Quote(s), "scattered or clustered")
}

// ParseCorruptKind parses a command-line kind.
func ParseCorruptKind(s string) (CorruptKind, error) {
	for _, k := range CorruptKinds {
		if string(k) == s {
			return k, nil
		}
	}
	return "", setting.Errorf("CorruptKind", strconv.Quote(s), "random, shuffle or repeat")
}

// CorruptPerStep is the number of corrupted sequences in every step:
// round(Corrupt·n) of the step's n = MicroBatch·Accum sequences (all ranks'
// together in a data-parallel run), setting.ShareCount. Validate refuses a
// share that rounds to none or all of them.
func (c *Config) CorruptPerStep() int { return setting.ShareCount(c.Corrupt, c.MicroBatch*c.Accum) }

// identity is the run's data identity: the corpus's (CorpusIdentity) and,
// with corrupted training data, the corruption, so that a resume or a
// reused experiment run with another share, layout or kind is refused as
// other data.
func (c *Config) identity(corpus *text.Corpus) run.Data {
	d := CorpusIdentity(corpus)
	if c.Corrupt > 0 {
		d.SHA256["corruption"] = run.Hash([]byte(c.CorruptionName()))
	}
	return d
}

// corruptStream is the PCG stream of the corruption: its own, so that the
// clean sequences, the initialisation and the dropout masks are those of
// the same seed without corruption.
const corruptStream = 0xd209_0000_0000_0003

// corrupter corrupts a step's sequences as Config's Corruption says. Its
// whole state is its PCG, which checkpoints save.
type corrupter struct {
	m, block, vocab int
	count           int
	layout          CorruptLayout
	kind            CorruptKind
	pcg             *rand.PCG
	rng             *rand.Rand
	mask            []bool  // the step's corrupted sequences, in step order
	perm            []int   // scratch for the scattered draw
	w               []int32 // scratch: one window of block+1 tokens
}

// corruptVocab is the number of tokens random corruption draws from: the
// corpus's vocabulary, or for token files, which carry none, the model's.
func corruptVocab(cfg Config, corpus *text.Corpus) int {
	if corpus.Vocab != nil {
		return corpus.Vocab.Size()
	}
	n, _ := modelVocab(cfg, corpus)
	return n
}

// newCorrupter returns the corrupter of cfg with vocab tokens to draw
// random ones from, or nil when no sequence is corrupted.
func newCorrupter(cfg *Config, vocab int) *corrupter {
	if cfg.Corrupt == 0 {
		return nil
	}
	n := cfg.MicroBatch * cfg.Accum
	pcg := rand.NewPCG(cfg.Seed, corruptStream)
	return &corrupter{
		m: cfg.MicroBatch, block: cfg.BlockSize, vocab: vocab, count: cfg.CorruptPerStep(),
		layout: cfg.CorruptLayout, kind: cfg.CorruptKind, pcg: pcg, rng: rand.New(pcg),
		mask: make([]bool, n), perm: make([]int, n), w: make([]int32, cfg.BlockSize+1),
	}
}

// draw chooses the step's corrupted sequences (mask).
func (c *corrupter) draw() {
	clear(c.mask)
	switch c.layout {
	case LayoutScattered:
		for i := range c.perm {
			c.perm[i] = i
		}
		for i := range c.count { // a partial Fisher–Yates shuffle
			j := i + c.rng.IntN(len(c.perm)-i)
			c.perm[i], c.perm[j] = c.perm[j], c.perm[i]
			c.mask[c.perm[i]] = true
		}
	case LayoutClustered:
		a := 1 << bits.Len(uint(max(c.count, 1)-1)) // the smallest power of two ≥ count
		start := a * c.rng.IntN((len(c.mask)-c.count)/a+1)
		for i := range c.count {
			c.mask[start+i] = true
		}
	}
}

// apply corrupts micro-batch j's marked sequences in place: x and y hold
// its M windows' inputs and targets, row-major [M, T].
func (c *corrupter) apply(j int, x, y []int32) {
	T := c.block
	for b := range c.m {
		if !c.mask[j*c.m+b] {
			continue
		}
		xb, yb := x[b*T:][:T], y[b*T:][:T]
		w := c.w
		copy(w, xb)
		w[T] = yb[T-1]
		switch c.kind {
		case KindRandom:
			for t := range w {
				w[t] = int32(c.rng.IntN(c.vocab))
			}
		case KindShuffle:
			c.rng.Shuffle(len(w), func(a, b int) { w[a], w[b] = w[b], w[a] })
		case KindRepeat:
			tok := w[c.rng.IntN(len(w))]
			for t := range w {
				w[t] = tok
			}
		}
		copy(xb, w[:T])
		copy(yb, w[1:])
	}
}

// MarshalBinary saves the corruption's position in its random sequence.
func (c *corrupter) MarshalBinary() ([]byte, error) { return c.pcg.MarshalBinary() }

// UnmarshalBinary restores a position MarshalBinary saved.
func (c *corrupter) UnmarshalBinary(b []byte) error {
	if err := c.pcg.UnmarshalBinary(b); err != nil {
		return fmt.Errorf("corruption state: %w", err)
	}
	return nil
}

// Detection scores clipping as a detector of corrupted data over some
// steps: of Units gradients (sequences in per-sample mode, micro-batches in
// micro-batch mode, where a micro-batch is corrupt if it holds a corrupted
// sequence), Corrupt were corrupt, Clipped were clipped and CorruptClipped
// both. Precision is the share of clipped gradients that were corrupt,
// Recall the share of corrupt ones that were clipped, and CorruptShare the
// share of gradients that were corrupt: the precision of clipping at
// random. A ratio with nothing to divide by is null.
type Detection struct {
	Unit           string `json:"unit"`
	Units          int64  `json:"units"`
	Corrupt        int64  `json:"corrupt"`
	Clipped        int64  `json:"clipped"`
	CorruptClipped int64  `json:"corrupt_clipped"`
	Precision      Float  `json:"precision"`
	Recall         Float  `json:"recall"`
	CorruptShare   Float  `json:"corrupt_share"`
}

// add counts gradients whose clipping clipped and whose corruption corrupt
// report, one each.
func (d *Detection) add(clipped, corrupt []bool) {
	for i, c := range clipped {
		d.Units++
		if corrupt[i] {
			d.Corrupt++
		}
		if c {
			d.Clipped++
			if corrupt[i] {
				d.CorruptClipped++
			}
		}
	}
	d.ratios()
}

// merge adds o's counts to d's.
func (d *Detection) merge(o Detection) {
	d.Units += o.Units
	d.Corrupt += o.Corrupt
	d.Clipped += o.Clipped
	d.CorruptClipped += o.CorruptClipped
	d.ratios()
}

// ratios sets the ratios from the counts.
func (d *Detection) ratios() {
	d.Precision = ratio(d.CorruptClipped, d.Clipped)
	d.Recall = ratio(d.CorruptClipped, d.Corrupt)
	d.CorruptShare = ratio(d.Corrupt, d.Units)
}

func ratio(a, b int64) Float {
	if b == 0 {
		return Float(math.NaN())
	}
	return Float(float64(a) / float64(b))
}

// clipRecorder is a run's estimator, recording which of the step's
// sequences (Factors: a factor strictly between 0 and 1; a dropped sequence
// is not a clipped one) and which of its micro-batches (Scale below 1) it
// clipped, for Detection. It changes nothing the estimator computes.
type clipRecorder struct {
	estimator.Estimator
	samples, batches []bool
}

// Factors is the estimator's, recording its decisions.
func (c *clipRecorder) Factors(k0 int, norms, f []float64) estimator.Stats {
	st := c.Estimator.Factors(k0, norms, f)
	c.samples = c.samples[:k0]
	for _, x := range f {
		c.samples = append(c.samples, x > 0 && x < 1)
	}
	return st
}

// Scale is the estimator's, recording whether it clipped.
func (c *clipRecorder) Scale(norm float64) float64 {
	s := c.Estimator.Scale(norm)
	c.batches = append(c.batches, s < 1)
	return s
}

// reset forgets the last step's decisions.
func (c *clipRecorder) reset() { c.samples, c.batches = c.samples[:0], c.batches[:0] }

// step returns the step's Detection for the clip mode, given its corrupted
// sequences, and false when the mode clips neither sequences nor
// micro-batches or the step's decisions do not cover its batch (a
// micro-batch left out as non-finite).
func (c *clipRecorder) step(mode ClipMode, corrupt []bool, m int) (Detection, bool) {
	switch mode {
	case ClipPerSample:
		if len(c.samples) != len(corrupt) {
			return Detection{}, false
		}
		d := Detection{Unit: "sequence"}
		d.add(c.samples, corrupt)
		return d, true
	case ClipMicroBatch:
		if len(c.batches)*m != len(corrupt) {
			return Detection{}, false
		}
		bad := make([]bool, len(c.batches))
		for i, x := range corrupt {
			bad[i/m] = bad[i/m] || x
		}
		d := Detection{Unit: "micro-batch"}
		d.add(c.batches, bad)
		return d, true
	}
	return Detection{}, false
}
