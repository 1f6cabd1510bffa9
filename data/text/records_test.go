package text

import (
	"math"
	"slices"
	"testing"

	"github.com/psclip/psclip/privacy"
)

// Records: N = ⌊len/(T+1)⌋ records that are disjoint, consecutive windows
// of T+1 tokens (input and target one token apart); batch sizes are
// Binomial(N, q) — mean Nq, variance Nq(1−q) within 5 standard errors over
// 3,000 batches — every record joins about q of them, empty batches happen
// as often as (1−q)^N, and a Records restored from a saved count draws
// the batches that followed the save.
func TestRecords(t *testing.T) {
	const block, expected, batches = 7, 3, 3000
	tokens := make([]uint16, 1605) // 200 records of 8 tokens and 5 left over
	for i := range tokens {
		tokens[i] = uint16(i)
	}
	r, err := NewRecords(tokens, block, expected, privacy.NewSecret(9))
	if err != nil {
		t.Fatal(err)
	}
	n := r.Len()
	if q := r.SampleRate(); n != 200 || q != 3.0/200 {
		t.Fatalf("%d records at q = %g, want 200 at 0.015", n, q)
	}
	owner := make([]int, len(tokens))
	for i := range owner {
		owner[i] = -1
	}
	x, y := make([]int32, block), make([]int32, block)
	for i := range n {
		r.Fill(i, x, y)
		for j := range block {
			if x[j] != int32(i*(block+1)+j) || y[j] != x[j]+1 {
				t.Fatalf("record %d: input %v, target %v; want tokens %d… and one further", i, x, y, i*(block+1))
			}
		}
		for _, tok := range append(slices.Clone(x), y[block-1]) {
			if owner[tok] != -1 {
				t.Fatalf("token %d in records %d and %d", tok, owner[tok], i)
			}
			owner[tok] = i
		}
	}
	if c := slices.Index(owner, -1); c != 1600 {
		t.Errorf("first token of no record: %d, want 1600 (the 5 left over)", c)
	}

	var sum, sq float64
	empty := 0
	joined := make([]int, n)
	var saved []byte
	var after [][]int
	for k := range batches {
		if k == 1000 {
			if saved, err = r.MarshalBinary(); err != nil {
				t.Fatal(err)
			}
		}
		b := r.Next()
		if k >= 1000 && k < 1010 {
			after = append(after, slices.Clone(b))
		}
		if !slices.IsSorted(b) {
			t.Fatalf("batch %d not ascending: %v", k, b)
		}
		sum += float64(len(b))
		sq += float64(len(b) * len(b))
		if len(b) == 0 {
			empty++
		}
		for _, i := range b {
			joined[i]++
		}
	}
	q := r.SampleRate()
	mean, variance := sum/batches, sq/batches-(sum/batches)*(sum/batches)
	wantMean, wantVar := float64(n)*q, float64(n)*q*(1-q)
	if math.Abs(mean-wantMean) > 5*math.Sqrt(wantVar/batches) || math.Abs(variance-wantVar) > 5*wantVar*math.Sqrt(2.0/batches) {
		t.Errorf("batch size mean %.3f variance %.3f, want %.3f and %.3f", mean, variance, wantMean, wantVar)
	}
	pEmpty := math.Pow(1-q, float64(n))
	if math.Abs(float64(empty)/batches-pEmpty) > 5*math.Sqrt(pEmpty*(1-pEmpty)/batches) {
		t.Errorf("%d empty batches of %d, want about %.0f", empty, batches, pEmpty*batches)
	}
	for i, c := range joined {
		if math.Abs(float64(c)-batches*q) > 5*math.Sqrt(batches*q*(1-q)) {
			t.Errorf("record %d joined %d batches of %d, want about %.0f", i, c, batches, batches*q)
		}
	}

	r2, _ := NewRecords(tokens, block, expected, privacy.NewSecret(9))
	if err := r2.UnmarshalBinary(saved); err != nil {
		t.Fatal(err)
	}
	for k, want := range after {
		if got := r2.Next(); !slices.Equal(got, want) {
			t.Fatalf("restored batch %d: %v, want %v", 1000+k, got, want)
		}
	}
	if r2.Drawn() != 1010 {
		t.Errorf("drawn %d, want 1010", r2.Drawn())
	}
	r3, _ := NewRecords(tokens, block, expected, privacy.NewSecret(10))
	r3.UnmarshalBinary(saved)
	if slices.Equal(r3.Next(), after[0]) && slices.Equal(r3.Next(), after[1]) {
		t.Errorf("seeds 9 and 10 draw the same batches")
	}
	r4, _ := NewRecords(tokens, block, expected, privacy.NewSecret(0))
	r4.UnmarshalBinary(saved)
	if slices.Equal(r4.Next(), after[0]) && slices.Equal(r4.Next(), after[1]) {
		t.Errorf("a secret from crypto/rand draws the fixed seed's batches")
	}
}

// An expected batch of at least N takes every record (q = 1); a stream
// shorter than one record, a bad block size or expected batch, and a
// damaged state are errors.
func TestRecordsEdges(t *testing.T) {
	tokens := make([]uint16, 20)
	r, err := NewRecords(tokens, 4, 4, privacy.NewSecret(1)) // 4 records
	if err != nil {
		t.Fatal(err)
	}
	if b := r.Next(); r.SampleRate() != 1 || !slices.Equal(b, []int{0, 1, 2, 3}) {
		t.Errorf("expected 4 of 4: q %g, batch %v; want 1 and every record", r.SampleRate(), b)
	}
	for _, tc := range []struct {
		name               string
		n, block, expected int
	}{{"short", 4, 4, 1}, {"block 0", 20, 0, 1}, {"expected 0", 20, 4, 0}} {
		if _, err := NewRecords(tokens[:tc.n], tc.block, tc.expected, privacy.NewSecret(1)); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
	if err := r.UnmarshalBinary([]byte{1, 2}); err == nil {
		t.Error("a 2-byte state: no error")
	}
}
