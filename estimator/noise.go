package estimator

import (
	"encoding/binary"
	"errors"
	"math"
	mathbits "math/bits"
	"runtime"
	"sync/atomic"

	"github.com/psclip/psclip/internal/detmath"
	"github.com/psclip/psclip/kernels"
	"github.com/psclip/psclip/privacy"
)

// Gaussian is DP-SGD's noise source: independent standard normal draws by
// the ziggurat method (Marsaglia and Tsang 2000, 256 layers, in Doornik's
// form) from AES-128 in counter mode, a cryptographically strong
// generator: crypto/cipher's keystream, made by kernels.AESCTR with VAES
// (four blocks an instruction) or AES-NI where the CPU has them, at about
// 0.25 ns of CPU for 64 bits with VAES.
//
// The stream is counter-based: a call's draws are cut into blocks of
// noiseBlock values, block k of the source drawn from a generator of its
// own, keyed by the secret's key (privacy.Secret.Key, made by a
// goroutine's privacy.Keys) of the source's tag at position k. A call
// starts at a fresh block, so the draws depend on the blocks' positions
// alone, and blocks are drawn on up to GOMAXPROCS
// goroutines (kernels.Parallel): the noise is the same bits at any thread
// count.
//
// Seeded from crypto/rand (NewGaussian(0)) the stream is unpredictable,
// which the privacy guarantee needs: whoever knows the seed can subtract
// the noise. A fixed seed makes runs reproducible and resumable bit for bit
// (tests, reproductions), and such a run is not private.
//
// The draws are the same bits on every architecture: the ziggurat's tables
// and its rare slow paths need only detmath's Exp and Log, square roots,
// products and quotients, each rounded before it is used. Each draw is
// formed in float64 and rounded once to float32. Nearly every draw (98.5 %)
// takes one 64-bit word, one product and one comparison, eight draws at a
// time in the AVX2 and AVX-512 kernels (kernels.ZigguratAdd, the same bits
// as its portable code; with VAES under avx512 in one loop with the
// keystream, kernels.AESCTR.ZigguratAdd, the values prefetched ahead), and
// nearly every other decides its wedge test by bounds without an
// exponential (zigUnder), branching on no coin toss: about 1.05 ns of CPU a
// value for 10.7 M values on a shared 2-core Intel Xeon (Sapphire Rapids
// class, AVX-512 and VAES, one thread, load 4 to 5; 1.55 to 1.7 ns before
// the one loop and the prefetching), where copying the values takes 0.6 ns
// (BenchmarkGaussianAdd); 1.0 to 1.5 ns before them on a shared 2-core EPYC
// (AVX-512 and VAES, load 5 to 8), against 2.9 ns with crypto/cipher's
// AES-CTR, gathered tables and branches, and 18 ns for the polar method on
// ChaCha8 of earlier versions. Of that, on the Xeon, the keystream and the
// fast path take 0.65 ns together (0.82 ns in two loops: AES's rounds and
// the fast path's look-ups and products run side by side, on different
// ports), the slow paths, for the 1.5 % of words outside a layer's inner
// part, 15 to 18 ns a rejected word, a quarter of the whole, and keying a
// block 0.8 µs, most of it the HMAC, which a privacy.Keys now makes in
// 0.18 µs without allocating (0.73 – 0.87 µs and 8 allocations by
// privacy.Secret.Key, on a 2-core AMD EPYC with AVX-512, BenchmarkSecretKey).
type Gaussian struct {
	secret *privacy.Secret
	tag    string
	block  uint64 // the next block's position
}

// noiseBlock is the number of values drawn from one block's generator:
// enough that keying it (an HMAC-SHA256 and AES's key schedule) costs under
// 1 % of drawing them, few enough that a model of millions of parameters
// has a block for every thread.
const noiseBlock = 1 << 15

// The tags of the noise streams. gaussianTag is NewGaussian's.
const (
	gaussianTag   = "gaussian noise"
	clipCountTag  = "clip count"
	stateFixedOld = 'F' // a fixed seed's polar-method stream (before the ziggurat)
)

// NewGaussian returns a noise source keyed by privacy.NewSecret(seed): a
// key from crypto/rand when seed is 0, from seed otherwise (not private).
func NewGaussian(seed uint64) *Gaussian {
	return newGaussian(privacy.NewSecret(seed), gaussianTag)
}

