package estimator

import (
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/psclip/psclip/setting"
)

// A Spec refuses, with a *setting.Error naming the field, an unknown
// estimator, a setting its estimator does not read, and a value out of
// range in float32, where thresholds are used.
func TestSpecValidate(t *testing.T) {
	tests := []struct {
		s     Spec
		field string // "": valid
	}{
		{Spec{Estimator: "sgd"}, ""},
		{Spec{Estimator: "clip-sgd", Clip: 3}, ""},
		{Spec{Estimator: "ps-clip-sgd", Clip: 45}, ""},
		{Spec{Estimator: "ps-clip-sgd", Alpha: 15, Beta: 2}, ""},
		{Spec{Estimator: "ps-clip-sgd", AutoAlpha: true, AutoBeta: true, Window: 512}, ""},
		{Spec{Estimator: "ps-clip-auto"}, ""},
		{Spec{Estimator: "ps-clip-quantile"}, ""}, // γ0 0: the first batch's median
		{Spec{Estimator: "ps-clip-quantile", Clip: 3, TargetQuantile: 0.9, QuantileRate: 0.1}, ""},
		{Spec{Estimator: "auto-clip", AutoClipR: 0.1}, ""},

		{Spec{}, "Estimator"},
		{Spec{Estimator: "adam"}, "Estimator"},
		// Issue 14: settings the estimator does not read are refused.
		{Spec{Estimator: "ps-clip-sgd", Clip: 1, Alpha: 0.5, Beta: 1.5}, "Clip"},
		{Spec{Estimator: "clip-sgd", Alpha: 1, Beta: 2}, "Alpha"},
		{Spec{Estimator: "clip-sgd", Clip: 1, Beta: 2}, "Beta"},
		{Spec{Estimator: "sgd", Clip: 3}, "Clip"},
		{Spec{Estimator: "ps-clip-auto", Clip: 3}, "Clip"},
		{Spec{Estimator: "ps-clip-auto", Beta: 1.5}, "Beta"},
		{Spec{Estimator: "ps-clip-sgd", Clip: 1, Alpha: 1}, "Alpha"}, // α without β
		{Spec{Estimator: "ps-clip-sgd", Clip: 1, Window: 512}, "Window"},
		{Spec{Estimator: "ps-clip-sgd", Clip: 1, TargetQuantile: 0.5}, "TargetQuantile"},
		{Spec{Estimator: "nsgd", AutoClipR: 0.1}, "AutoClipR"},
		{Spec{Estimator: "ps-clip-sgd", Alpha: 2, AutoAlpha: true, Beta: 2}, "Alpha"},
		{Spec{Estimator: "ps-clip-sgd", Alpha: 2, Beta: 2, AutoBeta: true}, "Beta"},
		// Ranges, in float32.
		{Spec{Estimator: "clip-sgd"}, "Clip"},
		{Spec{Estimator: "clip-sgd", Clip: -1}, "Clip"},
		{Spec{Estimator: "clip-sgd", Clip: math.NaN()}, "Clip"},
		{Spec{Estimator: "clip-sgd", Clip: 1e39}, "Clip"},  // +Inf in float32
		{Spec{Estimator: "clip-sgd", Clip: 1e-40}, "Clip"}, // subnormal in float32
		{Spec{Estimator: "ps-clip-sgd", Alpha: 1e39, Beta: 2}, "Alpha"},
		{Spec{Estimator: "ps-clip-sgd", Alpha: 0, Beta: 2}, "Alpha"},
		{Spec{Estimator: "ps-clip-sgd", Alpha: 1, Beta: -1}, "Beta"},
		{Spec{Estimator: "ps-clip-sgd", Alpha: 1, Beta: math.Inf(1)}, "Beta"},
		{Spec{Estimator: "ps-clip-quantile", Clip: -1}, "Clip"},
		{Spec{Estimator: "ps-clip-quantile", TargetQuantile: 1}, "TargetQuantile"},
		{Spec{Estimator: "ps-clip-quantile", QuantileRate: -0.1}, "QuantileRate"},
		{Spec{Estimator: "ps-clip-auto", Window: MinTailSamples - 1}, "Window"},
		{Spec{Estimator: "auto-clip", AutoClipR: 1e-45}, "AutoClipR"},
		{Spec{Estimator: "dp-sgd", Clip: 0.1, NoiseMultiplier: 2.15}, ""},
		{Spec{Estimator: "dp-sgd", Clip: 0.1, NoiseMultiplier: 2.15, NoiseSeed: 3}, ""},
		{Spec{Estimator: "dp-sgd", Clip: 0.1}, "NoiseMultiplier"},
		{Spec{Estimator: "dp-sgd", Clip: 0.1, NoiseMultiplier: -1}, "NoiseMultiplier"},
		{Spec{Estimator: "dp-sgd", NoiseMultiplier: 1}, "Clip"},
		{Spec{Estimator: "ps-clip-sgd", Clip: 1, NoiseMultiplier: 1}, "NoiseMultiplier"},
		{Spec{Estimator: "sgd", NoiseSeed: 1}, "NoiseSeed"},
	}
	for _, tt := range tests {
		err := tt.s.Validate()
		e, nerr := tt.s.New()
		var se *setting.Error
		switch {
		case tt.field == "" && (err != nil || nerr != nil || e == nil):
			t.Errorf("%+v: %v, %v; want valid", tt.s, err, nerr)
		case tt.field == "":
		case !errors.As(err, &se) || se.Field != tt.field:
			t.Errorf("%+v: %v; want a *setting.Error for %s", tt.s, err, tt.field)
		case nerr == nil || e != nil:
			t.Errorf("%+v: New = %v, %v; want Validate's error", tt.s, e, nerr)
		}
	}
}

