// Package stats holds the small numeric helpers the experiments' reports
// share: a JSON-safe float and the mean and standard deviation over seeds.
package stats

import (
	"fmt"
	"math"
	"strconv"
)

// Float is a float64 that JSON-encodes NaN and ±Inf as null, so that a
// diverged run, or a statistic a method does not have, still writes valid
// JSON; it decodes null as NaN.
type Float float64

// MarshalJSON writes the shortest representation that round-trips, or null.
func (f Float) MarshalJSON() ([]byte, error) {
	x := float64(f)
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, x, 'g', -1, 64), nil
}

// UnmarshalJSON reads a number, or null as NaN.
func (f *Float) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*f = Float(math.NaN())
		return nil
	}
	x, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("%q is not a number", b)
	}
	*f = Float(x)
	return nil
}

// MeanSD returns the mean of x and its sample standard deviation (n−1 in
// the denominator): NaN for the mean of nothing and for the deviation of
// fewer than two values.
func MeanSD(x []float64) (mean, sd Float) {
	if len(x) == 0 {
		return Float(math.NaN()), Float(math.NaN())
	}
	var s float64
	for _, v := range x {
		s += v
	}
	m := s / float64(len(x))
	if len(x) < 2 {
		return Float(m), Float(math.NaN())
	}
	var ss float64
	for _, v := range x {
		ss += (v - m) * (v - m)
	}
	return Float(m), Float(math.Sqrt(ss / float64(len(x)-1)))
}
