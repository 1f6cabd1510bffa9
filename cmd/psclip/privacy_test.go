package main

import (
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/psclip/psclip/privacy"
)

// psclip privacy prints what package privacy computes, as text and as
// JSON with exactly the keys epsilon, order (RDP) and noise_multiplier;
// the values are the published ones that package privacy's tests check
// (Opacus' test_rdp_accountant, its mnist_README, test_gdp_accountant,
// test_get_noise_multiplier_rdp_steps, test_prv_accountant).
func TestPrivacyCommand(t *testing.T) {
	tests := []struct {
		args  []string
		text  string   // a substring of the text line
		keys  []string // the JSON keys, in order
		eps   float64  // JSON epsilon
		tol   float64
		order float64 // JSON order (0: absent)
		sigma float64 // JSON noise_multiplier
	}{
		{[]string{"--sample-rate", "0.04", "--noise-multiplier", "1.5", "--steps", "2250", "--delta", "1e-5"},
			"epsilon 7.32911 at delta 1e-05: 2250 steps at sample rate 0.04, rdp accountant, best order",
			[]string{"epsilon", "order", "noise_multiplier"}, 7.32911117143, 5e-8, 0, 1.5},
		{[]string{"--sample-rate", "0.004", "--noise-multiplier", "1.3", "--steps", "250", "--delta", "1e-5", "--classical"},
			"epsilon 0.710998 at delta 1e-05: 250 steps at sample rate 0.004, rdp accountant, best order 18",
			[]string{"epsilon", "order", "noise_multiplier"}, 0.71, 0.005, 18, 1.3},
		{[]string{"--sample-rate", "0.1", "--noise-multiplier", "1", "--steps", "50", "--delta", "1e-5", "--orders", "2,4,8,16"},
			"rdp accountant, best order", []string{"epsilon", "order", "noise_multiplier"}, 0, 0, 0, 1},
		{[]string{"--sample-rate", "0.04", "--noise-multiplier", "1.5", "--steps", "2249", "--delta", "1e-5", "--accountant", "gdp"},
			"gdp accountant\n", []string{"epsilon", "noise_multiplier"}, 6.595, 0.005, 0, 1.5},
		{[]string{"--sample-rate", "0.04", "--target-epsilon", "8", "--steps", "2000", "--delta", "1e-5"},
			"noise_multiplier 1.356201171875 (epsilon 7.99938 ≤ 8) at delta 1e-05: 2000 steps at sample rate 0.04, rdp accountant, best order",
			[]string{"epsilon", "order", "noise_multiplier"}, 8, 0.01, 0, 1.356201171875},
		{[]string{"--sample-rate", "0.04", "--noise-multiplier", "1.5", "--steps", "2249", "--delta", "1e-5", "--accountant", "prv"},
			"epsilon 6.7774 at delta 1e-05: 2249 steps at sample rate 0.04, prv accountant\n",
			[]string{"epsilon", "noise_multiplier"}, 6.777395712150674, 5e-8, 0, 1.5},
	}
	for _, tt := range tests {
		code, out, errOut := runCLI(append([]string{"privacy"}, tt.args...)...)
		if code != 0 || !strings.Contains(out, tt.text) || strings.Count(out, "\n") != 1 || errOut != "" {
			t.Errorf("psclip privacy %v: exit %d, stdout %q, stderr %q; want a line with %q", tt.args, code, out, errOut, tt.text)
		}
		code, out, errOut = runCLI(append([]string{"privacy", "--json"}, tt.args...)...)
		if code != 0 || errOut != "" {
			t.Fatalf("psclip privacy --json %v: exit %d, stderr %q", tt.args, code, errOut)
		}
		var keys []string
		dec := json.NewDecoder(strings.NewReader(out))
		dec.Token() // {
		for dec.More() {
			k, _ := dec.Token()
			keys = append(keys, k.(string))
			var v any
			dec.Decode(&v)
		}
		var r privacyResult
		if err := json.Unmarshal([]byte(out), &r); err != nil || !reflect.DeepEqual(keys, tt.keys) {
			t.Fatalf("psclip privacy --json %v = %s (%v): keys %v, want %v", tt.args, out, err, keys, tt.keys)
		}
		// The JSON is what the library computes for the same input.
		h := privacy.History{{SampleRate: flagValue(tt.args, "--sample-rate"), NoiseMultiplier: r.NoiseMultiplier, Count: int(flagValue(tt.args, "--steps"))}}
		o := privacy.Options{Accountant: privacy.Accountant(flagString(tt.args, "--accountant", "rdp")), Classical: strings.Contains(strings.Join(tt.args, " "), "--classical")}
		if s := flagString(tt.args, "--orders", ""); s != "" {
			var l floatList
			l.Set(s)
			o.Orders = l
		}
		want, err := privacy.Epsilon(h, 1e-5, o)
		if err != nil || r.Epsilon != want.Epsilon || r.Order != want.Order {
			t.Errorf("psclip privacy --json %v = %+v, library %+v (%v)", tt.args, r, want, err)
		}
		if tt.tol != 0 && math.Abs(r.Epsilon-tt.eps) > tt.tol || tt.order != 0 && r.Order != tt.order || r.NoiseMultiplier != tt.sigma {
			t.Errorf("psclip privacy --json %v = %+v, want epsilon %g (±%g), order %g, noise_multiplier %g", tt.args, r, tt.eps, tt.tol, tt.order, tt.sigma)
		}
	}
}

// flagValue is the number after name in args (0 if absent).
func flagValue(args []string, name string) float64 {
	x, _ := strconv.ParseFloat(flagString(args, name, "0"), 64)
	return x
}

// flagString is the word after name in args, or def.
func flagString(args []string, name, def string) string {
	for i, a := range args {
		if a == name && i+1 < len(args) {
			return args[i+1]
		}
	}
	return def
}
