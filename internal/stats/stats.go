// Package stats holds the small numeric helpers the experiments' reports
// share: a JSON-safe float, the mean and standard deviation over seeds, and
// the paired comparison of two methods over the same seeds.
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

// Paired is the comparison of a method with a reference over paired seeds:
// the statistics of the differences dᵢ = xᵢ − refᵢ, seed by seed. Seeds
// that share initial weights, batches and noise make the pairs; an
// unpaired spread over seeds would count the seed-to-seed variation that
// both methods share.
type Paired struct {
	// N is the number of pairs.
	N int `json:"n"`
	// Mean and SD are the mean difference and the differences' sample
	// standard deviation.
	Mean Float `json:"mean"`
	SD   Float `json:"sd"`
	// CI95 is the two-sided 95 % Student t interval for the mean
	// difference, Mean ± t(0.975, N−1)·SD/√N (NaN for fewer than two
	// pairs).
	CI95 [2]Float `json:"ci95"`
	// Positive, Negative and Zero count the pairs whose difference has
	// that sign: the sign count.
	Positive int `json:"positive"`
	Negative int `json:"negative"`
	Zero     int `json:"zero"`
}

// Pair compares x with ref pair by pair; the two must have the same length.
// Pairs where either value is NaN (a diverged run) are left out and not
// counted.
func Pair(x, ref []float64) (Paired, error) {
	if len(x) != len(ref) {
		return Paired{}, fmt.Errorf("stats: %d values paired with %d", len(x), len(ref))
	}
	var d []float64
	for i := range x {
		if math.IsNaN(x[i]) || math.IsNaN(ref[i]) {
			continue
		}
		d = append(d, x[i]-ref[i])
	}
	p := Paired{N: len(d)}
	for _, v := range d {
		switch {
		case v > 0:
			p.Positive++
		case v < 0:
			p.Negative++
		default:
			p.Zero++
		}
	}
	p.Mean, p.SD = MeanSD(d)
	h := Float(math.NaN())
	if len(d) >= 2 {
		h = Float(StudentTQuantile(0.975, float64(len(d)-1)) * float64(p.SD) / math.Sqrt(float64(len(d))))
	}
	p.CI95 = [2]Float{p.Mean - h, p.Mean + h}
	return p, nil
}

// Excludes0 reports whether the 95 % interval lies wholly on one side of
// zero.
func (p Paired) Excludes0() bool { return p.CI95[0] > 0 || p.CI95[1] < 0 }

// Format writes the comparison as "+0.031 [+0.012, +0.050]", the mean
// difference and its 95 % interval, with digits decimals.
func (p Paired) Format(digits int) string {
	f := func(x Float) string { return strconv.FormatFloat(float64(x), 'f', digits, 64) }
	s := func(x Float) string {
		if x >= 0 {
			return "+" + f(x)
		}
		return f(x)
	}
	return s(p.Mean) + " [" + s(p.CI95[0]) + ", " + s(p.CI95[1]) + "]"
}

// StudentTQuantile returns the p-quantile of Student's t distribution with
// df > 0 degrees of freedom, for 0 < p < 1, by bisection on its
// distribution function (the regularized incomplete beta function).
func StudentTQuantile(p, df float64) float64 {
	if !(p > 0 && p < 1) || !(df > 0) {
		return math.NaN()
	}
	if p < 0.5 {
		return -StudentTQuantile(1-p, df)
	}
	lo, hi := 0.0, 1.0
	for studentTCDF(hi, df) < p {
		hi *= 2
	}
	for range 200 {
		mid := (lo + hi) / 2
		if studentTCDF(mid, df) < p {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo <= 1e-15*hi {
			break
		}
	}
	return (lo + hi) / 2
}

// studentTCDF is P(T ≤ t) for t ≥ 0: 1 − I_{df/(df+t²)}(df/2, 1/2)/2.
func studentTCDF(t, df float64) float64 {
	return 1 - regIncBeta(df/(df+t*t), df/2, 0.5)/2
}

// regIncBeta is the regularized incomplete beta function I_x(a, b), by its
// continued fraction (Lentz's method), on the side where it converges fast.
func regIncBeta(x, a, b float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(lab - la - lb + a*math.Log(x) + b*math.Log1p(-x))
	if x > (a+1)/(a+b+2) {
		return 1 - front*betaCF(1-x, b, a)/b
	}
	return front * betaCF(x, a, b) / a
}

func betaCF(x, a, b float64) float64 {
	const tiny = 1e-300
	c, d := 1.0, 1-(a+b)*x/(a+1)
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	f := d
	for m := 1; m <= 300; m++ {
		fm := float64(m)
		for k := range 2 {
			var num float64
			if k == 0 {
				num = fm * (b - fm) * x / ((a + 2*fm - 1) * (a + 2*fm))
			} else {
				num = -(a + fm) * (a + b + fm) * x / ((a + 2*fm) * (a + 2*fm + 1))
			}
			d = 1 + num*d
			if math.Abs(d) < tiny {
				d = tiny
			}
			c = 1 + num/c
			if math.Abs(c) < tiny {
				c = tiny
			}
			d = 1 / d
			f *= d * c
		}
		if math.Abs(d*c-1) < 1e-16 {
			break
		}
	}
	return f
}
