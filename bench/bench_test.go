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

// TestAlternateGemm checks that every GEMM runs on the same operands with
// the leading dimensions of compact storage, in rotating order, and that
// one duration per round comes back for each.
func TestAlternateGemm(t *testing.T) {
	var order []int
	var operands [][]float32
	gemm := func(id int) Gemm {
		return func(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
			if transA || !transB || m != 3 || n != 4 || k != 5 || lda != 5 || ldb != 5 || ldc != 4 ||
				len(a) != 15 || len(b) != 20 || len(c) != 12 || alpha != 1 || beta != 0 {
				t.Fatalf("gemm %d: transA %v transB %v %d×%d×%d lda %d ldb %d ldc %d", id, transA, transB, m, n, k, lda, ldb, ldc)
			}
			if len(order) == 0 || order[len(order)-1] != id {
				order = append(order, id)
				operands = append(operands, append(slices.Clone(a), b...))
			}
		}
	}
	ms, cpu := AlternateGemm([]Gemm{gemm(0), gemm(1), gemm(2)}, false, true, 3, 4, 5, 3)
	// Runs of calls of one GEMM (warm-up and timed), round by round.
	if want := []int{0, 1, 2, 1, 2, 0, 2, 0, 1}; !slices.Equal(order, want) {
		t.Errorf("order of calls %v, want %v", order, want)
	}
	for i, o := range operands {
		if !slices.Equal(o, operands[0]) {
			t.Errorf("call %d saw other operands", i)
		}
	}
	for _, d := range [][][]float64{ms, cpu} {
		if len(d) != 3 || len(d[0]) != 3 || len(d[1]) != 3 || len(d[2]) != 3 {
			t.Errorf("durations %v, want 3 for each of 3", d)
		}
	}
}
