package privacy

import "math"

// logErfc is log(erfc(x)), accurate where erfc(x) underflows: above x =
// 26 (erfc(26) ≈ 5.7e−296, near the end of the normal float64 range) the
// asymptotic series erfc(x) = e^(−x²)/(x√π)·(1 − 1/(2x²) + 3/(4x⁴) − …),
// whose first omitted term there is below 1e−16 relative.
func logErfc(x float64) float64 {
	if x < 26 {
		return math.Log(math.Erfc(x))
	}
	r := 1 / (2 * x * x)
	// 1 − r + 3r² − 15r³ + 105r⁴ − 945r⁵ + 10395r⁶ (omitted: 135135r⁷ <
	// 2e−17 at x ≥ 26), in Horner form.
	series := 1 + r*(-1+r*(3+r*(-15+r*(105+r*(-945+r*10395)))))
	return -x*x - math.Log(x) - 0.5*math.Log(math.Pi) + math.Log(series)
}

// logNormalCDF is log Φ(x), the log of the standard normal distribution
// function, accurate far into the lower tail: Φ(x) = erfc(−x/√2)/2.
func logNormalCDF(x float64) float64 {
	return logErfc(-x/math.Sqrt2) - math.Ln2
}
