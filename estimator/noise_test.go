package estimator

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"github.com/psclip/psclip/bench"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"testing"

	"github.com/psclip/psclip/internal/detmath"
	"github.com/psclip/psclip/setting"
)

// The noise's first four moments are a normal's with standard deviation
// std, within 5 standard errors of the sample moments over n = 2·10⁶ draws
// (for a normal: SE(mean) = std/√n, SE(variance) = std²·√(2/n), the third
// standardised moment SE √(6/n), the fourth 3 ± √(96/n)), and the draws are
// not correlated with their neighbours.
func TestGaussianMoments(t *testing.T) {
	const n = 2_000_000
	for _, tc := range []struct {
		seed uint64
		std  float64
	}{{1, 1}, {2, 2.15 * 0.1}, {0, 3}} {
		x := make([]float32, n)
		NewGaussian(tc.seed).Add([][]float32{x[:3], x[3:1001], x[1001:]}, tc.std)
		var m1, m2, m3, m4, lag float64
		for i, v := range x {
			z := float64(v) / tc.std
			m1 += z
			m2 += z * z
			m3 += z * z * z
			m4 += z * z * z * z
			if i > 0 {
				lag += z * float64(x[i-1]) / tc.std
			}
		}
		m1, m2, m3, m4, lag = m1/n, m2/n, m3/n, m4/n, lag/(n-1)
		for _, c := range []struct {
			what      string
			got, want float64
			se        float64
		}{
			{"mean", m1, 0, 1 / math.Sqrt(n)},
			{"variance", m2, 1, math.Sqrt(2.0 / n)},
			{"third moment", m3, 0, math.Sqrt(6.0 / n)},
			{"fourth moment", m4, 3, math.Sqrt(96.0 / n)},
			{"lag-1 correlation", lag, 0, 1 / math.Sqrt(n)},
		} {
			if math.Abs(c.got-c.want) > 5*c.se {
				t.Errorf("seed %d std %g: %s %.5f, want %g ± %.5f", tc.seed, tc.std, c.what, c.got, c.want, 5*c.se)
			}
		}
	}
}

// The draws fall into 40 bins of equal probability under the normal, and
// into the ziggurat's tail (|z| > zigR) and the bins beyond 4 and 5
// standard deviations, as often as the normal says: a χ² statistic of the
// 40 bins below its 39 degrees of freedom + 6 standard deviations, each
// tail count within 5 standard deviations of its binomial expectation,
// over n = 4·10⁶ draws; and the tail's draws (zigTail, 10⁵ of them) have
// the mean of the normal beyond zigR within 5 standard errors.
func TestGaussianDistribution(t *testing.T) {
	const n, bins = 4_000_000, 40
	x := make([]float32, n)
	NewGaussian(11).Add([][]float32{x}, 1)
	phi := func(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }
	var count [bins]float64
	var tails [3]float64
	for _, v := range x {
		z := float64(v)
		k := min(int(phi(z)*bins), bins-1)
		count[k]++
		for i, c := range []float64{zigR, 4, 5} {
			if math.Abs(z) > c {
				tails[i]++
			}
		}
	}
	chi2 := 0.0
	for _, c := range count {
		e := float64(n) / bins
		chi2 += (c - e) * (c - e) / e
	}
	if df := float64(bins - 1); chi2 > df+6*math.Sqrt(2*df) {
		t.Errorf("χ² over %d equiprobable bins %.1f, want below %.1f", bins, chi2, df+6*math.Sqrt(2*df))
	}
	for i, c := range []float64{zigR, 4, 5} {
		p := 2 * phi(-c)
		e, se := n*p, math.Sqrt(n*p*(1-p))
		if math.Abs(tails[i]-e) > 5*se {
			t.Errorf("|z| > %g: %g draws, want %.1f ± %.1f", c, tails[i], e, 5*se)
		}
	}
	// The normal beyond r: mean λ = φ(r)/Φ(−r), variance 1 + rλ − λ².
	lambda := math.Exp(-zigR*zigR/2) / math.Sqrt(2*math.Pi) / phi(-zigR)
	const k = 100_000
	src := new(noiseStream)
	src.reset([32]byte{11})
	var sum float64
	for range k {
		sum += zigTail(&src.extra)
	}
	se := math.Sqrt((1 + zigR*lambda - lambda*lambda) / k)
	if m := sum / k; math.Abs(m-lambda) > 5*se {
		t.Errorf("mean |z| beyond %g: %.4f, want %.4f ± %.4f", zigR, m, lambda, 5*se)
	}
}

