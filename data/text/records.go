package text

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"math/rand/v2"
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
// Batch k's records depend on the seed and k alone (a ChaCha8 stream keyed
// by both), so the count of batches drawn is the whole state: MarshalBinary
// saves it and UnmarshalBinary restores it for an exact resume. A Records
// is not safe for concurrent use.
type Records struct {
	tokens   []uint16
	block, n int
	expected int
	below    uint64 // a draw below it joins: ⌊Expected·2⁶⁴/N⌋, or all for q = 1
	seed     uint64
	drawn    uint64 // batches drawn so far
	batch    []int
}

// recordsTag separates the records' streams from other streams keyed by
// the same run seed.
const recordsTag = 0x7265_636f_7264_7301 // "records\x01"

// NewRecords returns the records of block+1 tokens of tokens, sampled with
// an expected expected records a batch. It keeps tokens without copying.
// Its error says why tokens hold no record.
func NewRecords(tokens []uint16, block, expected int, seed uint64) (*Records, error) {
	if expected < 1 {
		return nil, fmt.Errorf("expected batch %d is not positive", expected)
	}
	if err := checkWindow(len(tokens), block); err != nil {
		return nil, err
	}
	r := &Records{tokens: tokens, block: block, n: len(tokens) / (block + 1), expected: expected, seed: seed}
	if expected < r.n {
		// P(draw < below) = ⌊Expected·2⁶⁴/N⌋/2⁶⁴: q to within 2⁻⁶⁴.
		r.below, _ = bits.Div64(uint64(expected), 0, uint64(r.n))
	}
	return r, nil
}

// Len is the number of records N.
func (r *Records) Len() int { return r.n }

// SampleRate is q, the probability with which a record joins a batch:
// Expected/N, at most 1.
func (r *Records) SampleRate() float64 { return min(1, float64(r.expected)/float64(r.n)) }

// Drawn is the number of batches drawn so far.
func (r *Records) Drawn() int { return int(r.drawn) }

// Next draws the next batch and returns its records in ascending order. The
// slice is the Records' own, valid until the next call.
func (r *Records) Next() []int {
	r.batch = r.batch[:0]
	if r.below == 0 { // q = 1
		for i := range r.n {
			r.batch = append(r.batch, i)
		}
		r.drawn++
		return r.batch
	}
	var key [32]byte
	binary.LittleEndian.PutUint64(key[0:], r.seed)
	binary.LittleEndian.PutUint64(key[8:], recordsTag)
	binary.LittleEndian.PutUint64(key[16:], r.drawn)
	rng := rand.NewChaCha8(key)
	for i := range r.n {
		if rng.Uint64() < r.below {
			r.batch = append(r.batch, i)
		}
	}
	r.drawn++
	return r.batch
}

// Fill writes record i's input into x and its target into y, each of
// length T. It panics if a length is wrong or i is not a record.
func (r *Records) Fill(i int, x, y []int32) {
	T := r.block
	if len(x) != T || len(y) != T || i < 0 || i >= r.n {
		panic(fmt.Sprintf("text: Records.Fill(%d): len(x), len(y) = %d, %d; want record < %d and T = %d", i, len(x), len(y), r.n, T))
	}
	w := r.tokens[i*(T+1):][:T+1]
	for t := range T {
		x[t] = int32(w[t])
		y[t] = int32(w[t+1])
	}
}

// MarshalBinary returns the number of batches drawn.
func (r *Records) MarshalBinary() ([]byte, error) {
	return binary.LittleEndian.AppendUint64(nil, r.drawn), nil
}

// UnmarshalBinary restores a count saved by MarshalBinary; the batches
// that follow are those that followed the save.
func (r *Records) UnmarshalBinary(b []byte) error {
	if len(b) != 8 {
		return fmt.Errorf("records state: %d bytes, want 8", len(b))
	}
	r.drawn = binary.LittleEndian.Uint64(b)
	return nil
}
