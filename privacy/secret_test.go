package privacy

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/psclip/psclip/dist"
)

// Two secure secrets draw different samples; a fixed seed draws the same
// ones, and is marked Fixed.
func TestSecretSamples(t *testing.T) {
	sample := func(s *Secret) []int {
		p, err := NewPoisson(s, 1000, 100)
		if err != nil {
			t.Fatal(err)
		}
		return p.Sample(nil, 3, 4)
	}
	a, b := NewSecret(0), NewSecret(0)
	if a.Fixed() || b.Fixed() {
		t.Error("a secret from crypto/rand is marked fixed")
	}
	if slices.Equal(sample(a), sample(b)) {
		t.Error("two secrets from crypto/rand draw the same sample")
	}
	f, g := NewSecret(7), NewSecret(7)
	if !f.Fixed() {
		t.Error("a fixed seed's secret is not marked fixed")
	}
	if !slices.Equal(sample(f), sample(g)) {
		t.Error("one fixed seed draws two samples")
	}
	if slices.Equal(sample(f), sample(NewSecret(8))) {
		t.Error("two fixed seeds draw the same sample")
	}
	// The position names the sample: another one differs, the same one
	// repeats.
	p, _ := NewPoisson(f, 1000, 100)
	if slices.Equal(p.Sample(nil, 3, 4), p.Sample(nil, 3, 5)) || slices.Equal(p.Sample(nil, 3, 4), p.Sample(nil, 4, 4)) {
		t.Error("two positions draw the same sample")
	}
	if !slices.Equal(p.Sample(nil, 3, 4), sample(f)) {
		t.Error("a position draws another sample the second time")
	}
}

// Sample sizes are Binomial(n, q): their mean and variance over many
// samples, to within five standard errors; q = 1 takes every record.
func TestPoissonRate(t *testing.T) {
	const n, exp, draws = 500, 40, 4000
	p, err := NewPoisson(NewSecret(0), n, exp)
	if err != nil {
		t.Fatal(err)
	}
	q := p.SampleRate()
	var sum, sq float64
	var dst []int
	for k := range draws {
		dst = p.Sample(dst, uint64(k), 0)
		if !slices.IsSorted(dst) {
			t.Fatal("a sample is not in ascending order")
		}
		sum += float64(len(dst))
		sq += float64(len(dst) * len(dst))
	}
	mean := sum / draws
	variance := sq/draws - mean*mean
	wantVar := n * q * (1 - q)
	if se := math.Sqrt(wantVar / draws); math.Abs(mean-n*q) > 5*se {
		t.Errorf("mean sample size %.3f, want %.3f ± %.3f", mean, n*q, 5*se)
	}
	if math.Abs(variance-wantVar) > 0.15*wantVar {
		t.Errorf("variance of the sample size %.3f, want %.3f", variance, wantVar)
	}
	all, _ := NewPoisson(NewSecret(0), 5, 9)
	if got := all.Sample(nil, 0, 0); !slices.Equal(got, []int{0, 1, 2, 3, 4}) || all.SampleRate() != 1 {
		t.Errorf("q = 1 drew %v at rate %v", got, all.SampleRate())
	}
	if _, err := NewPoisson(NewSecret(0), 0, 1); err == nil {
		t.Error("no records accepted")
	}
}

// Share gives every rank rank 0's key: the ranks of a job, each with a
// secret from crypto/rand, then draw the same samples.
func TestSecretShare(t *testing.T) {
	const ranks = 3
	samples := make([][]int, ranks)
	var wg sync.WaitGroup
	for _, c := range dist.Group(ranks) {
		wg.Go(func() {
			s := NewSecret(0)
			s.Share(c)
			p, _ := NewPoisson(s, 200, 20)
			samples[c.Rank()] = p.Sample(nil, 1, 2)
		})
	}
	wg.Wait()
	for r := 1; r < ranks; r++ {
		if !slices.Equal(samples[r], samples[0]) {
			t.Errorf("rank %d draws %v, rank 0 %v", r, samples[r], samples[0])
		}
	}
}

