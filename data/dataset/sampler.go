package dataset

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/psclip/psclip/privacy"
	"github.com/psclip/psclip/setting"
)

// Shuffle draws batches of a fixed size in epochs: epoch e visits the n
// records in the order of a permutation drawn from PCG(seed, e), cut into
// consecutive batches. With dropLast the last batch of an epoch is dropped
// when it is short; else it is returned short. Its state is its position
// (epoch and batch), from which the permutation is drawn again, so that a
// restored Shuffle continues exactly.
type Shuffle struct {
	n, batch int
	dropLast bool
	source   func(epoch int) rand.Source
	epoch    int   // the epoch perm belongs to
	next     int   // the next batch of the epoch
	perm     []int // epoch's order; nil until drawn
}

// NewShuffle returns the sampler of batches of batch records from n, both
// at least 1 (batch at most n with dropLast), seeded with seed.
func NewShuffle(n, batch int, dropLast bool, seed uint64) (*Shuffle, error) {
	return NewShuffleFrom(n, batch, dropLast, func(epoch int) rand.Source { return rand.NewPCG(seed, uint64(epoch)) })
}

// NewShuffleFrom is NewShuffle with epoch e's permutation drawn from
// source(e) (rand.Rand.Perm of a new generator on it) instead of PCG(seed,
// e): a trainer whose runs were published keeps the order they were
// drawn in. source must return a fresh generator, the same for the same
// epoch.
func NewShuffleFrom(n, batch int, dropLast bool, source func(epoch int) rand.Source) (*Shuffle, error) {
	switch {
	case n < 1:
		return nil, setting.Errorf("n", n, "at least one record")
	case batch < 1 || dropLast && batch > n:
		return nil, setting.Errorf("batch", batch, "a batch of 1 to %d records", n)
	}
	return &Shuffle{n: n, batch: batch, dropLast: dropLast, source: source}, nil
}

// BatchesPerEpoch is the number of batches an epoch has.
func (s *Shuffle) BatchesPerEpoch() int {
	if s.dropLast {
		return s.n / s.batch
	}
	return (s.n + s.batch - 1) / s.batch
}

// Position is the epoch and batch the next call to Next returns.
func (s *Shuffle) Position() (epoch, batch int) { return s.epoch, s.next }

// Next returns the next batch's records.
func (s *Shuffle) Next() []int {
	if s.next == s.BatchesPerEpoch() {
		s.epoch, s.next, s.perm = s.epoch+1, 0, nil
	}
	if s.perm == nil {
		s.perm = rand.New(s.source(s.epoch)).Perm(s.n)
	}
	lo := s.next * s.batch
	s.next++
	return s.perm[lo:min(lo+s.batch, s.n)]
}

// shuffleTag and poissonTag begin the samplers' states.
const (
	shuffleTag = "shuffle1"
	poissonTag = "poisson1"
)

// MarshalBinary returns the position.
func (s *Shuffle) MarshalBinary() ([]byte, error) {
	b := append([]byte(nil), shuffleTag...)
	b = binary.LittleEndian.AppendUint64(b, uint64(s.epoch))
	return binary.LittleEndian.AppendUint64(b, uint64(s.next)), nil
}

// UnmarshalBinary restores a position that MarshalBinary returned.
func (s *Shuffle) UnmarshalBinary(data []byte) error {
	v, err := state(data, shuffleTag, 2)
	if err != nil {
		return err
	}
	if v[0] > 1<<62 || v[1] > 1<<62 || s.Seek(int(v[0]), int(v[1])) != nil {
		return errors.New("dataset: corrupt shuffle state")
	}
	return nil
}

// Seek moves the sampler to batch of epoch (0-based), as if every batch
// before it had been drawn: a trainer that counts its steps puts a
// sampler back where a checkpoint left it. A position outside the
// epochs' batches is a *setting.Error.
func (s *Shuffle) Seek(epoch, batch int) error {
	switch {
	case epoch < 0:
		return setting.Errorf("epoch", epoch, "at least 0")
	case batch < 0 || batch > s.BatchesPerEpoch():
		return setting.Errorf("batch", batch, "0 to the %d batches of an epoch", s.BatchesPerEpoch())
	}
	if epoch != s.epoch {
		s.perm = nil
	}
	s.epoch, s.next = epoch, batch
	return nil
}

// Poisson draws the samples DP-SGD's accounting assumes: each of n
// records joins each step's sample independently with probability
// q = expected/n (privacy.Poisson), so a sample's size varies and may be
// 0. Step k's sample depends on the key and k alone. With seed 0 the key
// comes from crypto/rand and is never saved (Private); a restored sampler
// continues at the saved step with its own fresh key, which changes
// nothing in the accounting. A fixed seed makes the samples reproducible,
// and whoever knows it knows them: not private.
type Poisson struct {
	p        *privacy.Poisson
	perEpoch uint64 // NewEpochPoisson's; 0 for NewPoisson's
	step     uint64 // the next sample's
	idx      []int
}

