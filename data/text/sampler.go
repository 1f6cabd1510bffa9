package text

import (
	"fmt"
	"math/rand/v2"

	"github.com/psclip/psclip/data/dataset"
)

// EvalSeed seeds the samplers that estimate losses. A sampler with this seed,
// Reset before every evaluation, shows every evaluation the same batches, so
// that successive validation losses differ only because the model changed.
const EvalSeed = 1337

// pcgStream is the PCG's second seed word: it keeps the data order's stream
// apart from other PCGs seeded with the same run seed (initialisation,
// dropout) by a caller.
const pcgStream = 0x7e47_da7a_5eed_0001

// Sampler draws batches of random windows from a token stream, as nanoGPT's
// get_batch: B starts i uniform in [0, len-T), each giving the input
// tokens[i:i+T] and the target tokens[i+1:i+T+1]. The starts are
// data/dataset's Uniform sampler's over the len−T windows; its whole state
// is a PCG, which MarshalBinary saves and UnmarshalBinary restores for
// exact resume. It is not safe for concurrent use.
type Sampler struct {
	tokens       []uint16
	batch, block int
	seed         uint64
	pcg          *rand.PCG
	starts       *dataset.Uniform
}

// NewSampler returns a sampler of batch windows of block tokens from tokens,
// which must hold at least block+1 of them. It keeps tokens without copying.
func NewSampler(tokens []uint16, batch, block int, seed uint64) (*Sampler, error) {
	if batch < 1 {
		return nil, fmt.Errorf("batch size %d is not positive", batch)
	}
	if err := checkWindow(len(tokens), block); err != nil {
		return nil, err
	}
	pcg := rand.NewPCG(seed, pcgStream)
	starts, err := dataset.NewUniform(len(tokens)-block, batch, pcg)
	if err != nil {
		return nil, err
	}
	return &Sampler{tokens: tokens, batch: batch, block: block, seed: seed, pcg: pcg, starts: starts}, nil
}

// Shape returns the batch size B and block size T: Next fills B×T tokens.
func (s *Sampler) Shape() (batch, block int) { return s.batch, s.block }

// Next fills x and y, each of length B×T in row-major [B, T] order, with the
// next batch's inputs and targets. It panics if a length is wrong.
func (s *Sampler) Next(x, y []int32) {
	n := s.batch * s.block
	if len(x) != n || len(y) != n {
		panic(fmt.Sprintf("text: Sampler.Next: len(x), len(y) = %d, %d; want B×T = %d", len(x), len(y), n))
	}
	T := s.block
	for b, i := range s.starts.Next() {
		w := s.tokens[i:][:T+1]
		xb, yb := x[b*T:][:T], y[b*T:][:T]
		for t := range T {
			xb[t] = int32(w[t])
			yb[t] = int32(w[t+1])
		}
	}
}

// Reset returns the sampler to the state NewSampler gave it.
func (s *Sampler) Reset() { s.pcg.Seed(s.seed, pcgStream) }

// MarshalBinary returns the sampler's position in its random sequence.
func (s *Sampler) MarshalBinary() ([]byte, error) { return s.starts.MarshalBinary() }

// UnmarshalBinary restores a position saved by MarshalBinary; the batches
// that follow are those that followed the save.
func (s *Sampler) UnmarshalBinary(b []byte) error {
	if err := s.starts.UnmarshalBinary(b); err != nil {
		return fmt.Errorf("sampler state: %w", err)
	}
	return nil
}