// Reads says which settings each estimator reads; Trim clears the others
// and Unread lists their JSON keys.
func TestSpecReads(t *testing.T) {
	tests := []struct {
		s     Spec
		reads []string // besides Estimator
	}{
		{Spec{Estimator: "sgd"}, nil},
		{Spec{Estimator: "nsgd"}, nil},
		{Spec{Estimator: "clip-sgd"}, []string{"Clip"}},
		{Spec{Estimator: "ps-clip-sgd"}, []string{"Clip", "Beta", "AutoBeta"}},
		{Spec{Estimator: "ps-clip-sgd", Beta: 2}, []string{"Alpha", "Beta", "AutoAlpha", "AutoBeta"}},
		{Spec{Estimator: "ps-clip-sgd", AutoBeta: true}, []string{"Alpha", "Beta", "AutoAlpha", "AutoBeta", "Window"}},
		{Spec{Estimator: "ps-clip-auto"}, []string{"Window"}},
		{Spec{Estimator: "ps-clip-quantile"}, []string{"Clip", "TargetQuantile", "QuantileRate"}},
		{Spec{Estimator: "auto-clip"}, []string{"AutoClipR"}},
		{Spec{Estimator: "dp-sgd"}, []string{"Clip", "TargetQuantile", "NoiseMultiplier", "NoiseSeed"}},
		{Spec{Estimator: "dp-sgd", TargetQuantile: 0.5}, []string{"Clip", "TargetQuantile", "QuantileRate", "CountNoise", "NoiseMultiplier", "NoiseSeed"}},
	}
	all := Spec{Clip: 1, Alpha: 2, Beta: 3, AutoAlpha: true, AutoBeta: true, Window: 4, TargetQuantile: 0.5, QuantileRate: 0.6, CountNoise: 10, AutoClipR: 0.7, NoiseMultiplier: 0.8, NoiseSeed: 9}
	allJSON, _ := json.Marshal(all)
	for _, tt := range tests {
		var got []string
		for _, f := range Fields[1:] {
			if tt.s.Reads(f) {
				got = append(got, f)
			}
		}
		if !sameSet(got, tt.reads) {
			t.Errorf("%s reads %v, want %v", tt.s.Label(), got, tt.reads)
		}
		if n := len(tt.s.Unread()); n != len(Fields)-1-len(tt.reads) {
			t.Errorf("%s: Unread %v", tt.s.Label(), tt.s.Unread())
		}
		// One vocabulary: Unread speaks in fields, the names Reads takes;
		// Keys gives their JSON keys.
		for _, f := range tt.s.Unread() {
			if tt.s.Reads(f) || !slices.Contains(Fields, f) {
				t.Errorf("%s: Unread lists %q, which Reads reads or is not a field", tt.s.Label(), f)
			}
		}
		for _, k := range Keys(tt.s.Unread()) {
			if !strings.Contains(string(allJSON), `"`+k+`":`) {
				t.Errorf("%s: Unread key %q is not a JSON key of Spec", tt.s.Label(), k)
			}
		}
		// Trim keeps exactly what is read.
		full := all
		full.Estimator, full.Beta, full.AutoBeta, full.TargetQuantile = tt.s.Estimator, tt.s.Beta, tt.s.AutoBeta, tt.s.TargetQuantile
		trimmed := full.Trim()
		for _, f := range Fields[1:] {
			_, now := trimmed.Value(f)
			_, was := full.Value(f)
			if now != (full.Reads(f) && was) {
				t.Errorf("%s: Trim left %s set = %v", tt.s.Label(), f, now)
			}
		}
	}
}