// newGaussian returns the noise source of secret's streams of tag.
func newGaussian(secret *privacy.Secret, tag string) *Gaussian {
	return &Gaussian{secret: secret, tag: tag}
}

// Fixed reports whether the source was seeded with a fixed seed: its noise
// is known to whoever knows the seed, so the run is not private.
func (g *Gaussian) Fixed() bool { return g.secret.Fixed() }

// Add adds std·z to every element of every slice of dst, z an independent
// standard normal draw. The values of dst are taken in order, as one
// vector of their total length n: the call draws ⌈n/noiseBlock⌉ blocks,
// value j of that vector from block j/noiseBlock, so the same total length
// in any number of slices gets the same draws.
func (g *Gaussian) Add(dst [][]float32, std float64) {
	ends := make([]int, len(dst)) // ends[i]: the end of slice i in the vector
	n := 0
	for i, d := range dst {
		n += len(d)
		ends[i] = n
	}
	blocks := (n + noiseBlock - 1) / noiseBlock
	first := g.block
	g.block += uint64(blocks)
	var next atomic.Int64
	kernels.Parallel(min(runtime.GOMAXPROCS(0), blocks), func(int) {
		src, keys := new(noiseStream), g.secret.Keys(g.tag)
		for b := int(next.Add(1)) - 1; b < blocks; b = int(next.Add(1)) - 1 {
			src.reset(keys.Key(first+uint64(b), 0))
			lo, hi := b*noiseBlock, min((b+1)*noiseBlock, n)
			for i := range dst {
				start := ends[i] - len(dst[i])
				if ends[i] <= lo || start >= hi {
					continue
				}
				d := dst[i][max(lo-start, 0) : min(hi, ends[i])-start]
				src.add(d, std)
			}
		}
	})
}

// draw returns one standard normal draw: the first of a block of its own.
func (g *Gaussian) draw() float64 {
	src := new(noiseStream)
	src.reset(g.secret.Key(g.tag, g.block, 0))
	g.block++
	return src.normal()
}

// noiseStream is one block's words: AES-128 in counter mode on the first
// half of the block's key, read 64 bits at a time in little-endian order,
// the values' words (one a value, in order) from counter 0, the further
// words of the ziggurat's rare slow paths (extra) from counter 2¹²⁷, so
// that the values' words are made and read in bulk.
type noiseStream struct {
	main     kernels.AESCTR
	buf      [8 * noiseRead]byte
	rejected [noiseRead / 8]uint8 // a bit for each word of buf (kernels.ZigguratAdd)
	extra    words
}

// noiseRead is the number of values' words a noiseStream makes and draws
// from at a time (kernels.AESCTR.ZigguratAdd), a multiple of 64 below
// 4096: enough that the fused loop's first and last turns, which do not
// run AES's rounds beside the fast path, are few (2048 words took 4 % less
// CPU than 512, 1024 2 %), few enough that its 16 KiB stay in L1 beside
// the values.
const noiseRead = 2048

// words is a counter-mode stream read one word at a time, made 4 KiB at
// a time: a block's slow paths read about 6 KiB, and magnitude's common
// outcomes, which read two words ahead, take the loop at a buffer's end.
type words struct {
	ctr kernels.AESCTR
	buf [4096]byte
	i   int // the next word's offset in buf
}

// reset starts the words of key.
func (s *noiseStream) reset(key [32]byte) {
	k := (*[16]byte)(key[:16]) // AES-128
	var iv [16]byte
	s.main.Reset(k, &iv)
	iv[0] = 0x80
	s.extra.ctr.Reset(k, &iv)
	s.extra.i = len(s.extra.buf)
}

// word returns the next word.
func (s *words) word() uint64 {
	if s.i == len(s.buf) {
		s.ctr.KeyStream(s.buf[:])
		s.i = 0
	}
	w := binary.LittleEndian.Uint64(s.buf[s.i:])
	s.i += 8
	return w
}