// NewPoisson returns the Poisson sampler of n records with expected
// records a sample (1 ≤ expected ≤ n), secret for seed 0.
func NewPoisson(n, expected int, seed uint64) (*Poisson, error) {
	return NewPoissonSecret(privacy.NewSecret(seed), n, expected)
}

// NewPoissonSecret is NewPoisson keyed by secret, one a trainer holds
// already (a run's, shared over its ranks): private unless secret is
// fixed. Step k draws the key's sample (k, 0) (privacy.Poisson.Sample).
func NewPoissonSecret(secret *privacy.Secret, n, expected int) (*Poisson, error) {
	switch {
	case n < 1:
		return nil, setting.Errorf("n", n, "at least one record")
	case expected < 1 || expected > n:
		return nil, setting.Errorf("expected", expected, "an expected sample of 1 to %d records", n)
	}
	p, err := privacy.NewPoisson(secret, n, expected)
	if err != nil {
		return nil, err
	}
	return &Poisson{p: p}, nil
}

// NewEpochPoisson is NewPoissonSecret in epochs of perEpoch ≥ 1 steps,
// the samples named as the image trainer names them: step k draws the
// key's sample (k/perEpoch, k mod perEpoch), epoch and batch. Each sample
// is drawn as independently as NewPoissonSecret's.
func NewEpochPoisson(secret *privacy.Secret, n, expected, perEpoch int) (*Poisson, error) {
	if perEpoch < 1 {
		return nil, setting.Errorf("perEpoch", perEpoch, "at least one sample an epoch")
	}
	s, err := NewPoissonSecret(secret, n, expected)
	if err != nil {
		return nil, err
	}
	s.perEpoch = uint64(perEpoch)
	return s, nil
}

// SampleRate is q.
func (s *Poisson) SampleRate() float64 { return s.p.SampleRate() }

// Private reports whether the key is secret (seed 0).
func (s *Poisson) Private() bool { return !s.p.Secret().Fixed() }

// Steps is the number of samples drawn.
func (s *Poisson) Steps() int { return int(s.step) }

// Next returns the next step's sample, in ascending order.
func (s *Poisson) Next() []int {
	if s.perEpoch > 0 {
		s.idx = s.p.Sample(s.idx, s.step/s.perEpoch, s.step%s.perEpoch)
	} else {
		s.idx = s.p.Sample(s.idx, s.step, 0)
	}
	s.step++
	return s.idx
}

// Seek moves the sampler to step (0-based), as if every sample before
// it had been drawn; a negative step is a *setting.Error.
func (s *Poisson) Seek(step int) error {
	if step < 0 {
		return setting.Errorf("step", step, "at least 0")
	}
	s.step = uint64(step)
	return nil
}

// MarshalBinary returns the position (the key is not in it).
func (s *Poisson) MarshalBinary() ([]byte, error) {
	return binary.LittleEndian.AppendUint64([]byte(poissonTag), s.step), nil
}

// UnmarshalBinary restores a position that MarshalBinary returned.
func (s *Poisson) UnmarshalBinary(data []byte) error {
	v, err := state(data, poissonTag, 1)
	if err != nil {
		return err
	}
	s.step = v[0]
	return nil
}

// state reads a sampler state: tag, then k little-endian uint64s.
func state(data []byte, tag string, k int) ([]uint64, error) {
	if len(data) != len(tag)+8*k || string(data[:len(tag)]) != tag {
		return nil, fmt.Errorf("dataset: not a %s sampler state", tag[:len(tag)-1])
	}
	v := make([]uint64, k)
	for i := range v {
		v[i] = binary.LittleEndian.Uint64(data[len(tag)+8*i:])
	}
	return v, nil
}

// Uniform draws batches of a fixed size uniformly with replacement, as
// nanoGPT's get_batch draws its windows: each index of a batch is
// rand.Rand.IntN(n) of a generator on a PCG, in order. The PCG is its
// whole state (MarshalBinary is the PCG's), so that a restored Uniform
// continues exactly.
type Uniform struct {
	n, batch int
	pcg      *rand.PCG
	rng      *rand.Rand
	idx      []int
}

// NewUniform returns the sampler of batches of batch records of n, both
// at least 1, drawn from pcg, which it keeps: reseeding pcg restarts it.
func NewUniform(n, batch int, pcg *rand.PCG) (*Uniform, error) {
	switch {
	case n < 1:
		return nil, setting.Errorf("n", n, "at least one record")
	case batch < 1:
		return nil, setting.Errorf("batch", batch, "at least one record a batch")
	}
	return &Uniform{n: n, batch: batch, pcg: pcg, rng: rand.New(pcg), idx: make([]int, batch)}, nil
}

// Next returns the next batch's records.
func (u *Uniform) Next() []int {
	for j := range u.idx {
		u.idx[j] = u.rng.IntN(u.n)
	}
	return u.idx
}

// MarshalBinary returns the PCG's state.
func (u *Uniform) MarshalBinary() ([]byte, error) { return u.pcg.MarshalBinary() }

// UnmarshalBinary restores a state that MarshalBinary returned.
func (u *Uniform) UnmarshalBinary(data []byte) error { return u.pcg.UnmarshalBinary(data) }