// A fixed seed's keys are those of earlier versions: HMAC-SHA256 keyed by
// seed‖"psclip dp-sgd gaussian noise" of tag‖a‖b, so that reproductions
// with a fixed seed draw the same samples; Stream is the ChaCha8 of Key.
func TestSecretKeyFixed(t *testing.T) {
	var key [32]byte
	key[0] = 3
	copy(key[8:], "psclip dp-sgd gaussian noise")
	m := hmac.New(sha256.New, key[:])
	m.Write([]byte("poisson\x05\x00\x00\x00\x00\x00\x00\x00\x07\x00\x00\x00\x00\x00\x00\x00"))
	var want [32]byte
	copy(want[:], m.Sum(nil))
	if got := NewSecret(3).Key("poisson", 5, 7); got != want {
		t.Fatalf("Key = %x, want %x", got, want)
	}
	a, b := rand.NewChaCha8(want), NewSecret(3).Stream("poisson", 5, 7)
	for range 4 {
		if a.Uint64() != b.Uint64() {
			t.Fatal("Stream is not the ChaCha8 of Key")
		}
	}
}

// Keys derives the keys Key does, call after call and for any purpose,
// checked against HMAC-SHA256 computed afresh for each, and allocates
// nothing once it has made a key.
func TestSecretKeys(t *testing.T) {
	s := NewSecret(9)
	var key [32]byte
	key[0] = 9
	copy(key[8:], "psclip dp-sgd gaussian noise")
	for _, tag := range []string{"gaussian noise", "clip count", ""} {
		k := s.Keys(tag)
		for _, pos := range [][2]uint64{{0, 0}, {1, 0}, {1 << 40, 3}, {0, 0}, {7, 1<<64 - 1}} {
			m := hmac.New(sha256.New, key[:])
			m.Write([]byte(tag))
			m.Write(binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, pos[0]), pos[1]))
			if got, want := k.Key(pos[0], pos[1]), [32]byte(m.Sum(nil)); got != want {
				t.Fatalf("tag %q, position %v: Keys gives %x, HMAC %x", tag, pos, got, want)
			}
			if got, want := k.Key(pos[0], pos[1]), s.Key(tag, pos[0], pos[1]); got != want {
				t.Fatalf("tag %q, position %v: Keys gives %x, Key %x", tag, pos, got, want)
			}
		}
		var a uint64
		if n := testing.AllocsPerRun(100, func() { a++; k.Key(a, 0) }); n != 0 {
			t.Errorf("tag %q: %v allocations a key", tag, n)
		}
	}
}

// A Secret has no encoding, nor have its Keys: nothing that writes values
// (JSON, a checkpoint's binary or text state) can write its key.
func TestSecretHasNoEncoding(t *testing.T) {
	for _, s := range []any{NewSecret(0), NewSecret(0).Keys("gaussian noise")} {
		_, bin := s.(encoding.BinaryMarshaler)
		_, txt := s.(encoding.TextMarshaler)
		_, js := s.(json.Marshaler)
		if b, err := json.Marshal(s); bin || txt || js || err != nil || string(b) != "{}" {
			t.Errorf("%T encodes: binary %v, text %v, JSON %v %s (%v)", s, bin, txt, js, b, err)
		}
	}
}

// BenchmarkSecretKey is the cost of a key: Secret.Key sets up an HMAC for
// each, Keys once.
func BenchmarkSecretKey(b *testing.B) {
	s := NewSecret(9)
	var pos uint64
	b.Run("Key", func(b *testing.B) {
		for b.Loop() {
			pos++
			s.Key("gaussian noise", pos, 0)
		}
	})
	b.Run("Keys", func(b *testing.B) {
		k := s.Keys("gaussian noise")
		for b.Loop() {
			pos++
			k.Key(pos, 0)
		}
	})
}
