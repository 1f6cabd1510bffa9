package gpt

import (
	"errors"
	"fmt"

	"github.com/psclip/psclip/data/text"
	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/tensor"
)

// Loss is the model's mean cross-entropy per token over iters batches of
// the configuration's micro-batch size drawn from tokens by a sampler seeded
// with seed (text.EvalSeed draws the batches training evaluates on), with
// dropout off. It checks the corpus against the checkpoint first: a
// different vocabulary would score the wrong characters. progress, if not
// nil, is called after every batch with the number done, for a long
// evaluation's progress line.
func (m *Model) Loss(corpus *text.Corpus, tokens []uint16, iters int, seed uint64, progress func(done int)) (float64, error) {
	if iters <= 0 {
		return 0, fmt.Errorf("%d evaluation batches: want at least one", iters)
	}
	if err := m.Config.CheckCorpus(corpus); err != nil {
		return 0, err
	}
	if m.Vocab != nil && corpus.Vocab != nil && !m.Vocab.Equal(corpus.Vocab) {
		return 0, errors.New("the corpus's vocabulary is not the checkpoint's: evaluate on the text the model was trained on")
	}
	s, err := text.NewSampler(tokens, m.Config.MicroBatch, m.Config.BlockSize, seed)
	if err != nil {
		return 0, err
	}
	return meanLoss(m.GPT, s, iters, progress)
}

// meanLoss is the mean per-token loss of model over the next iters batches
// of s, with dropout off; progress, if not nil, follows every batch.
func meanLoss(model nn.Layer, s *text.Sampler, iters int, progress func(done int)) (float64, error) {
	b, t := s.Shape()
	ids, targets := make([]int32, b*t), make([]int32, b*t)
	x := tensor.New(b, t)
	ctx := &nn.Context{}
	var sum float64
	var n int
	for i := range iters {
		if progress != nil && i > 0 {
			progress(i)
		}
		s.Next(ids, targets)
		setTokens(x, ids)
		losses, _, err := nn.CrossEntropy(model.Forward(ctx, x), targets)
		if err != nil {
			return 0, err
		}
		for _, l := range losses {
			sum += float64(l)
		}
		n += len(losses)
	}
	if progress != nil {
		progress(iters)
	}
	return sum / float64(n), nil
}
