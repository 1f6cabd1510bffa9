package dataset

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/psclip/psclip/privacy"
	"github.com/psclip/psclip/setting"
	"github.com/psclip/psclip/tensor"
)

// Batch copies the records asked for, in the order asked, with their
// class targets (one a record, or one a position) or float targets.
func TestTensorsBatch(t *testing.T) {
	x := tensor.New(4, 2, 3) // record i holds 6i … 6i+5
	for i := range x.Data {
		x.Data[i] = float32(i)
	}
	for _, tt := range []struct {
		name string
		y    []int32
		f    []float32
	}{
		{"a class a record", []int32{0, 1, 2, 3}, nil},
		{"a class a position", []int32{0, 10, 1, 11, 2, 12, 3, 13}, nil},
		{"float targets", nil, []float32{0.5, 1.5, 2.5, 3.5}},
	} {
		d, err := NewTensors(x, tt.y)
		if tt.f != nil {
			d, err = NewFloatTensors(x, tt.f)
		}
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if d.Len() != 4 {
			t.Fatalf("%s: Len %d, want 4", tt.name, d.Len())
		}
		b, err := d.Batch([]int{3, 1, 3})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(b.X.Shape, []int{3, 2, 3}) {
			t.Fatalf("%s: shape %v", tt.name, b.X.Shape)
		}
		for j, i := range []int{3, 1, 3} {
			for k := range 6 {
				if b.X.Data[j*6+k] != float32(6*i+k) {
					t.Fatalf("%s: row %d is not record %d", tt.name, j, i)
				}
			}
			per := (len(tt.y) + len(tt.f)) / 4
			for k := range per {
				if tt.y != nil && b.Y[j*per+k] != tt.y[i*per+k] || tt.f != nil && b.T[j*per+k] != tt.f[i*per+k] {
					t.Fatalf("%s: targets of row %d are not record %d's: %v %v", tt.name, j, i, b.Y, b.T)
				}
			}
		}
	}
	d, _ := NewTensors(x, []int32{0, 1, 2, 3})
	for _, idx := range [][]int{nil, {4}, {-1}} {
		if _, err := d.Batch(idx); err == nil {
			t.Errorf("Batch(%v): no error", idx)
		}
	}
}

// Bad tensors are refused naming the argument.
func TestNewTensorsBadInput(t *testing.T) {
	x := tensor.New(4, 2)
	for _, tt := range []struct {
		x     *tensor.Tensor
		y     []int32
		f     []float32
		field string
	}{
		{nil, []int32{0}, nil, "X"},
		{&tensor.Tensor{Shape: []int{0, 2}}, []int32{}, nil, "X"},
		{&tensor.Tensor{Shape: []int{2, 2}, Data: make([]float32, 3)}, []int32{0, 1}, nil, "X"},
		{x, nil, nil, "Y"},
		{x, []int32{0, 1, 2}, nil, "Y"},
		{x, []int32{}, nil, "Y"},
		{x, nil, []float32{1}, "T"},
	} {
		_, err := NewTensors(tt.x, tt.y)
		if tt.field == "T" {
			_, err = NewFloatTensors(tt.x, tt.f)
		}
		var se *setting.Error
		if !errors.As(err, &se) || se.Field != tt.field {
			t.Errorf("NewTensors(%v, %v, %v) = %v, want a *setting.Error naming %s", tt.x, tt.y, tt.f, err, tt.field)
		}
	}
}