// The ziggurat of 256 layers of the density f(x) = e^(−x²/2) on x ≥ 0
// (Marsaglia and Tsang 2000; Doornik 2005, "An improved ziggurat method to
// generate normal random samples"): zigR is where the tail starts, zigV
// every layer's area. Layer i spans [0, zigX[i]] (layer 0, the base, holds
// the tail in a rectangle of the same area), zigQ[i] = zigX[i+1]/zigX[i]
// is the share of it under the density whatever the height, and
// zigF[i] = f(zigX[i]) its lower height (layer i spans heights zigF[i] to
// zigF[i+1]).
const (
	zigLayers = 256
	zigR      = 3.6541528853610088
	zigV      = 4.92867323399e-3
)

var zigX, zigQ, zigF = zigTables()

// zigLayer is layer i's {zigX[i], zigQ[i]}, as kernels.ZigguratAdd reads
// them.
var zigLayer = func() (l [zigLayers][2]float64) {
	for i := range l {
		l[i] = [2]float64{zigX[i], zigQ[i]}
	}
	return l
}()

func zigTables() (x [zigLayers + 1]float64, q [zigLayers]float64, f [zigLayers + 1]float64) {
	fr := detmath.Exp(-0.5 * float64(zigR*zigR))
	x[0], x[1] = zigV/fr, zigR
	for i := 2; i < zigLayers; i++ {
		x[i] = math.Sqrt(-2 * detmath.Log(zigV/x[i-1]+fr))
		fr = detmath.Exp(-0.5 * float64(x[i]*x[i]))
	}
	for i := range q {
		q[i] = x[i+1] / x[i]
	}
	for i := range f {
		f[i] = detmath.Exp(-0.5 * float64(x[i]*x[i]))
	}
	return x, q, f
}

// add adds std·z to every element of d, z standard normal draws: each
// from a word whose low 8 bits pick the layer i, bit 8 the sign and top
// 52 bits u (zigU), uniform on [0, 1); |z| = u·zigX[i] when that lies
// inside the layer's part under the density (u < zigQ[i]), as for nearly
// every word (kernels.ZigguratAdd, vectorised, on the keystream as
// kernels.AESCTR.ZigguratAdd makes it), else magnitude's draw with extra
// words, for the rejected values in order.
func (s *noiseStream) add(d []float32, std float64) {
	for len(d) > 0 {
		m := min(len(d), len(s.buf)/8)
		b := s.buf[:8*m]
		rej := s.rejected[:(m+7)/8]
		s.main.ZigguratAdd(d[:m], b, std, &zigLayer, rej) // the words into b, then kernels.ZigguratAdd
		clear(s.rejected[len(rej):])                      // so that rejected is read 64 words at a time
		// The rejected words in order, in a loop of one turn each, which
		// takes the next chunk of 64 words that has any where the last
		// is spent without a branch: a loop over each chunk's words
		// mispredicted its start or its end on most chunks.
		const last = noiseRead / 64 // chunks[last]: 0, and its bit in left never taken
		var chunks [last + 1]uint64
		left := uint64(1) << last // bit c < last: chunk c has rejected words not yet taken
		n := 0
		for c := range last {
			chunks[c] = binary.LittleEndian.Uint64(s.rejected[8*c:])
			n += mathbits.OnesCount64(chunks[c])
			left |= uint64(b2u(chunks[c] != 0)) << c
		}
		var bits uint64 // the chunk's words not yet taken
		k := 0          // the chunk's index
		for range n {
			next := -uint64(b2u(bits == 0)) // all ones where the chunk is spent
			c := mathbits.TrailingZeros64(left)
			bits |= chunks[c] & next
			k += (c - k) & int(next)
			left &^= left & -left & next
			j := 64*k + mathbits.TrailingZeros64(bits)
			bits &= bits - 1
			w := binary.LittleEndian.Uint64(b[8*j:])
			i := w & (zigLayers - 1)
			x := s.extra.magnitude(i, zigU(w)*zigX[i])
			z := math.Float64frombits(math.Float64bits(x) | (w&zigLayers)<<55) // the sign
			d[j] += float32(std * z)
		}
		d = d[m:]
	}
}

// zigU is a word's top 52 bits as a uniform draw on [0, 1), exactly: 1 +
// those bits as a float64's fraction, less 1.
func zigU(w uint64) float64 {
	return math.Float64frombits(0x3ff0000000000000|w>>12) - 1
}

