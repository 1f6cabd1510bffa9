package text

import (
	"slices"
	"testing"
)

// iota16 returns the tokens 0, 1, …, n-1: a window's first token is then its
// start.
func iota16(n int) []uint16 {
	tokens := make([]uint16, n)
	for i := range tokens {
		tokens[i] = uint16(i)
	}
	return tokens
}

func next(s *Sampler) (x, y []int32) {
	b, t := s.Shape()
	x, y = make([]int32, b*t), make([]int32, b*t)
	s.Next(x, y)
	return x, y
}

// TestSamplerWindows checks that every row is a window tokens[i:i+T] with
// the target shifted by one, and that every start in [0, n-T) is drawn about
// equally often.
func TestSamplerWindows(t *testing.T) {
	const n, B, T = 20, 7, 16
	s, err := NewSampler(iota16(n), B, T, 1)
	if err != nil {
		t.Fatal(err)
	}
	counts := make([]int, n)
	const batches = 2000
	for range batches {
		x, y := next(s)
		for b := range B {
			i := int(x[b*T])
			counts[i]++
			for k := range T {
				if x[b*T+k] != int32(i+k) || y[b*T+k] != int32(i+k+1) {
					t.Fatalf("row %d: x %v, y %v; not a window at %d", b, x[b*T:][:T], y[b*T:][:T], i)
				}
			}
		}
	}
	// Starts 0..n-T-1 = 0..3, each drawn B·batches/4 = 3500 times; a
	// binomial sd of 36 makes ±250 a 7-sigma band.
	for i, c := range counts {
		if want := B * batches / (n - T); i < n-T && (c < want-250 || c > want+250) || i >= n-T && c != 0 {
			t.Errorf("start %d drawn %d times of %d", i, c, B*batches)
		}
	}
}

func TestSamplerSingleWindow(t *testing.T) {
	s, err := NewSampler([]uint16{5, 6, 7}, 3, 2, 9)
	if err != nil {
		t.Fatal(err)
	}
	x, y := next(s)
	if !slices.Equal(x, []int32{5, 6, 5, 6, 5, 6}) || !slices.Equal(y, []int32{6, 7, 6, 7, 6, 7}) {
		t.Fatalf("x %v, y %v", x, y)
	}
}

// TestSamplerSequence pins the data order, so that a change of stream (which
// would break resuming from older checkpoints) is noticed.
func TestSamplerSequence(t *testing.T) {
	s, err := NewSampler(iota16(1000), 8, 1, 42)
	if err != nil {
		t.Fatal(err)
	}
	x, _ := next(s)
	if want := []int32{763, 374, 798, 276, 205, 418, 534, 250}; !slices.Equal(x, want) {
		t.Fatalf("starts %v, want %v", x, want)
	}
}

func TestSamplerDeterminismAndResume(t *testing.T) {
	tokens := iota16(5000)
	a, _ := NewSampler(tokens, 4, 32, 7)
	b, _ := NewSampler(tokens, 4, 32, 7)
	c, _ := NewSampler(tokens, 4, 32, 8)
	xa, _ := next(a)
	xb, _ := next(b)
	xc, _ := next(c)
	if !slices.Equal(xa, xb) {
		t.Fatal("same seed, different batches")
	}
	if slices.Equal(xa, xc) {
		t.Fatal("seeds 7 and 8 gave the same batch")
	}

	for range 10 {
		next(a)
	}
	state, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var want [][]int32
	for range 5 {
		x, y := next(a)
		want = append(want, x, y)
	}
	// A fresh sampler with another seed, restored, continues identically.
	if err := c.UnmarshalBinary(state); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		x, y := next(c)
		if !slices.Equal(x, want[2*i]) || !slices.Equal(y, want[2*i+1]) {
			t.Fatalf("batch %d after restore differs", i)
		}
	}

	// Reset replays the sequence from the seed: the evaluation batches.
	b.Reset()
	if x, _ := next(b); !slices.Equal(x, xa) {
		t.Fatal("Reset did not replay the first batch")
	}

	if err := c.UnmarshalBinary([]byte("pcg:short")); err == nil {
		t.Fatal("UnmarshalBinary of a bad state succeeded")
	}
}

func TestSamplerNextPanicsOnWrongLength(t *testing.T) {
	s, _ := NewSampler(iota16(10), 2, 3, 1)
	defer func() {
		if recover() == nil {
			t.Fatal("Next with a short y did not panic")
		}
	}()
	s.Next(make([]int32, 6), make([]int32, 5))
}

func BenchmarkSamplerNext(b *testing.B) {
	tokens := iota16(1 << 16)
	for _, bc := range []struct {
		name         string
		batch, block int
	}{{"12x64", 12, 64}, {"8x1024", 8, 1024}} {
		b.Run(bc.name, func(b *testing.B) {
			s, err := NewSampler(tokens, bc.batch, bc.block, 1)
			if err != nil {
				b.Fatal(err)
			}
			x, y := make([]int32, bc.batch*bc.block), make([]int32, bc.batch*bc.block)
			b.SetBytes(int64(2 * 4 * len(x)))
			for b.Loop() {
				s.Next(x, y)
			}
		})
	}
}