// Every epoch of Shuffle visits every record once (the last batch short,
// or dropped with dropLast), epochs differ, and a Shuffle restored from
// any position's state continues exactly.
func TestShuffle(t *testing.T) {
	for _, dropLast := range []bool{false, true} {
		s, err := NewShuffle(10, 4, dropLast, 7)
		if err != nil {
			t.Fatal(err)
		}
		want := 3
		if dropLast {
			want = 2
		}
		if s.BatchesPerEpoch() != want {
			t.Fatalf("dropLast %v: %d batches an epoch, want %d", dropLast, s.BatchesPerEpoch(), want)
		}
		var epochs [][]int
		var states [][]byte
		var seq [][]int
		for e := range 3 {
			var seen []int
			for range want {
				st, _ := s.MarshalBinary()
				states = append(states, st)
				b := slices.Clone(s.Next())
				seq = append(seq, b)
				seen = append(seen, b...)
			}
			if ep, _ := s.Position(); ep != e {
				t.Fatalf("epoch %d: Position says %d", e, ep)
			}
			epochs = append(epochs, seen)
			sorted := slices.Sorted(slices.Values(seen))
			if n := len(sorted); !dropLast && n != 10 || dropLast && n != 8 || len(slices.Compact(sorted)) != n {
				t.Fatalf("dropLast %v, epoch %d: records %v", dropLast, e, seen)
			}
		}
		if slices.Equal(epochs[0], epochs[1]) {
			t.Errorf("dropLast %v: epochs 0 and 1 in the same order", dropLast)
		}
		for k, st := range states {
			r, _ := NewShuffle(10, 4, dropLast, 7)
			if err := r.UnmarshalBinary(st); err != nil {
				t.Fatal(err)
			}
			q, _ := NewShuffle(10, 4, dropLast, 7)
			q.Next() // a drawn permutation that Seek must not keep
			if err := q.Seek(k/want, k%want); err != nil {
				t.Fatal(err)
			}
			for j := k; j < len(seq); j++ {
				if got := r.Next(); !slices.Equal(got, seq[j]) {
					t.Fatalf("dropLast %v: restored at batch %d, batch %d is %v, want %v", dropLast, k, j, got, seq[j])
				}
				if got := q.Next(); !slices.Equal(got, seq[j]) {
					t.Fatalf("dropLast %v: moved by Seek to batch %d, batch %d is %v, want %v", dropLast, k, j, got, seq[j])
				}
			}
		}
		for _, p := range [][2]int{{-1, 0}, {0, -1}, {0, want + 1}} {
			var se *setting.Error
			if err := s.Seek(p[0], p[1]); !errors.As(err, &se) {
				t.Errorf("dropLast %v: Seek(%d, %d): %v, want a *setting.Error", dropLast, p[0], p[1], err)
			}
		}
	}
	if _, err := NewShuffle(10, 11, true, 1); err == nil {
		t.Error("a batch above n with dropLast: no error")
	}
	var s Shuffle
	if err := s.UnmarshalBinary([]byte("poisson1xxxxxxxx")); err == nil {
		t.Error("a Poisson state restored into a Shuffle")
	}
}

// Poisson: a fixed seed draws the same samples and resumes exactly at any
// step; secret samplers (seed 0) draw different ones; sample sizes have
// the Binomial(n, q)'s mean.
func TestPoisson(t *testing.T) {
	draw := func(s *Poisson, k int) [][]int {
		var out [][]int
		for range k {
			out = append(out, slices.Clone(s.Next()))
		}
		return out
	}
	a, _ := NewPoisson(1000, 50, 9)
	b, _ := NewPoisson(1000, 50, 9)
	if a.Private() || a.SampleRate() != 0.05 {
		t.Errorf("fixed seed: Private %v, q %v", a.Private(), a.SampleRate())
	}
	first := draw(a, 20)
	st, _ := a.MarshalBinary()
	rest := draw(a, 20)
	if !slices.EqualFunc(first, draw(b, 20), slices.Equal) {
		t.Error("one seed, two sample sequences")
	}
	if err := b.UnmarshalBinary(st); err != nil {
		t.Fatal(err)
	}
	if got := draw(b, 20); !slices.EqualFunc(got, rest, slices.Equal) || b.Steps() != 40 {
		t.Error("restored at step 20, the samples differ")
	}
	if err := b.Seek(20); err != nil || !slices.EqualFunc(draw(b, 20), rest, slices.Equal) {
		t.Errorf("moved by Seek to step 20 (%v), the samples differ", err)
	}
	if err := b.Seek(-1); err == nil {
		t.Error("Seek(-1): no error")
	}
	c, _ := NewPoisson(1000, 50, 0)
	d, _ := NewPoisson(1000, 50, 0)
	if !c.Private() || slices.EqualFunc(draw(c, 5), draw(d, 5), slices.Equal) {
		t.Error("secret samplers: not private, or the same samples")
	}
	total := 0
	const steps = 2000
	for range steps {
		total += len(c.Next())
	}
	// Mean 50, standard deviation of the mean √(1000·0.05·0.95/2000) ≈ 0.15.
	if mean := float64(total) / steps; math.Abs(mean-50) > 0.8 {
		t.Errorf("mean sample size %.2f, want 50", mean)
	}
	for _, tt := range []struct{ n, expected int }{{0, 1}, {10, 0}, {10, 11}} {
		if _, err := NewPoisson(tt.n, tt.expected, 1); err == nil {
			t.Errorf("NewPoisson(%d, %d): no error", tt.n, tt.expected)
		}
	}
}