// normal returns one standard normal draw, as add draws it, in float64.
func (s *noiseStream) normal() float64 {
	b := s.buf[:8]
	s.main.KeyStream(b)
	w := binary.LittleEndian.Uint64(b)
	i := w & (zigLayers - 1)
	u := zigU(w)
	x := u * zigX[i]
	if !(u < zigQ[i]) {
		x = s.extra.magnitude(i, x)
	}
	return math.Float64frombits(math.Float64bits(x) | (w&zigLayers)<<55)
}

// magnitude returns the draw of |z| for a word that fell outside layer
// i's part under the density at x: the base's tail, or x if it lies under
// the density in the layer's wedge (zigUnder), else the draw of a fresh
// word.
func (s *words) magnitude(i uint64, x float64) float64 {
	// The two common outcomes, a wedge's test decided by its bounds to
	// accept, or to reject with the next word inside its layer's part
	// (zigQ), without branching on which (a coin toss), from two words
	// in buf; anything else by the loop, from the same words.
	if i != 0 && s.i <= len(s.buf)-16 {
		l := &zigWedge[i]
		b := (*[16]byte)(s.buf[s.i:])
		w := binary.LittleEndian.Uint64(b[8:])
		lo, hi := zigBounds(l, x)
		y := l.f + float64(uniformOf(binary.LittleEndian.Uint64(b[:8]))*l.df)
		next := &zigLayer[w&(zigLayers-1)]
		u := zigU(w)
		accept := b2u(y < lo)
		if accept|b2u(y >= hi)&b2u(u < next[1]) != 0 {
			// x, one word, if accepted, else the next word's draw, two.
			s.i += 16 - 8*int(accept)
			return pick(-uint64(accept), x, u*next[0])
		}
	}
	for {
		if i == 0 {
			return zigTail(s)
		}
		// The wedge: y uniform between the layer's heights; x is a draw
		// where y < f(x).
		if zigUnder(i, x, zigF[i]+float64(uniform(s)*(zigF[i+1]-zigF[i]))) {
			return x
		}
		w := s.word()
		i = w & (zigLayers - 1)
		u := zigU(w)
		x = u * zigX[i]
		if u < zigQ[i] {
			return x
		}
	}
}

// zigUnder reports whether y < f(x), f(x) = detmath.Exp(−x²/2) as
// magnitude computes it, for x in layer i's wedge [zigX[i+1], zigX[i]]:
// by bounds of f (zigWedge) where they decide, as they do for all but
// about a thousandth of the points, else by computing f(x).
func zigUnder(i uint64, x, y float64) bool {
	lo, hi := zigBounds(&zigWedge[i], x)
	switch {
	case y < lo:
		return true
	case y >= hi:
		return false
	}
	return y < detmath.Exp(-0.5*float64(x*x))
}

// zigBounds returns bounds lo < f(x) < hi, x in layer w's wedge
// (zigWedge), each widened by zigSlack.
func zigBounds(w *wedge, x float64) (lo, hi float64) {
	// Both kinds, then the layer's, times 1, plus the other's times 0
	// (exactly the layer's: the bounds are positive and finite): no
	// branch on which, for the top layers take about as many of the words
	// as the others, and small enough for the compiler to inline, which
	// spares magnitude's common path a call and its spills.
	t := 0.5 * (x * x)
	th := 1 - t + 0.5*(t*t)
	c := w.f + (w.x-x)*w.slope
	return (th-(t*t)*t/6)*w.taylor + (c+w.lo)*w.chord - zigSlack, th*w.taylor + (c+w.hi)*w.chord + zigSlack
}

// pick returns a where mask m is all ones, b where it is 0.
func pick(m uint64, a, b float64) float64 {
	ab, bb := math.Float64bits(a), math.Float64bits(b)
	return math.Float64frombits(bb ^ (ab^bb)&m)
}

