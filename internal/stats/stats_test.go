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
