package stats

import (
	"encoding/json"
	"math"
	"testing"
)

func TestFloatJSON(t *testing.T) {
	tests := []struct {
		in   Float
		want string
	}{
		{1.5, "1.5"}, {0.1, "0.1"}, {-2e-9, "-2e-09"},
		{Float(math.NaN()), "null"}, {Float(math.Inf(1)), "null"}, {Float(math.Inf(-1)), "null"},
	}
	for _, tt := range tests {
		b, err := json.Marshal(tt.in)
		if err != nil || string(b) != tt.want {
			t.Errorf("Marshal(%v) = %s, %v; want %s", tt.in, b, err, tt.want)
		}
		var back Float
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if x := float64(tt.in); !(back == tt.in || math.IsNaN(float64(back)) && (math.IsNaN(x) || math.IsInf(x, 0))) {
			t.Errorf("round trip of %v gave %v", tt.in, back)
		}
	}
	var f Float
	if err := json.Unmarshal([]byte(`"x"`), &f); err == nil {
		t.Error("a string must not decode as a Float")
	}
}

func TestMeanSD(t *testing.T) {
	m, sd := MeanSD([]float64{2, 4, 4, 4, 5, 5, 7, 9})
	if m != 5 || math.Abs(float64(sd)-2.1380899352993952) > 1e-15 {
		t.Errorf("MeanSD = %v, %v; want 5, 2.13809 (sample sd)", m, sd)
	}
	if m, sd := MeanSD([]float64{3}); m != 3 || !math.IsNaN(float64(sd)) {
		t.Errorf("one value: %v, %v; want 3, NaN", m, sd)
	}
	if m, _ := MeanSD(nil); !math.IsNaN(float64(m)) {
		t.Errorf("no values: mean %v, want NaN", m)
	}
}

// TestStudentTQuantile checks quantiles against R's qt (the values of any
// printed t table, to the digits given).
func TestStudentTQuantile(t *testing.T) {
	for _, tt := range []struct{ p, df, want float64 }{
		{0.975, 1, 12.706204736},
		{0.975, 2, 4.302652730},
		{0.975, 4, 2.776445105},
		{0.975, 9, 2.262157163},
		{0.975, 29, 2.045229642},
		{0.975, 1000, 1.962339081},
		{0.995, 4, 4.604094871},
		{0.9, 10, 1.372183641},
		{0.025, 4, -2.776445105},
		{0.5, 3, 0},
	} {
		if got := StudentTQuantile(tt.p, tt.df); math.Abs(got-tt.want) > 1e-8 {
			t.Errorf("StudentTQuantile(%v, %v) = %.10f, want %.9f", tt.p, tt.df, got, tt.want)
		}
	}
	if !math.IsNaN(StudentTQuantile(1, 3)) || !math.IsNaN(StudentTQuantile(0.5, 0)) {
		t.Error("out-of-range p or df must give NaN")
	}
}

func TestPair(t *testing.T) {
	ref := []float64{10, 10, 10, 10, 10, 7}
	x := []float64{11, 12, 13, 14, 15, math.NaN()}
	p, err := Pair(x, ref)
	if err != nil {
		t.Fatal(err)
	}
	// d = 1..5: mean 3, sd √2.5, half-width t(0.975, 4)·√2.5/√5.
	h := 2.776445105 * math.Sqrt(2.5) / math.Sqrt(5)
	if p.N != 5 || p.Mean != 3 || math.Abs(float64(p.SD)-math.Sqrt(2.5)) > 1e-12 ||
		math.Abs(float64(p.CI95[0])-(3-h)) > 1e-8 || math.Abs(float64(p.CI95[1])-(3+h)) > 1e-8 ||
		p.Positive != 5 || p.Negative != 0 || p.Zero != 0 || !p.Excludes0() {
		t.Errorf("Pair = %+v; want n 5, mean 3, sd 1.5811, ci95 [%.6f, %.6f], 5 positive", p, 3-h, 3+h)
	}
	if got, want := p.Format(2), "+3.00 [+1.04, +4.96]"; got != want {
		t.Errorf("Format = %q, want %q", got, want)
	}
	q, _ := Pair([]float64{1, 2, 3}, []float64{2, 1, 3})
	if q.Positive != 1 || q.Negative != 1 || q.Zero != 1 || q.Excludes0() {
		t.Errorf("signs: %+v", q)
	}
	if _, err := Pair([]float64{1}, nil); err == nil {
		t.Error("unequal lengths must be an error")
	}
}
