package text

import (
	"encoding/binary"
	"fmt"

	"github.com/psclip/psclip/data/dataset"
	"github.com/psclip/psclip/privacy"
)

// Records cuts a token stream into disjoint records and draws Poisson
// samples of them, as DP-SGD's accounting assumes. Record i is the window
// tokens[i(T+1) : (i+1)(T+1)] of T+1 tokens, T the block size: input
// tokens[i(T+1) : i(T+1)+T] and target one token further. There are
// N = ⌊len/(T+1)⌋ records; the last len mod (T+1) tokens belong to none,
// and every other token to exactly one, so that a change to one record
// changes one sample of any batch, whichever records it holds. Every
// sample joins each batch independently with probability q =
// Expected/N (1 for Expected ≥ N), so batch sizes are Binomial(N, q) and a
// batch may be empty.
//
// Batch k's records are data/dataset's Poisson sampler's step k, the
// sample (k, 0) of a privacy.Poisson keyed by the run's secret (never by
// its seed, which its outputs name), so the count of batches drawn is the
// whole state: MarshalBinary saves it and UnmarshalBinary restores it, for
// an exact resume under a fixed seed's secret. A Records is not safe for
// concurrent use.
type Records struct {
	tokens  []uint16
	block   int
	poisson *dataset.Poisson
}

// NewRecords returns the records of block+1 tokens of tokens, sampled with
// an expected expected records a batch keyed by secret. It keeps tokens
// without copying. Its error says why tokens hold no record.
func NewRecords(tokens []uint16, block, expected int, secret *privacy.Secret) (*Records, error) {
	if expected < 1 {
		return nil, fmt.Errorf("expected batch %d is not positive", expected)
	}
	if err := checkWindow(len(tokens), block); err != nil {
		return nil, err
	}
	n := len(tokens) / (block + 1)
	p, err := dataset.NewPoissonSecret(secret, n, min(expected, n)) // expected ≥ N: q = 1
	if err != nil {
		return nil, err
	}
	return &Records{tokens: tokens, block: block, poisson: p}, nil
}

// Len is the number of records N.
func (r *Records) Len() int { return len(r.tokens) / (r.block + 1) }

// SampleRate is q, the probability with which a record joins a batch:
// Expected/N, at most 1.
func (r *Records) SampleRate() float64 { return r.poisson.SampleRate() }

// Drawn is the number of batches drawn so far.
func (r *Records) Drawn() int { return r.poisson.Steps() }

// Next draws the next batch and returns its records in ascending order. The
// slice is the Records' own, valid until the next call.
func (r *Records) Next() []int { return r.poisson.Next() }

// Fill writes record i's input into x and its target into y, each of
// length T. It panics if a length is wrong or i is not a record.
func (r *Records) Fill(i int, x, y []int32) {
	T := r.block
	if len(x) != T || len(y) != T || i < 0 || i >= r.Len() {
		panic(fmt.Sprintf("text: Records.Fill(%d): len(x), len(y) = %d, %d; want record < %d and T = %d", i, len(x), len(y), r.Len(), T))
	}
	w := r.tokens[i*(T+1):][:T+1]
	for t := range T {
		x[t] = int32(w[t])
		y[t] = int32(w[t+1])
	}
}

// MarshalBinary returns the number of batches drawn.
func (r *Records) MarshalBinary() ([]byte, error) {
	return binary.LittleEndian.AppendUint64(nil, uint64(r.poisson.Steps())), nil
}

// UnmarshalBinary restores a count saved by MarshalBinary; the batches
// that follow are those that followed the save.
func (r *Records) UnmarshalBinary(b []byte) error {
	if len(b) != 8 || binary.LittleEndian.Uint64(b) > 1<<62 {
		return fmt.Errorf("records state: %d bytes, want a count of 8", len(b))
	}
	return r.poisson.Seek(int(binary.LittleEndian.Uint64(b)))
}
