package privacy

import (
	"crypto/hmac"
	crand "crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"
	"math/bits"
	"math/rand/v2"

	"github.com/psclip/psclip/dist"
)

// Secret is the key of a DP-SGD run's secret randomness: which records
// join each Poisson sample, and the Gaussian noise. ε rests on both being
// unknown to whoever reads the run's outputs: amplification by subsampling
// assumes that the sample is secret, and whoever knows the noise can
// subtract it.
//
// NewSecret(0) draws the key from crypto/rand. It is never written
// anywhere (Secret has no encoding): a resumed run draws a fresh one,
// which changes nothing in the accounting, since every step's Poisson
// sample and noise are drawn independently of the others'. A fixed seed
// (NewSecret(seed), seed ≠ 0) makes runs reproducible and resumable bit for
// bit (tests, reproductions); such a run is not private (Fixed).
//
// A Secret derives independent keys (Key) and ChaCha8 streams (Stream),
// one per purpose and position, so that a sampler draws batch k without drawing the
// batches before it; Poisson is such a sampler. The ranks of a
// data-parallel job share rank 0's key (Share) so that they draw the same
// samples.
type Secret struct {
	key   [32]byte
	fixed bool
}

// secretTag fills the rest of a fixed seed's 32-byte key, as it did in
// earlier versions, so that a fixed seed draws the same Poisson samples.
const secretTag = "psclip dp-sgd gaussian noise"

// NewSecret returns a secret: a key from crypto/rand for seed 0, else the
// key of the fixed seed (not private).
func NewSecret(seed uint64) *Secret {
	s := &Secret{fixed: seed != 0}
	if seed == 0 {
		crand.Read(s.key[:]) // never fails (crypto/rand's documentation)
		return s
	}
	binary.LittleEndian.PutUint64(s.key[:8], seed)
	copy(s.key[8:], secretTag)
	return s
}

// Fixed reports whether the key comes from a fixed seed: whoever knows the
// seed knows the samples and the noise, so the run is not private.
func (s *Secret) Fixed() bool { return s.fixed }

// Stream returns the stream of purpose tag at position (a, b): a ChaCha8
// stream keyed by Key(tag, a, b).
func (s *Secret) Stream(tag string, a, b uint64) *rand.ChaCha8 {
	return rand.NewChaCha8(s.Key(tag, a, b))
}

// Key returns the key of purpose tag at position (a, b):
// HMAC-SHA256(key, tag‖a‖b), independent of every other tag and position
// and unpredictable without the secret's key. It keys a generator of one
// purpose (Stream's ChaCha8, the DP noise's AES-CTR) and, as the secret's
// key, must never be written anywhere.
func (s *Secret) Key(tag string, a, b uint64) [32]byte {
	return s.Keys(tag).Key(a, b)
}

// Keys returns the keys of purpose tag: k.Key(a, b) is s.Key(tag, a, b),
// at a fraction of the cost of each s.Key (no HMAC to set up, nothing
// allocated), for a goroutine that derives many keys of one purpose.
func (s *Secret) Keys(tag string) *Keys {
	return &Keys{mac: hmac.New(sha256.New, s.key[:]), tag: tag}
}

// Keys derives the keys of one purpose of a Secret (Secret.Keys). It is
// for one goroutine at a time.
type Keys struct {
	mac hash.Hash
	tag string
	msg []byte   // tag‖a‖b
	sum [32]byte // the HMAC
}

// Key returns the key of the purpose at position (a, b): Secret.Key's.
func (k *Keys) Key(a, b uint64) [32]byte {
	k.msg = binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(append(k.msg[:0], k.tag...), a), b)
	k.mac.Reset()
	k.mac.Write(k.msg)
	k.mac.Sum(k.sum[:0])
	return k.sum
}

// Share makes every rank of c hold rank 0's key, over the communicator
// (never through a file). It is a collective operation: every rank calls
// it, after they agreed that they run the same configuration.
func (s *Secret) Share(c dist.Comm) {
	if c.Size() == 1 {
		return
	}
	b := make([]byte, len(s.key)+1) // memory of its own, as MPI needs
	copy(b, s.key[:])
	if s.fixed {
		b[len(s.key)] = 1
	}
	c.Broadcast(0, dist.Bufs{Bytes: [][]byte{b}})
	copy(s.key[:], b)
	s.fixed = b[len(s.key)] == 1
	clear(b)
}

// Poisson draws the Poisson samples DP-SGD's accounting assumes: each of n
// records joins each sample independently with probability q = expected/n
// (1 for expected ≥ n), so sample sizes are Binomial(n, q) and a sample may
// be empty. Sample k's records depend on the secret and k alone (the
// secret's stream "poisson" at k), so a sampler resumes at any sample
// without drawing the ones before it. A Poisson is safe for concurrent use
// with distinct destination slices.
type Poisson struct {
	secret   *Secret
	n        int
	expected int
	below    uint64 // a draw below it joins: ⌊expected·2⁶⁴/n⌋; 0 for q = 1
}

// NewPoisson returns the sampler of n records with expected records a
// sample, keyed by secret; both counts must be positive.
func NewPoisson(secret *Secret, n, expected int) (*Poisson, error) {
	if n < 1 || expected < 1 {
		return nil, fmt.Errorf("privacy: Poisson sampling of %d records, %d expected a sample: want both positive", n, expected)
	}
	p := &Poisson{secret: secret, n: n, expected: expected}
	if expected < n {
		// P(draw < below) = ⌊expected·2⁶⁴/n⌋/2⁶⁴: q to within 2⁻⁶⁴.
		p.below, _ = bits.Div64(uint64(expected), 0, uint64(n))
	}
	return p, nil
}

// Len is the number of records n.
func (p *Poisson) Len() int { return p.n }

// SampleRate is q, the probability with which a record joins a sample:
// expected/n, at most 1.
func (p *Poisson) SampleRate() float64 { return min(1, float64(p.expected)/float64(p.n)) }

// Secret is the sampler's key.
func (p *Poisson) Secret() *Secret { return p.secret }

// Sample appends sample (a, b)'s records to dst[:0] in ascending order and
// returns it; a and b name the sample (an epoch and a batch, or a step
// and 0).
func (p *Poisson) Sample(dst []int, a, b uint64) []int {
	dst = dst[:0]
	if p.below == 0 { // q = 1
		for i := range p.n {
			dst = append(dst, i)
		}
		return dst
	}
	r := p.secret.Stream("poisson", a, b)
	for i := range p.n {
		if r.Uint64() < p.below {
			dst = append(dst, i)
		}
	}
	return dst
}