// zigWedge[i] (i ≥ 1) bounds f on layer i's wedge, of width h = zigX[i] −
// zigX[i+1], the tighter way of two. By the chord through the layer's
// corners, c(x) = zigF[i] + (zigX[i] − x)·slope: lo ≤ f(x) − c(x) ≤ hi,
// since f's distance from the chord is at most h²/8 times |f”| =
// |x² − 1|·e^(−x²/2) at its largest there, on the side where f is convex
// (x ≥ 1: f below the chord) or concave (x ≤ 1: above), on both for the
// layer that spans 1. Or (taylor, the top layers) by e^(−t)'s Taylor
// polynomials in t = x²/2, alternating: 1 − t + t²/2 − t³/6 ≤ f(x) ≤
// 1 − t + t²/2.
var zigWedge = func() (w [zigLayers]wedge) {
	for i := 1; i < zigLayers; i++ {
		a, b := zigX[i+1], zigX[i]
		w[i].x, w[i].f, w[i].df = zigX[i], zigF[i], zigF[i+1]-zigF[i]
		w[i].slope = (zigF[i+1] - zigF[i]) / (b - a)
		d := (b - a) * (b - a) / 8 * max(math.Abs(a*a-1), math.Abs(b*b-1)) * math.Exp(-a*a/2) * 1.01
		if b > 1 {
			w[i].lo = -d
		}
		if a < 1 {
			w[i].hi = d
		}
		w[i].chord = 1
		if math.Pow(b, 6)/48 < w[i].hi-w[i].lo {
			w[i].taylor, w[i].chord = 1, 0
		}
	}
	return w
}()

// wedge is layer i's wedge, as zigWedge[i] holds it: its width zigX[i],
// lower height zigF[i], heights' difference zigF[i+1] − zigF[i], and its
// bounds of f, in 64 bytes, one cache line.
type wedge struct {
	x, f, df      float64
	taylor, chord float64 // 1, 0: by the Taylor polynomials; 0, 1: by the chord
	slope, lo, hi float64
}

// zigSlack widens zigWedge's bounds by far more than the rounding of their
// arithmetic, of f's argument and of detmath.Exp (below 10⁻¹⁴ together),
// so that a point the bounds decide is decided as computing f would.
const zigSlack = 1e-12

// zigTail returns a draw of the normal beyond zigR (Marsaglia 1964).
func zigTail(src *words) float64 {
	for {
		x := detmath.Log(uniform(src)) / zigR
		y := detmath.Log(uniform(src))
		if -2*y >= float64(x*x) {
			return zigR - x
		}
	}
}

// uniform returns a uniform draw on (0, 1].
func uniform(src *words) float64 { return uniformOf(src.word()) }

// uniformOf is uniform's draw from word w.
func uniformOf(w uint64) float64 { return float64(int64(w>>11)+1) * 0x1p-53 }

// b2u is 1 for true, 0 for false, without a branch.
func b2u(b bool) uint8 {
	var u uint8
	if b {
		u = 1
	}
	return u
}

// The first byte of a Gaussian's state: its position with a fixed seed, or
// a secure source, whose stream is not saved.
const (
	stateFixed  = 'P'
	stateSecure = 'S'
)

// MarshalBinary returns the source's state for a checkpoint: the stream's
// position with a fixed seed, so that a resumed run draws what the
// uninterrupted one would have; only a mark of a secure source, whose key
// must not be written anywhere (a checkpoint that held it would let its
// reader remove the noise).
func (g *Gaussian) MarshalBinary() ([]byte, error) {
	if !g.Fixed() {
		return []byte{stateSecure}, nil
	}
	return binary.LittleEndian.AppendUint64([]byte{stateFixed}, g.block), nil
}

// UnmarshalBinary restores what MarshalBinary returned: the stream of a
// fixed seed where it stood, or, for a secure source, a fresh key from
// crypto/rand (fresh noise is as private as the original stream). A state
// of the other kind than g's is refused, and so is a fixed seed's state
// from before the ziggurat, whose stream this version does not draw.
func (g *Gaussian) UnmarshalBinary(b []byte) error {
	switch {
	case len(b) == 0:
		return errors.New("estimator: empty state of the gaussian noise")
	case b[0] == stateSecure && !g.Fixed():
		g.secret = privacy.NewSecret(0)
		return nil
	case b[0] == stateFixed && g.Fixed() && len(b) == 9:
		g.block = binary.LittleEndian.Uint64(b[1:])
		return nil
	case b[0] == stateFixedOld && g.Fixed():
		return errors.New("estimator: the checkpoint's gaussian noise is a fixed seed's stream of an earlier psclip, which draws other noise now: restart the run")
	}
	return errors.New("estimator: the checkpoint's gaussian noise is not from a seed of this run's kind (fixed or secure)")
}
