package bench

import (
	"errors"
	"math"
	"slices"
	"testing"
)

func TestMedianAndRatios(t *testing.T) {
	for _, tc := range []struct {
		v    []float64
		want float64
	}{{[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}, {[]float64{7}, 7}} {
		in := slices.Clone(tc.v)
		if got := Median(tc.v); got != tc.want || !slices.Equal(in, tc.v) {
			t.Errorf("Median(%v) = %v (input now %v), want %v and the input unchanged", in, got, tc.v, tc.want)
		}
	}
	if !math.IsNaN(Median(nil)) {
		t.Error("Median of nothing is not NaN")
	}
	if got := Ratios([]float64{2, 9}, []float64{1, 3}); !slices.Equal(got, []float64{2, 3}) {
		t.Errorf("Ratios = %v", got)
	}
}

// TestInterleave checks the order (every round runs every case once, each
// round starting one case later) and that warm-up runs are not reported.
func TestInterleave(t *testing.T) {
	var order []int
	cases := make([]func() error, 3)
	for i := range cases {
		cases[i] = func() error { order = append(order, i); return nil }
	}
	var rounds []int
	res, err := Interleave(cases, 1, 2, func(done, total int) { rounds = append(rounds, done*10+total) })
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{0, 1, 2, 1, 2, 0, 2, 0, 1}; !slices.Equal(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
	if !slices.Equal(rounds, []int{13, 23, 33}) {
		t.Errorf("progress calls %v", rounds)
	}
	for i, r := range res {
		if len(r.WallMs) != 2 {
			t.Errorf("case %d: %d timings, want 2 (the warm-up left out)", i, len(r.WallMs))
		}
	}
	boom := errors.New("boom")
	if _, err := Interleave([]func() error{func() error { return boom }}, 0, 1, nil); !errors.Is(err, boom) {
		t.Errorf("error %v, want boom", err)
	}
}