func sameSet(a, b []string) bool {
	return len(a) == len(b) && !slices.ContainsFunc(a, func(x string) bool { return !slices.Contains(b, x) })
}

// One vocabulary: a name that is not a field, such as the JSON key
// "clip" that main's Unread returned, is read by no estimator, and Reads and
// Value answer rather than panic (main panicked).
func TestSpecReadsNonField(t *testing.T) {
	s := Spec{Estimator: "clip-sgd", Clip: 1}
	for _, name := range []string{"clip", "auto_clip_r", "", "Gamma"} {
		if s.Reads(name) {
			t.Errorf("Reads(%q) = true", name)
		}
		if v, set := s.Value(name); v != nil || set {
			t.Errorf("Value(%q) = %v, %v", name, v, set)
		}
	}
	if got := Keys([]string{"Clip", "AutoClipR"}); !slices.Equal(got, []string{"clip", "auto_clip_r"}) {
		t.Errorf("Keys = %q", got)
	}
}

func TestSpecLabel(t *testing.T) {
	tests := []struct {
		s    Spec
		want string
	}{
		{Spec{Estimator: "sgd"}, "SGD"},
		{Spec{Estimator: "clip-sgd", Clip: 15}, "Clip-SGD γ=15"},
		{Spec{Estimator: "nsgd"}, "Normalized-SGD"},
		{Spec{Estimator: "ps-clip-sgd", Clip: 45}, "PS-Clip-SGD γ=45"},
		{Spec{Estimator: "ps-clip-sgd", Alpha: 15, Beta: 2}, "Increasing-PS-Clip-SGD α=15 β=2"},
		{Spec{Estimator: "ps-clip-sgd", AutoAlpha: true, Beta: 2, Window: 512}, "Increasing-PS-Clip-SGD α=auto β=2 window=512"},
		{Spec{Estimator: "ps-clip-auto"}, "Auto-PS-Clip-SGD"},
		{Spec{Estimator: "ps-clip-quantile"}, "Quantile-PS-Clip-SGD q=0.5"},
		{Spec{Estimator: "ps-clip-quantile", TargetQuantile: 0.9, QuantileRate: 0.1, Clip: 3}, "Quantile-PS-Clip-SGD q=0.9 rate=0.1 γ0=3"},
		{Spec{Estimator: "auto-clip"}, "Auto-Clip r=0.01"},
		{Spec{Estimator: "dp-sgd", Clip: 0.1, NoiseMultiplier: 2.15}, "DP-SGD C=0.1 σ=2.15"},
		{Spec{Estimator: "dp-sgd", Clip: 0.1, NoiseMultiplier: 2.15, TargetQuantile: 0.5}, "DP-SGD C0=0.1 σ=2.15 q=0.5"},
		{Spec{Estimator: "dp-sgd", Clip: 1, NoiseMultiplier: 2, TargetQuantile: 0.6, QuantileRate: 0.1, CountNoise: 50, NoiseSeed: 3}, "DP-SGD C0=1 σ=2 q=0.6 rate=0.1 σb=50 noise-seed=3"},
	}
	for _, tt := range tests {
		if got := tt.s.Label(); got != tt.want {
			t.Errorf("%+v: Label %q, want %q", tt.s, got, tt.want)
		}
	}
}