// The draws are the same bits at any GOMAXPROCS and however a call's
// values are cut into slices, across the blocks' boundaries; and they are
// pinned (SHA-256 of their float32 bits), so that they are the same bits
// on every architecture and in every version that keeps the stream.
func TestGaussianBits(t *testing.T) {
	const n = 3*noiseBlock + 5
	draw := func(procs int, cuts ...int) []float32 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		x := make([]float32, n)
		var parts [][]float32
		lo := 0
		for _, c := range append(cuts, n) {
			parts = append(parts, x[lo:c])
			lo = c
		}
		g := NewGaussian(7)
		g.Add(parts[:1], 0.5) // a call of its own, and the next starts at a fresh block
		g.Add(parts[1:], 0.5)
		return x
	}
	a := draw(1, 3)
	for _, tc := range []struct {
		procs int
		cuts  []int
	}{
		{2, []int{3}},
		{4, []int{3, 3, noiseBlock - 1, noiseBlock + 3, 2*noiseBlock + 7}},
		{1, []int{3, 2 * noiseBlock}},
	} {
		if b := draw(tc.procs, tc.cuts...); !slices.Equal(a, b) {
			t.Errorf("GOMAXPROCS %d, cuts %v: other draws than one thread's in two slices", tc.procs, tc.cuts)
		}
	}
	h := sha256.New()
	binary.Write(h, binary.LittleEndian, a)
	if got, want := hex.EncodeToString(h.Sum(nil)), "1402c84adf678f5ed1a24d78501dc40db3a80154a2760b27a18e74f5e506d16d"; got != want {
		t.Errorf("seed 7's draws hash to %s, want %s", got, want)
	}
}

// The same seed gives the same draws however the values are cut into
// slices; other seeds, and the secure seed, give others.
func TestGaussianSeeds(t *testing.T) {
	draw := func(g *Gaussian, cuts ...int) []float32 {
		x := make([]float32, 101)
		var parts [][]float32
		lo := 0
		for _, c := range append(cuts, len(x)) {
			parts = append(parts, x[lo:c])
			lo = c
		}
		g.Add(parts, 1)
		return x
	}
	a := draw(NewGaussian(7))
	if b := draw(NewGaussian(7), 0, 1, 2, 50, 50, 77); !slices.Equal(a, b) {
		t.Error("seed 7 cut into slices draws other values")
	}
	if slices.Equal(a, draw(NewGaussian(8))) || slices.Equal(draw(NewGaussian(0)), draw(NewGaussian(0))) {
		t.Error("different seeds draw the same values")
	}
	if NewGaussian(0).Fixed() || !NewGaussian(7).Fixed() {
		t.Error("Fixed is wrong")
	}
}

// A fixed seed's state resumes the stream bit for bit; a secure source's
// state holds no key and resumes with fresh noise; the kinds do not mix,
// nor do the streams of earlier versions.
func TestGaussianState(t *testing.T) {
	g := NewGaussian(5)
	draw := func(g *Gaussian) []float32 {
		x := make([]float32, 77)
		g.Add([][]float32{x}, 1)
		return x
	}
	draw(g)
	st, err := g.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	second := draw(g)
	h := NewGaussian(5)
	if err := h.UnmarshalBinary(st); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(draw(h), second) {
		t.Error("a restored fixed seed draws other values")
	}
	s := NewGaussian(0)
	sst, _ := s.MarshalBinary()
	if len(sst) != 1 {
		t.Errorf("a secure source's state is %d bytes, want only its mark", len(sst))
	}
	if err := NewGaussian(0).UnmarshalBinary(sst); err != nil {
		t.Error(err)
	}
	if NewGaussian(0).UnmarshalBinary(st) == nil || NewGaussian(5).UnmarshalBinary(sst) == nil || NewGaussian(5).UnmarshalBinary(nil) == nil {
		t.Error("a state of the other kind is accepted")
	}
	// A fixed seed's polar-method stream of earlier versions ('F' and the
	// ChaCha8 state) is refused: this version would draw other noise.
	if NewGaussian(5).UnmarshalBinary(append([]byte{'F'}, make([]byte, 48)...)) == nil {
		t.Error("an earlier version's fixed-seed state is accepted")
	}
	if bytes.Contains(sst, []byte("psclip dp-sgd gaussian")) {
		t.Error("secure state holds key material")
	}
}

