package quadratic

import (
	"hash/fnv"
	"math"
	"testing"
)

// bitsHash is an FNV-1a hash of the values' bits.
func bitsHash(vals []float64) uint64 {
	h := fnv.New64a()
	var b [8]byte
	for _, v := range vals {
		u := math.Float64bits(v)
		for i := range b {
			b[i] = byte(u >> (8 * i))
		}
		h.Write(b[:])
	}
	return h.Sum64()
}

// TestResultsPinned pins every curve value of Run and every quantile of
// HighProb, to the bit, for small configurations that between them take
// every method and every code path of the simulation (odd batch and
// dimension sizes too), and for the default one (`psclip quadratic`). The hashes are those of the first implementation;
// a change to them is a change of the experiments' results, which the
// paper's tables in README.md were made with.
func TestResultsPinned(t *testing.T) {
	tuned := small()
	tuned.Tuned = true
	all := small()
	all.Methods = MethodNames
	odd := small()
	odd.N, odd.Dim, odd.Methods = 37, 19, MethodNames
	for _, tc := range []struct {
		name          string
		c             Config
		run, highProb uint64
	}{
		{"default", small(), 0xa557d5c103791ac3, 0x5fb7fee2581d0d53},
		{"tuned", tuned, 0x6f1357bcbb4a0d05, 0x64ef04fb27f8626},
		{"all methods", all, 0xc05319ae3344c471, 0x3d7fcfff6490cbd3},
		{"n=37 d=19", odd, 0xde64af90cfce2001, 0x756a9f12a7f4051a},
		{"the paper's untuned table", DefaultConfig(), 0x6dadbbd39bbf6c2, 0xa1068fb48bd5f1a8},
	} {
		res, err := Run(tc.c)
		if err != nil {
			t.Fatal(err)
		}
		var curves []float64
		for _, r := range res.Rows {
			curves = append(curves, r.Curve...)
		}
		hp, err := HighProb(tc.c)
		if err != nil {
			t.Fatal(err)
		}
		var qs []float64
		for _, q := range hp.Rows {
			qs = append(qs, q.Quantile)
		}
		if got := bitsHash(curves); got != tc.run {
			t.Errorf("%s: Run's curves hash to %#x, want %#x", tc.name, got, tc.run)
		}
		if got := bitsHash(qs); got != tc.highProb {
			t.Errorf("%s: HighProb's quantiles hash to %#x, want %#x", tc.name, got, tc.highProb)
		}
	}
}
