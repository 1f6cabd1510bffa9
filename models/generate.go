package models

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/setting"
	"github.com/psclip/psclip/tensor"
)

// GenerateOptions control sampling from a language model (Generate), as
// nanoGPT's sample.py.
type GenerateOptions struct {
	// Tokens is the number of tokens to generate.
	Tokens int
	// Temperature divides the logits: below 1 sharpens the distribution.
	// It must be > 0.
	Temperature float64
	// TopK keeps only the K most likely tokens (0: all).
	TopK int
	// Seed seeds the sampling; equal seeds give equal text.
	Seed uint64
	// Vocab, if > 0, draws only among the tokens below it: the real
	// tokens of a padded vocabulary (GPT-2's 50257 of 50304, a corpus's
	// characters in a larger pretrained model's), which a decoder knows.
	// It must not exceed the model's vocabulary.
	Vocab int
	// Each, if set, receives every new token as soon as it is drawn, so
	// that a long generation can be streamed; an error it returns stops
	// the generation and is returned.
	Each func(token int32) error
}

// Check reports the first invalid option as a *setting.Error naming the
// field; the logits are divided by Temperature in float32.
func (o GenerateOptions) Check() error {
	return setting.First(
		setting.Positive("Tokens", o.Tokens),
		setting.Positive32("Temperature", o.Temperature),
		setting.NonNegative("TopK", o.TopK),
		setting.NonNegative("Vocab", o.Vocab),
	)
}

// Generate continues prompt (at least one token) by o.Tokens tokens drawn
// from model, an autoregressive language model with context blockSize that
// maps [1, T] token ids to [1, T, V] logits (a GPT: see GPT.Generate). The
// context is cropped to the last blockSize tokens, as nanoGPT's generate.
// It returns only the new tokens. Its errors for bad options or an empty
// prompt are *setting.Error values.
func Generate(model nn.Layer, blockSize int, prompt []int32, o GenerateOptions) ([]int32, error) {
	if err := setting.First(o.Check(), setting.Positive("BlockSize", blockSize)); err != nil {
		return nil, err
	}
	if len(prompt) == 0 {
		return nil, setting.Errorf("Prompt", "no token", "at least one token to continue")
	}
	rng := rand.New(rand.NewPCG(o.Seed, sampleStream))
	ctx := &nn.Context{}
	seq := slices.Clone(prompt)
	var probs []float64
	for range o.Tokens {
		window := seq[max(0, len(seq)-blockSize):]
		x := tensor.New(1, len(window))
		for i, t := range window {
			x.Data[i] = float32(t)
		}
		out := model.Forward(ctx, x)
		v := out.Dim(-1)
		logits := out.Data[len(out.Data)-v:]
		if o.Vocab > 0 {
			if o.Vocab > v {
				return nil, setting.Errorf("Vocab", o.Vocab, "at most the model's %d tokens", v)
			}
			logits = logits[:o.Vocab]
		}
		probs = nextTokenProbs(probs, logits, o.Temperature, o.TopK)
		seq = append(seq, int32(draw(rng, probs)))
		if o.Each != nil {
			if err := o.Each(seq[len(seq)-1]); err != nil {
				return nil, err
			}
		}
	}
	return seq[len(prompt):], nil
}

// Generate continues prompt by o.Tokens tokens drawn from the model, its
// context its BlockSize: Generate for a GPT. Token ids must be below its
// VocabSize.
func (m *GPT) Generate(prompt []int32, o GenerateOptions) ([]int32, error) {
	for i, t := range prompt {
		if t < 0 || int(t) >= m.cfg.VocabSize {
			return nil, setting.Errorf("Prompt", t, "token ids in [0, %d) (token %d)", m.cfg.VocabSize, i)
		}
	}
	return Generate(m, m.cfg.BlockSize, prompt, o)
}

// sampleStream is the PCG stream of text generation.
const sampleStream = 0x5a4e_7e47_0000_0003

// nextTokenProbs returns softmax(logits/temperature) restricted to the topK
// largest logits (all if topK is 0 or at least len(logits)), in float64.
// Ties at the k-th largest logit are all kept, as nanoGPT's
// logits[logits < v[-1]] = -inf.
func nextTokenProbs(p []float64, logits []float32, temperature float64, topK int) []float64 {
	p = slices.Grow(p[:0], len(logits))[:len(logits)]
	cut := math.Inf(-1)
	if topK > 0 && topK < len(logits) {
		sorted := slices.Clone(logits)
		slices.Sort(sorted)
		cut = float64(sorted[len(sorted)-topK])
	}
	mx := math.Inf(-1)
	for _, l := range logits {
		mx = max(mx, float64(l))
	}
	var sum float64
	for i, l := range logits {
		if float64(l) < cut {
			p[i] = 0
			continue
		}
		p[i] = math.Exp((float64(l) - mx) / temperature)
		sum += p[i]
	}
	for i := range p {
		p[i] /= sum
	}
	return p
}

// draw samples an index from the distribution p.
func draw(rng *rand.Rand, p []float64) int {
	u := rng.Float64()
	last := 0
	for i, q := range p {
		if q == 0 {
			continue
		}
		if u < q {
			return i
		}
		u -= q
		last = i
	}
	return last // rounding left u just above the total
}
