package labelnoise

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/psclip/psclip/setting"
)

// labels returns n labels cycling through the classes.
func labels(n, classes int) []uint8 {
	l := make([]uint8, n)
	for i := range l {
		l[i] = uint8(i % classes)
	}
	return l
}

func TestApplyFlipsExactly(t *testing.T) {
	tests := []struct {
		n, classes int
		cfg        Config
		want       int
	}{
		{10, 3, Config{Fraction: 0.25, Seed: 1}, 3}, // round(2.5) = 3
		{10, 3, Config{Fraction: 0.24, Seed: 1}, 2},
		{60000, 10, Config{Fraction: 0.4, Seed: 7}, 24000},
		{45000, 10, Config{Fraction: 0.2, Seed: 7, Asymmetric: true}, 9000},
		{7, 2, Config{Fraction: 0.99, Seed: 3}, 7},
		{7, 2, Config{Fraction: 0, Seed: 3}, 0},
		{0, 2, Config{Fraction: 0.5, Seed: 3}, 0},
		{5, 1, Config{Fraction: 0.05, Seed: 3}, 0}, // nothing to flip: one class is fine
	}
	for _, tt := range tests {
		orig := labels(tt.n, tt.classes)
		got := slices.Clone(orig)
		noisy, err := Apply(got, tt.classes, tt.cfg)
		if err != nil {
			t.Fatalf("%+v: %v", tt, err)
		}
		if len(noisy) != tt.want || tt.cfg.Count(tt.n) != tt.want {
			t.Errorf("n %d %+v: %d flipped (Count %d), want %d", tt.n, tt.cfg, len(noisy), tt.cfg.Count(tt.n), tt.want)
		}
		if !slices.IsSorted(noisy) || len(slices.Compact(slices.Clone(noisy))) != len(noisy) {
			t.Errorf("n %d %+v: indices not ascending and distinct", tt.n, tt.cfg)
		}
		mask := Mask(tt.n, noisy)
		for i := range got {
			switch {
			case mask[i] && got[i] == orig[i]:
				t.Fatalf("image %d: flipped to its own class %d", i, got[i])
			case !mask[i] && got[i] != orig[i]:
				t.Fatalf("image %d: not listed, but its label changed", i)
			case int(got[i]) >= tt.classes:
				t.Fatalf("image %d: label %d of %d classes", i, got[i], tt.classes)
			case mask[i] && tt.cfg.Asymmetric && int(got[i]) != (int(orig[i])+1)%tt.classes:
				t.Fatalf("image %d: asymmetric noise took class %d to %d", i, orig[i], got[i])
			}
		}
	}
}

func TestApplyIsDeterministic(t *testing.T) {
	run := func(seed uint64) ([]int, []uint8) {
		l := labels(1000, 10)
		noisy, err := Apply(l, 10, Config{Fraction: 0.3, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		return noisy, l
	}
	a, la := run(5)
	b, lb := run(5)
	c, _ := run(6)
	if !slices.Equal(a, b) || !slices.Equal(la, lb) {
		t.Error("two runs with the same seed differ")
	}
	if slices.Equal(a, c) {
		t.Error("seeds 5 and 6 flip the same images")
	}
}

// TestApplyIsUniform flips every label of 45,000 images of 10 classes:
// the shift to the new class must be spread evenly over 1..9, and the
// images chosen at 20% evenly over the data set.
func TestApplyIsUniform(t *testing.T) {
	const n, classes = 45000, 10
	orig := labels(n, classes)
	got := slices.Clone(orig)
	if _, err := Apply(got, classes, Config{Fraction: 0.99999, Seed: 2}); err != nil {
		t.Fatal(err)
	}
	var shifts [classes]int
	for i := range got {
		shifts[(int(got[i])-int(orig[i])+classes)%classes]++
	}
	// Each shift count is binomial(n, 1/9): sd = √(n·(1/9)·(8/9)) ≈ 67.
	for s := 1; s < classes; s++ {
		if math.Abs(float64(shifts[s])-n/9.0) > 5*67 {
			t.Errorf("shift %d drawn %d times, want about %d", s, shifts[s], n/9)
		}
	}
	noisy, _ := Apply(labels(n, classes), classes, Config{Fraction: 0.2, Seed: 2})
	firstHalf := 0
	for _, i := range noisy {
		if i < n/2 {
			firstHalf++
		}
	}
	// Hypergeometric: sd ≈ √(9000·¼·0.8) ≈ 42.
	if math.Abs(float64(firstHalf)-4500) > 5*42 {
		t.Errorf("%d of 9000 noisy images in the first half, want about 4500", firstHalf)
	}
}

func TestApplyErrors(t *testing.T) {
	for _, f := range []float64{-0.1, 1, 1.01, math.NaN(), math.Inf(1)} {
		var se *setting.Error
		if _, err := Apply(labels(10, 3), 3, Config{Fraction: f}); !errors.As(err, &se) || se.Field != "Fraction" {
			t.Errorf("Fraction %v: error %v, want a *setting.Error on Fraction", f, err)
		}
	}
	if _, err := Apply(labels(10, 1), 1, Config{Fraction: 0.5}); err == nil {
		t.Error("noise with one class: no error")
	}
	l := labels(10, 3)
	l[4] = 3
	if _, err := Apply(l, 3, Config{Fraction: 0.5}); err == nil {
		t.Error("a label out of range: no error")
	}
}

func TestDetection(t *testing.T) {
	noisy := Mask(8, []int{1, 4, 6})
	var d Detection
	if !math.IsNaN(d.Precision()) || !math.IsNaN(d.Recall()) || !math.IsNaN(d.NoisyShare()) {
		t.Error("an empty Detection's ratios must be NaN")
	}
	// Two batches visiting images out of order; image 4 is seen twice.
	d.Add([]bool{true, false, true}, []int{4, 1, 0}, noisy)
	d.Add([]bool{true, true, false, false, false}, []int{6, 4, 2, 3, 5}, noisy)
	want := Detection{Samples: 8, Noisy: 4, Clipped: 4, NoisyClipped: 3}
	if d != want {
		t.Fatalf("%+v, want %+v", d, want)
	}
	if d.Precision() != 0.75 || d.Recall() != 0.75 || d.NoisyShare() != 0.5 {
		t.Errorf("precision %v recall %v share %v, want 0.75 0.75 0.5", d.Precision(), d.Recall(), d.NoisyShare())
	}
	none := Detection{Samples: 4, Noisy: 1}
	if !math.IsNaN(none.Precision()) || none.Recall() != 0 {
		t.Errorf("nothing clipped: precision %v recall %v, want NaN and 0", none.Precision(), none.Recall())
	}
}
