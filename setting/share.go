package setting

import "math"

// ShareCount is the number of n items that a share of them selects:
// round(share·n), halves rounding up. Every share that becomes a count
// (label noise, corrupted sequences) becomes one here.
func ShareCount(share float64, n int) int { return int(math.Round(share * float64(n))) }

// Share is ShareCount for the share set in field, of n items named items
// ("training images", "sequences of a step"): a share above 0 must select
// at least one item and a share below 1 must keep at least one, since a
// share that rounds to none or to all of them is not the share asked for.
// Such a share is an *Error that says the count it rounds to and the range
// that selects some and keeps some.
func Share(field string, share float64, n int, items string) (int, error) {
	k := ShareCount(share, n)
	switch {
	case share > 0 && k == 0:
		return 0, Errorf(field, share, "at least %.3g: %g of the %d %s rounds to 0 of them", 0.5/float64(n), share, n, items)
	case share < 1 && k == n:
		return 0, Errorf(field, share, "below %.3g: %g of the %d %s rounds to all %d of them", (float64(n)-0.5)/float64(n), share, n, items, n)
	}
	return k, nil
}
