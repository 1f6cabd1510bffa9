package text

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// TestHoldOut checks the cut into train, val and test: the three are the
// text in order, disjoint and complete; the test part is the last
// ⌊f·n⌋ tokens and the rest is split 90/10; the same text and fraction
// give the same cut; fraction 0 changes nothing.
func TestHoldOut(t *testing.T) {
	text := []byte(strings.Repeat("0123456789", 100)) // 1000 byte tokens
	for _, tc := range []struct {
		f                float64
		train, val, test int
	}{
		{0, 900, 100, 0},
		{0.1, 810, 90, 100},
		{0.25, 675, 75, 250},
		{0.0015, 899, 100, 1}, // ⌊1.5⌋
		{0.999, 0, 1, 999},
	} {
		c, err := FromText(text, Byte)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.HoldOut(tc.f); err != nil {
			t.Fatalf("HoldOut(%v): %v", tc.f, err)
		}
		if len(c.Train) != tc.train || len(c.Val) != tc.val || len(c.Test) != tc.test {
			t.Errorf("HoldOut(%v): %d/%d/%d tokens, want %d/%d/%d", tc.f, len(c.Train), len(c.Val), len(c.Test), tc.train, tc.val, tc.test)
		}
		if tc.f == 0 && c.Test != nil {
			t.Errorf("HoldOut(0) made a test split")
		}
		if got := bytes8(slices.Concat(c.Train, c.Val, c.Test)); string(got) != string(text) {
			t.Errorf("HoldOut(%v): train, val and test are not the text in order", tc.f)
		}
		if cap(c.Train) != len(c.Train) || cap(c.Val) != len(c.Val) {
			t.Errorf("HoldOut(%v): train or val has capacity into the next split", tc.f)
		}
		d, _ := FromText(text, Byte)
		if err := d.HoldOut(tc.f); err != nil || !slices.Equal(c.Train, d.Train) || !slices.Equal(c.Val, d.Val) || !slices.Equal(c.Test, d.Test) {
			t.Errorf("HoldOut(%v) twice: different cuts (%v)", tc.f, err)
		}
	}
	c, _ := FromText(text, Byte)
	oldTrain, oldVal := c.Train, c.Val
	if err := c.HoldOut(0.5); err != nil {
		t.Fatal(err)
	}
	c.Train[0], c.Test[len(c.Test)-1] = 'x', 'x'
	if oldTrain[0] == 'x' || oldVal[len(oldVal)-1] == 'x' {
		t.Errorf("the new splits share memory with the old")
	}
}

func TestHoldOutRefuses(t *testing.T) {
	for _, f := range []float64{-0.1, 1, 1.5, math.NaN()} {
		c, _ := FromText([]byte("0123456789"), Byte)
		if err := c.HoldOut(f); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("HoldOut(%v): %v, want a one-line error", f, err)
		}
	}
	c, _ := FromText([]byte("0123456789"), Byte)
	if err := c.HoldOut(0.05); err == nil { // ⌊0.5⌋ = 0 tokens
		t.Errorf("HoldOut of no token: no error")
	}
	if err := c.HoldOut(0.5); err != nil {
		t.Fatal(err)
	}
	if err := c.HoldOut(0.5); err == nil {
		t.Errorf("a second HoldOut: no error")
	}
	// Every split must hold a window: 5 test tokens hold block 4, not 5.
	if err := c.CheckBlock(4); err == nil {
		t.Errorf("CheckBlock(4) with %d/%d train/val tokens: no error", len(c.Train), len(c.Val))
	}
	d, _ := FromText([]byte(strings.Repeat("0123456789", 10)), Byte)
	if err := d.HoldOut(0.05); err != nil {
		t.Fatal(err)
	}
	if err := d.CheckBlock(4); err != nil {
		t.Errorf("CheckBlock(4) with %d test tokens: %v", len(d.Test), err)
	}
	if err := d.CheckBlock(5); err == nil || !strings.Contains(err.Error(), "test split") {
		t.Errorf("CheckBlock(5) with %d test tokens: %v, want the test split named", len(d.Test), err)
	}
}
