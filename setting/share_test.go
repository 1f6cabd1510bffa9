package setting

import (
	"errors"
	"strings"
	"testing"
)

// Every share that becomes a count selects some items and keeps some, or
// is refused with the count it rounds to.
func TestShare(t *testing.T) {
	for _, c := range []struct {
		share float64
		n     int
		want  int    // the count, when accepted
		err   string // "" if accepted
	}{
		{0, 8, 0, ""},
		{0.25, 8, 2, ""},
		{0.0625, 8, 1, ""}, // 0.5 rounds up
		{0.9, 8, 7, ""},
		{0.01, 8, 0, "at least 0.0625: 0.01 of the 8 sequences rounds to 0 of them"},
		{0.95, 8, 0, "below 0.938: 0.95 of the 8 sequences rounds to all 8 of them"},
		{0.99999999, 8, 0, "rounds to all 8"},
		{0.5, 1, 0, "0.5 of the 1 sequences rounds to all 1 of them"},
		{0.3, 1, 0, "rounds to 0"},
	} {
		k, err := Share("Corrupt", c.share, c.n, "sequences")
		var se *Error
		switch {
		case c.err == "" && (err != nil || k != c.want):
			t.Errorf("Share(%g, %d) = %d, %v; want %d", c.share, c.n, k, err, c.want)
		case c.err != "" && (!errors.As(err, &se) || se.Field != "Corrupt" || !strings.Contains(se.Want, c.err)):
			t.Errorf("Share(%g, %d): %v; want a *Error on Corrupt saying %q", c.share, c.n, err, c.err)
		}
		if c.err == "" && ShareCount(c.share, c.n) != k {
			t.Errorf("ShareCount(%g, %d) = %d, Share %d", c.share, c.n, ShareCount(c.share, c.n), k)
		}
	}
}