// NewShuffleFrom draws epoch e's order from the source's generator, and
// NewEpochPoisson names step k's sample (k / perEpoch, k mod perEpoch):
// the orders a trainer's published runs were drawn in.
func TestSamplersFrom(t *testing.T) {
	src := func(e int) rand.Source { return rand.NewPCG(uint64(e), 99) }
	s, err := NewShuffleFrom(7, 3, false, src)
	if err != nil {
		t.Fatal(err)
	}
	for e := range 3 {
		want := rand.New(src(e)).Perm(7)
		var got []int
		for range s.BatchesPerEpoch() {
			got = append(got, s.Next()...)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("epoch %d: %v, want %v", e, got, want)
		}
	}
	secret := privacy.NewSecret(5)
	p, err := NewEpochPoisson(secret, 50, 10, 4)
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := privacy.NewPoisson(secret, 50, 10)
	for k := range 10 {
		if got, want := p.Next(), ref.Sample(nil, uint64(k/4), uint64(k%4)); !slices.Equal(got, want) {
			t.Fatalf("step %d: %v, want sample (%d, %d) %v", k, got, k/4, k%4, want)
		}
	}
	if err := p.Seek(5); err != nil || !slices.Equal(p.Next(), ref.Sample(nil, 1, 1)) {
		t.Errorf("moved by Seek to step 5 (%v): not sample (1, 1)", err)
	}
	if _, err := NewEpochPoisson(secret, 50, 10, 0); err == nil {
		t.Error("0 samples an epoch: no error")
	}
}

// Uniform draws rand.IntN(n) of its PCG for each record of a batch, in
// order, and resumes from its state.
func TestUniform(t *testing.T) {
	u, err := NewUniform(10, 4, rand.NewPCG(3, 4))
	if err != nil {
		t.Fatal(err)
	}
	ref := rand.New(rand.NewPCG(3, 4))
	var seq [][]int
	for range 5 {
		b := slices.Clone(u.Next())
		for j, i := range b {
			if want := ref.IntN(10); i != want {
				t.Fatalf("batch %d, record %d: %d, want %d", len(seq), j, i, want)
			}
		}
		seq = append(seq, b)
	}
	st, _ := u.MarshalBinary()
	rest := [][]int{slices.Clone(u.Next()), slices.Clone(u.Next())}
	v, _ := NewUniform(10, 4, rand.NewPCG(0, 0))
	if err := v.UnmarshalBinary(st); err != nil {
		t.Fatal(err)
	}
	if got := [][]int{slices.Clone(v.Next()), slices.Clone(v.Next())}; !slices.EqualFunc(got, rest, slices.Equal) {
		t.Errorf("restored: %v, want %v", got, rest)
	}
	for _, c := range [][2]int{{0, 1}, {1, 0}} {
		if _, err := NewUniform(c[0], c[1], rand.NewPCG(1, 1)); err == nil {
			t.Errorf("NewUniform(%d, %d): no error", c[0], c[1])
		}
	}
}