// NewPrivate builds dp-sgd for an expected batch size: DPSGD, or with a
// target quantile the accounted adaptive clipping (DPQuantile) with
// Andrew et al.'s count noise E[B]/20 by default; New refuses the latter,
// which needs the expected batch.
func TestSpecNewPrivate(t *testing.T) {
	tests := []struct {
		s      Spec
		field  string  // "": valid
		sigmaB float64 // the count noise NewPrivate must use (adaptive only)
	}{
		{Spec{Estimator: "dp-sgd", Clip: 0.1, NoiseMultiplier: 2.15}, "", 0},
		{Spec{Estimator: "dp-sgd", Clip: 0.1, NoiseMultiplier: 2.15, TargetQuantile: 0.5}, "", 2048.0 / 20},
		{Spec{Estimator: "dp-sgd", Clip: 0.1, NoiseMultiplier: 2.15, TargetQuantile: 0.5, CountNoise: 30, QuantileRate: 0.1}, "", 30},
		{Spec{Estimator: "dp-sgd", Clip: 0.1, NoiseMultiplier: 2.15, TargetQuantile: 0.5, CountNoise: 1}, "CountNoise", 0}, // σ_b ≤ σ/2
		{Spec{Estimator: "dp-sgd", Clip: 0.1, NoiseMultiplier: 2.15, TargetQuantile: 1.5}, "TargetQuantile", 0},
		{Spec{Estimator: "dp-sgd", Clip: 0.1, NoiseMultiplier: 2.15, QuantileRate: 0.1}, "QuantileRate", 0}, // without a target
		{Spec{Estimator: "dp-sgd", Clip: 0.1, NoiseMultiplier: 2.15, CountNoise: 30}, "CountNoise", 0},
		{Spec{Estimator: "dp-sgd", NoiseMultiplier: 2.15, TargetQuantile: 0.5}, "Clip", 0}, // the initial norm
		{Spec{Estimator: "ps-clip-quantile", TargetQuantile: 0.5}, "Estimator", 0},
	}
	for _, tt := range tests {
		e, err := tt.s.NewPrivate(2048)
		var se *setting.Error
		switch {
		case tt.field != "":
			if !errors.As(err, &se) || se.Field != tt.field || e != nil {
				t.Errorf("%+v: NewPrivate = %v, %v; want a *setting.Error for %s", tt.s, e, err, tt.field)
			}
			continue
		case err != nil:
			t.Errorf("%+v: NewPrivate: %v", tt.s, err)
			continue
		}
		q, adaptive := e.(*DPQuantile)
		if adaptive != (tt.s.TargetQuantile != 0) {
			t.Errorf("%+v: NewPrivate gave %T", tt.s, e)
			continue
		}
		_, nerr := tt.s.New()
		if !adaptive {
			if nerr != nil {
				t.Errorf("%+v: New: %v", tt.s, nerr)
			}
			continue
		}
		if !errors.As(nerr, &se) || se.Field != "TargetQuantile" {
			t.Errorf("%+v: New: %v; want a *setting.Error for TargetQuantile", tt.s, nerr)
		}
		if q.Gamma() != tt.s.Clip || q.EffectiveNoise() != EffectiveNoise(tt.s.NoiseMultiplier, tt.sigmaB) {
			t.Errorf("%+v: γ0 %g, σ_eff %g; want %g, %g", tt.s, q.Gamma(), q.EffectiveNoise(), tt.s.Clip, EffectiveNoise(tt.s.NoiseMultiplier, tt.sigmaB))
		}
	}
}

// NewFor builds dp-sgd's estimator through NewPrivate (adaptive clipping
// included) and the others through New; PerSample says which of them
// compute per-sample norms, dp-sgd's whatever its expected batch.
func TestSpecNewFor(t *testing.T) {
	for _, tt := range []struct {
		s         Spec
		perSample bool
	}{
		{Spec{Estimator: "sgd"}, false},
		{Spec{Estimator: "clip-sgd", Clip: 1}, false},
		{Spec{Estimator: "ps-clip-sgd", Clip: 1}, true},
		{Spec{Estimator: "dp-sgd", Clip: 0.1, NoiseMultiplier: 2.15}, true},
		{Spec{Estimator: "dp-sgd", Clip: 0.1, NoiseMultiplier: 2.15, TargetQuantile: 0.5}, true},
		{Spec{Estimator: "ps-clip-sgd"}, false}, // invalid: no threshold
	} {
		e, err := tt.s.NewFor(2048)
		if tt.s.PerSample() != tt.perSample || (err == nil) != tt.perSample && tt.s.Estimator != "sgd" && tt.s.Estimator != "clip-sgd" {
			t.Errorf("%+v: PerSample %v, NewFor %v, %v", tt.s, tt.s.PerSample(), e, err)
		}
		if _, adaptive := e.(*DPQuantile); adaptive != (tt.s.TargetQuantile != 0) {
			t.Errorf("%+v: NewFor gave %T", tt.s, e)
		}
	}
}