// DP-SGD's estimator state is its noise stream's: State and SetState carry
// it through a checkpoint.
func TestDPSGDState(t *testing.T) {
	e, _ := Spec{Estimator: "dp-sgd", Clip: 1, NoiseMultiplier: 2, NoiseSeed: 3}.New()
	n := e.(Noisy)
	x := make([]float32, 10)
	n.AddNoise([][]float32{x}, 0.5)
	st, err := State(e)
	if err != nil || st == nil {
		t.Fatalf("State: %v, %v", st, err)
	}
	f, _ := Spec{Estimator: "dp-sgd", Clip: 1, NoiseMultiplier: 2, NoiseSeed: 3}.New()
	if err := SetState(f, st); err != nil {
		t.Fatal(err)
	}
	a, b := make([]float32, 10), make([]float32, 10)
	n.AddNoise([][]float32{a}, 0.5)
	f.(Noisy).AddNoise([][]float32{b}, 0.5)
	if !slices.Equal(a, b) {
		t.Error("a restored DP-SGD draws other noise")
	}
	// scale·σ·C = 0.5·2·1 = 1: the noise of seed 3 as drawn by its source.
	want := make([]float32, 10)
	NewGaussian(3).Add([][]float32{want}, 1)
	if !slices.Equal(x, want) {
		t.Errorf("AddNoise %v, want %v", x, want)
	}
}

// BenchmarkGaussianAdd measures the noise of one step of a model of
// 26,010 parameters (the Tramèr–Boneh tanh CNN), of 1M and of the 6×384
// GPT's 10.7M, in ns per value (ns/number; cpu-ns/number the process's
// CPU time, all threads, which a loaded machine inflates less) beside what
// writing the same bytes costs: clearing them (memclr) and copying them.
func BenchmarkGaussianAdd(b *testing.B) {
	for _, n := range []int{26010, 1 << 20, 10_700_000} {
		x, y := make([]float32, n), make([]float32, n)
		for i := range x {
			x[i], y[i] = 1, 1 // every page mapped before the clock starts
		}
		for _, bc := range []struct {
			name string
			f    func()
		}{
			{"noise", func() { NewGaussian(1).Add([][]float32{x}, 1) }},
			{"memclr", func() { clear(x) }},
			{"copy", func() { copy(x, y) }},
		} {
			b.Run(bc.name+"/"+strconv.Itoa(n), func(b *testing.B) {
				b.SetBytes(int64(4 * n))
				cpu := bench.CPUTime()
				for b.Loop() {
					bc.f()
				}
				per := float64(b.N) * float64(n)
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/per, "ns/number")
				b.ReportMetric(float64(bench.CPUTime()-cpu)/per, "cpu-ns/number")
			})
		}
	}
}

// NoisyOf finds DP-SGD's noise through wrappers, and none elsewhere.
func TestNoisyOf(t *testing.T) {
	dp, _ := NewDPSGD(1, 1, 1)
	for _, tc := range []struct {
		name string
		e    Estimator
		want Noisy
	}{
		{"dp-sgd", dp, dp},
		{"wrapped dp-sgd", wrapper{wrapper{dp}}, dp},
		{"sgd", SGD{}, nil},
		{"wrapped sgd", wrapper{SGD{}}, nil},
	} {
		if got := NoisyOf(tc.e); got != tc.want {
			t.Errorf("%s: NoisyOf = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// wrapper is an estimator that wraps another, as recorders do.
type wrapper struct{ Estimator }

func (w wrapper) Unwrap() Estimator { return w.Estimator }

// NewDPSGD refuses a clipping norm or noise multiplier that is not finite
// and > 0 with a *setting.Error naming Spec's field, as every other
// constructor does.
func TestNewDPSGDErrors(t *testing.T) {
	for _, tc := range []struct {
		c, sigma float64
		field    string
	}{
		{0, 1, "Clip"}, {-1, 1, "Clip"}, {math.Inf(1), 1, "Clip"}, {math.NaN(), 1, "Clip"},
		{1, 0, "NoiseMultiplier"}, {1, -2, "NoiseMultiplier"}, {1, math.Inf(1), "NoiseMultiplier"},
	} {
		var se *setting.Error
		if _, err := NewDPSGD(tc.c, tc.sigma, 1); !errors.As(err, &se) || se.Field != tc.field {
			t.Errorf("NewDPSGD(%v, %v): %v, want a *setting.Error for %s", tc.c, tc.sigma, err, tc.field)
		}
	}
}

// Add's draws are those of a word-by-word reference: each block's words
// read one at a time from its own stream, a word inside its layer's part
// taken as u·zigX[i], every other (the slow paths, about 500 a block)
// given to magnitude in order, each draw rounded to float32 and added;
// for blocks whole and cut short, onto values that are not 0.
func TestGaussianAddReference(t *testing.T) {
	for _, n := range []int{noiseBlock + 1000, 37, 4096 + 9} {
		x := make([]float32, n)
		for j := range x {
			x[j] = float32(j%11) - 5
		}
		want := slices.Clone(x)
		g := NewGaussian(11)
		g.Add([][]float32{x}, 0.8)

		ref := NewGaussian(11)
		rejected := 0
		for lo := 0; lo < n; lo += noiseBlock {
			src := new(noiseStream)
			src.reset(ref.secret.Key(ref.tag, ref.block, 0))
			ref.block++
			for j := lo; j < min(lo+noiseBlock, n); j++ {
				src.main.KeyStream(src.buf[:8])
				w := binary.LittleEndian.Uint64(src.buf[:8])
				i := w & (zigLayers - 1)
				u := zigU(w)
				z := u * zigX[i]
				if !(u < zigQ[i]) {
					z = src.extra.magnitude(i, z)
					rejected++
				}
				z = math.Float64frombits(math.Float64bits(z) | (w&zigLayers)<<55)
				want[j] += float32(0.8 * z)
			}
		}
		for j := range x {
			if math.Float32bits(x[j]) != math.Float32bits(want[j]) {
				t.Fatalf("%d values: value %d is %v, the reference's %v", n, j, x[j], want[j])
			}
		}
		if n > noiseBlock && rejected < 300 {
			t.Fatalf("%d values: %d words rejected: the test does not test the slow paths", n, rejected)
		}
	}
}

// draw, DPQuantile's count noise, is the first value of a block of its own
// as Add draws it, unrounded: a one-value Add of the same stream rounds it
// to float32.
func TestGaussianDraw(t *testing.T) {
	g, h := NewGaussian(9), NewGaussian(9)
	for k := range 500 {
		z := g.draw()
		x := []float32{0}
		h.Add([][]float32{x}, 1)
		if float32(z) != x[0] {
			t.Fatalf("draw %d: %v, Add drew %v", k, z, x[0])
		}
	}
}

// zigUnder decides as computing f does, at random points of every layer's
// wedge and at points within a few ulps to 10⁻⁹ of f; and its bounds
// decide at least 99 % of the points magnitude asks about without
// computing f (layer i's points weighted by the share of its words
// rejected, 1 − zigQ[i]).
func TestZigUnder(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	var decided, points float64
	for i := uint64(1); i < zigLayers; i++ {
		a, b := zigX[i+1], zigX[i]
		for range 2000 {
			x := a + r.Float64()*(b-a)
			f := detmath.Exp(-0.5 * float64(x*x))
			ys := []float64{zigF[i] + r.Float64()*(zigF[i+1]-zigF[i]), f, f + 1e-9, f - 1e-9, f + 1e-13, f - 1e-13}
			for k := 1; k <= 3; k++ {
				ys = append(ys, math.Nextafter(f, -1), math.Nextafter(f, 2))
				f = math.Nextafter(f, 2)
			}
			for j, y := range ys {
				want := y < detmath.Exp(-0.5*float64(x*x))
				if got := zigUnder(i, x, y); got != want {
					t.Fatalf("layer %d, x %v, y %v: under %v, want %v", i, x, y, got, want)
				}
				if j == 0 {
					points += 1 - zigQ[i]
					if lo, hi := zigBounds(&zigWedge[i], x); y < lo || y >= hi {
						decided += 1 - zigQ[i]
					}
				}
			}
		}
	}
	if share := decided / points; share < 0.99 {
		t.Errorf("the bounds decide %.4f of the points, want ≥ 0.99", share)
	} else {
		t.Logf("the bounds decide %.4f of the points", share)
	}
}
