package estimator

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/psclip/psclip/setting"
)

// Names lists the estimators' names, the values of Spec.Estimator.
var Names = []string{"sgd", "clip-sgd", "nsgd", "ps-clip-sgd", "ps-clip-auto", "ps-clip-quantile", "auto-clip", "dp-sgd"}

// Spec is an estimator and its settings: the one declaration of every
// estimator setting, which configurations embed. A zero setting is unset
// and takes the estimator's default; a setting the chosen estimator does
// not read must be unset (Validate refuses it rather than ignore it), so a
// Spec says exactly what runs. Errors are *setting.Error values naming the
// field. The JSON keys are those of psclip's run configurations.
type Spec struct {
	// Estimator is the estimator's name, one of Names.
	Estimator string `json:"estimator,omitempty"`
	// Clip is the threshold γ: clip-sgd's, ps-clip-sgd's constant one
	// (Beta 0), ps-clip-quantile's initial one (0: the first batch's
	// median), dp-sgd's clipping norm C.
	Clip float64 `json:"clip"`
	// Alpha and Beta give ps-clip-sgd's increasing threshold α·k^(1/β);
	// Beta 0 selects the constant threshold Clip instead.
	Alpha float64 `json:"alpha"`
	Beta  float64 `json:"beta"`
	// AutoAlpha and AutoBeta make ps-clip-sgd's increasing threshold
	// estimate α = σ̂ or β = p̂ online (PSAuto) from the last Window
	// per-sample norms (0: DefaultWindow), which ps-clip-auto also reads;
	// Alpha or Beta must then be unset.
	AutoAlpha bool `json:"auto_alpha,omitempty"`
	AutoBeta  bool `json:"auto_beta,omitempty"`
	Window    int  `json:"window,omitempty"`
	// TargetQuantile and QuantileRate are ps-clip-quantile's target
	// fraction of unclipped samples and rate η_C (0: DefaultTargetQuantile,
	// DefaultQuantileRate). With dp-sgd, TargetQuantile makes the clipping
	// norm follow that quantile privately from the initial norm Clip
	// (DPQuantile, Andrew et al. 2021), its count noised with CountNoise
	// σ_b (0: DefaultCountNoise of the expected batch).
	TargetQuantile float64 `json:"target_quantile,omitempty"`
	QuantileRate   float64 `json:"quantile_rate,omitempty"`
	CountNoise     float64 `json:"count_noise,omitempty"`
	// AutoClipR is auto-clip's stability constant r (0: DefaultAutoClipR).
	AutoClipR float64 `json:"auto_clip_r,omitempty"`
	// NoiseMultiplier is dp-sgd's σ: the noise added to the sum of the
	// clipped gradients is N(0, σ²C²) per coordinate.
	NoiseMultiplier float64 `json:"noise_multiplier,omitempty"`
	// NoiseSeed seeds dp-sgd's noise (NewGaussian) and, in the trainers,
	// its Poisson samples (privacy.NewSecret): 0 draws keys from
	// crypto/rand, as privacy needs; any other seed makes both
	// reproducible and the run not private (tests, reproductions).
	NoiseSeed uint64 `json:"noise_seed,omitempty"`
}

// Fields lists the fields of Spec by name, in declaration order: the names
// Reads takes and *setting.Error reports.
var Fields = []string{"Estimator", "Clip", "Alpha", "Beta", "AutoAlpha", "AutoBeta", "Window", "TargetQuantile", "QuantileRate", "CountNoise", "AutoClipR", "NoiseMultiplier", "NoiseSeed"}

// increasing reports whether ps-clip-sgd's threshold is α·k^(1/β).
func (s Spec) increasing() bool { return s.Beta != 0 || s.AutoBeta }

// adaptive reports whether dp-sgd's clipping norm follows a quantile.
func (s Spec) adaptive() bool { return s.Estimator == "dp-sgd" && s.TargetQuantile != 0 }

// automatic reports whether the threshold is estimated from a window of
// norms (PSAuto).
func (s Spec) automatic() bool {
	return s.Estimator == "ps-clip-auto" || (s.Estimator == "ps-clip-sgd" && (s.AutoAlpha || s.AutoBeta))
}

// Reads reports whether the estimator reads the field (one of Fields):
// Estimator always; Clip for clip-sgd, ps-clip-quantile and ps-clip-sgd
// with a constant threshold; Beta and AutoBeta for ps-clip-sgd; Alpha and
// AutoAlpha for ps-clip-sgd with an increasing threshold; Window for the
// automatic thresholds; TargetQuantile and QuantileRate for
// ps-clip-quantile and dp-sgd, CountNoise for dp-sgd with TargetQuantile
// set; AutoClipR for auto-clip; Clip, NoiseMultiplier and NoiseSeed for
// dp-sgd. It reads no field that is not one of Fields (a JSON
// key such as "clip" is not a field name).
func (s Spec) Reads(field string) bool {
	switch field {
	case "Estimator":
		return true
	case "Clip":
		return s.Estimator == "clip-sgd" || s.Estimator == "ps-clip-quantile" || s.Estimator == "dp-sgd" || (s.Estimator == "ps-clip-sgd" && !s.increasing())
	case "Beta", "AutoBeta":
		return s.Estimator == "ps-clip-sgd"
	case "Alpha", "AutoAlpha":
		return s.Estimator == "ps-clip-sgd" && s.increasing()
	case "Window":
		return s.automatic()
	case "TargetQuantile":
		return s.Estimator == "ps-clip-quantile" || s.Estimator == "dp-sgd"
	case "QuantileRate":
		return s.Estimator == "ps-clip-quantile" || s.adaptive()
	case "CountNoise":
		return s.adaptive()
	case "AutoClipR":
		return s.Estimator == "auto-clip"
	case "NoiseMultiplier", "NoiseSeed":
		return s.Estimator == "dp-sgd"
	}
	return false
}

// Value returns the field's value (one of Fields), and whether it is set,
// that is not zero; nil and false for a name that is not one of Fields.
func (s Spec) Value(field string) (v any, set bool) {
	switch field {
	case "Estimator":
		return s.Estimator, s.Estimator != ""
	case "Clip":
		return s.Clip, s.Clip != 0
	case "Alpha":
		return s.Alpha, s.Alpha != 0
	case "Beta":
		return s.Beta, s.Beta != 0
	case "AutoAlpha":
		return s.AutoAlpha, s.AutoAlpha
	case "AutoBeta":
		return s.AutoBeta, s.AutoBeta
	case "Window":
		return s.Window, s.Window != 0
	case "TargetQuantile":
		return s.TargetQuantile, s.TargetQuantile != 0
	case "QuantileRate":
		return s.QuantileRate, s.QuantileRate != 0
	case "CountNoise":
		return s.CountNoise, s.CountNoise != 0
	case "AutoClipR":
		return s.AutoClipR, s.AutoClipR != 0
	case "NoiseMultiplier":
		return s.NoiseMultiplier, s.NoiseMultiplier != 0
	case "NoiseSeed":
		return s.NoiseSeed, s.NoiseSeed != 0
	}
	return nil, false
}

// Trim returns s with every setting its estimator does not read unset: what
// a configuration that holds defaults for several estimators gives one of
// them.
func (s Spec) Trim() Spec { return s.Only(s.Reads) }

// Only returns s with every setting but the Estimator for which keep
// returns false unset.
func (s Spec) Only(keep func(field string) bool) Spec {
	t := s
	for _, f := range Fields[1:] {
		if !keep(f) {
			t.clear(f)
		}
	}
	return t
}

func (s *Spec) clear(field string) {
	switch field {
	case "Clip":
		s.Clip = 0
	case "Alpha":
		s.Alpha = 0
	case "Beta":
		s.Beta = 0
	case "AutoAlpha":
		s.AutoAlpha = false
	case "AutoBeta":
		s.AutoBeta = false
	case "Window":
		s.Window = 0
	case "TargetQuantile":
		s.TargetQuantile = 0
	case "QuantileRate":
		s.QuantileRate = 0
	case "CountNoise":
		s.CountNoise = 0
	case "AutoClipR":
		s.AutoClipR = 0
	case "NoiseMultiplier":
		s.NoiseMultiplier = 0
	case "NoiseSeed":
		s.NoiseSeed = 0
	}
}

// Unread returns the fields (of Fields, the names Reads takes) the
// estimator does not read: a resumed run may differ in them, since they
// cannot change it. Keys gives their JSON keys.
func (s Spec) Unread() []string {
	var unread []string
	for _, f := range Fields {
		if !s.Reads(f) {
			unread = append(unread, f)
		}
	}
	return unread
}

// Keys returns the JSON keys of fields, each one of Fields: "clip" for
// "Clip".
func Keys(fields []string) []string {
	keys := make([]string, len(fields))
	for i, f := range fields {
		sf, _ := reflect.TypeFor[Spec]().FieldByName(f)
		keys[i], _, _ = strings.Cut(sf.Tag.Get("json"), ",")
	}
	return keys
}

// readers says who reads a field, for the error about an unread setting.
var readers = map[string]string{
	"Clip":            "read by clip-sgd, ps-clip-quantile, dp-sgd and ps-clip-sgd with a constant threshold (Beta unset)",
	"NoiseMultiplier": "read by dp-sgd only",
	"NoiseSeed":       "read by dp-sgd only",
	"Alpha":           "read by ps-clip-sgd with an increasing threshold (Beta set)",
	"AutoAlpha":       "read by ps-clip-sgd with an increasing threshold (Beta set)",
	"Beta":            "read by ps-clip-sgd only",
	"AutoBeta":        "read by ps-clip-sgd only",
	"Window":          "read by the automatic thresholds only (ps-clip-auto, ps-clip-sgd with AutoAlpha or AutoBeta)",
	"TargetQuantile":  "read by ps-clip-quantile and dp-sgd only",
	"QuantileRate":    "read by ps-clip-quantile and by dp-sgd with a target quantile only",
	"CountNoise":      "read by dp-sgd with a target quantile only",
	"AutoClipR":       "read by auto-clip only",
}

// Validate checks s: a known estimator, no setting it does not read, and
// every setting it reads in range, in the precision it is used in (a
// threshold scales float32 gradients, so it must be a normal float32).
// Its errors are *setting.Error values.
func (s Spec) Validate() error {
	if !slices.Contains(Names, s.Estimator) {
		return setting.Errorf("Estimator", strconv.Quote(s.Estimator), "one of %s", strings.Join(Names, ", "))
	}
	for _, f := range Fields {
		if v, set := s.Value(f); set && !s.Reads(f) {
			return setting.Unread(f, v, fmt.Sprintf("%s, not by %s", readers[f], s.Label()))
		}
	}
	switch {
	case s.AutoAlpha && s.Alpha != 0:
		return setting.Unread("Alpha", s.Alpha, "AutoAlpha estimates α")
	case s.AutoBeta && s.Beta != 0:
		return setting.Unread("Beta", s.Beta, "AutoBeta estimates β")
	}
	if s.Reads("Clip") {
		if s.Estimator == "ps-clip-quantile" {
			if err := setting.NonNegative32("Clip", s.Clip); err != nil {
				return err
			}
		} else if err := setting.Positive32("Clip", s.Clip); err != nil {
			return err
		}
	}
	if s.Reads("Alpha") && !s.AutoAlpha {
		if err := setting.Positive32("Alpha", s.Alpha); err != nil {
			return err
		}
	}
	if s.Reads("Beta") && !s.AutoBeta {
		if err := setting.NonNegative32("Beta", s.Beta); err != nil {
			return err
		}
	}
	if s.Window != 0 && s.Window < MinTailSamples {
		return setting.Errorf("Window", s.Window, "0 (%d) or at least %d norms", DefaultWindow, MinTailSamples)
	}
	switch {
	case s.TargetQuantile != 0 && !(s.TargetQuantile > 0 && s.TargetQuantile < 1):
		return setting.Errorf("TargetQuantile", s.TargetQuantile, "0 (%g) or a fraction strictly between 0 and 1", DefaultTargetQuantile)
	case s.QuantileRate != 0 && setting.Positive32("QuantileRate", s.QuantileRate) != nil:
		return setting.Errorf("QuantileRate", s.QuantileRate, "0 (%g) or a positive normal float32", DefaultQuantileRate)
	}
	if s.Reads("NoiseMultiplier") {
		if err := setting.Positive32("NoiseMultiplier", s.NoiseMultiplier); err != nil {
			return err
		}
	}
	if s.CountNoise != 0 && !(2*s.CountNoise > s.NoiseMultiplier) {
		return setting.Errorf("CountNoise", s.CountNoise, "0 (%g of the expected batch) or a count noise σ_b above σ/2 = %g", DefaultCountNoise, s.NoiseMultiplier/2)
	}
	return setting.NonNegative32("AutoClipR", s.AutoClipR)
}

// New validates s and returns its estimator. dp-sgd with a TargetQuantile
// needs the expected batch size: build it with NewPrivate (New refuses it
// with a *setting.Error naming TargetQuantile).
func (s Spec) New() (Estimator, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if s.adaptive() {
		return nil, setting.Errorf("TargetQuantile", s.TargetQuantile, "unset here: dp-sgd's private quantile needs the expected batch size (Spec.NewPrivate)")
	}
	switch s.Estimator {
	case "sgd":
		return SGD{}, nil
	case "clip-sgd":
		return checked(NewClipSGD(s.Clip))
	case "nsgd":
		return NSGD{}, nil
	case "ps-clip-sgd":
		if s.AutoAlpha || s.AutoBeta {
			return checked(NewPSAuto(s.Alpha, s.Beta, s.Window))
		}
		t, err := Constant(s.Clip)
		if s.Beta != 0 {
			t, err = Increasing(s.Alpha, s.Beta)
		}
		if err != nil {
			return nil, err
		}
		return NewPSClip(t), nil
	case "ps-clip-auto":
		return checked(NewPSAuto(0, 0, s.Window))
	case "ps-clip-quantile":
		return checked(NewQuantile(s.TargetQuantile, s.QuantileRate, s.Clip))
	case "dp-sgd":
		return checked(NewDPSGD(s.Clip, s.NoiseMultiplier, s.NoiseSeed))
	}
	return checked(NewAutoClip(s.AutoClipR))
}

// NewFor returns s's estimator for steps of expected batch size expected
// (q·N): NewPrivate's for dp-sgd, New's for the others, which do not read
// expected.
func (s Spec) NewFor(expected float64) (Estimator, error) {
	if s.Estimator == "dp-sgd" {
		return s.NewPrivate(expected)
	}
	return s.New()
}

// PerSample reports whether s's estimator computes per-sample gradient
// norms (as logging them needs); false for an invalid s.
func (s Spec) PerSample() bool {
	if s.Estimator == "dp-sgd" {
		return s.Validate() == nil // DPSGD and DPQuantile clip per sample
	}
	e, err := s.New()
	return err == nil && e.PerSample()
}

// NewPrivate validates s, a dp-sgd Spec, and returns its estimator for
// steps of expected batch size expected (q·N): DPSGD, or with a
// TargetQuantile the private quantile-adaptive DPQuantile, whose count it
// normalises by expected and whose count noise σ_b is CountNoise or
// DefaultCountNoise·expected.
func (s Spec) NewPrivate(expected float64) (Noisy, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if s.Estimator != "dp-sgd" {
		return nil, setting.Errorf("Estimator", strconv.Quote(s.Estimator), "dp-sgd (NewPrivate builds a private estimator)")
	}
	if !s.adaptive() {
		e, err := NewDPSGD(s.Clip, s.NoiseMultiplier, s.NoiseSeed)
		if err != nil {
			return nil, err
		}
		return e, nil
	}
	sigmaB := s.CountNoise
	if sigmaB == 0 {
		sigmaB = DefaultCountNoise * expected
		if !(2*sigmaB > s.NoiseMultiplier) {
			return nil, setting.Errorf("CountNoise", 0, "a count noise σ_b above σ/2 = %g: the default, %g × the expected batch %g, is %g", s.NoiseMultiplier/2, DefaultCountNoise, expected, sigmaB)
		}
	}
	e, err := NewDPQuantile(s.Clip, s.TargetQuantile, s.QuantileRate, s.NoiseMultiplier, sigmaB, expected, s.NoiseSeed)
	if err != nil {
		var se *setting.Error
		if errors.As(err, &se) && dpQuantileFields[se.Field] != "" {
			se.Field = dpQuantileFields[se.Field]
		}
		return nil, err
	}
	return e, nil
}

// dpQuantileFields are Spec's names for NewDPQuantile's arguments where
// they differ.
var dpQuantileFields = map[string]string{"Gamma": "Clip", "Q": "TargetQuantile", "Rate": "QuantileRate"}

// Label is the estimator's name in tables and figures, the paper's where it
// has one: "SGD", "Clip-SGD γ=15", "Normalized-SGD", "PS-Clip-SGD γ=45",
// "Increasing-PS-Clip-SGD α=15 β=2" (α=auto, β=auto for the automatic
// ones), "DP-SGD C=0.1 σ=2.15" (with " noise-seed=7" for a fixed seed
// ), "Auto-PS-Clip-SGD", "Quantile-PS-Clip-SGD q=0.5", "Auto-Clip
// r=0.01"; settings that differ from the defaults are appended
// ("window=512", "rate=0.1", "γ0=3").
func (s Spec) Label() string {
	var name string
	switch {
	case s.Estimator == "sgd":
		return "SGD"
	case s.Estimator == "clip-sgd":
		return "Clip-SGD γ=" + num(s.Clip)
	case s.Estimator == "nsgd":
		return "Normalized-SGD"
	case s.Estimator == "dp-sgd":
		name = "DP-SGD C=" + num(s.Clip) + " σ=" + num(s.NoiseMultiplier)
		if s.adaptive() {
			name = "DP-SGD C0=" + num(s.Clip) + " σ=" + num(s.NoiseMultiplier) + " q=" + num(s.TargetQuantile)
			if s.QuantileRate != 0 {
				name += " rate=" + num(s.QuantileRate)
			}
			if s.CountNoise != 0 {
				name += " σb=" + num(s.CountNoise)
			}
		}
		if s.NoiseSeed != 0 {
			name += fmt.Sprintf(" noise-seed=%d", s.NoiseSeed)
		}
		return name
	case s.Estimator == "auto-clip":
		return "Auto-Clip r=" + num(orDefault(s.AutoClipR, DefaultAutoClipR))
	case s.Estimator == "ps-clip-quantile":
		name = "Quantile-PS-Clip-SGD q=" + num(orDefault(s.TargetQuantile, DefaultTargetQuantile))
		if s.QuantileRate != 0 {
			name += " rate=" + num(s.QuantileRate)
		}
		if s.Clip != 0 {
			name += " γ0=" + num(s.Clip)
		}
		return name
	case s.Estimator == "ps-clip-auto":
		name = "Auto-PS-Clip-SGD"
	case s.Estimator == "ps-clip-sgd" && s.increasing():
		name = fmt.Sprintf("Increasing-PS-Clip-SGD α=%s β=%s", autoNum(s.Alpha, s.AutoAlpha), autoNum(s.Beta, s.AutoBeta))
	case s.Estimator == "ps-clip-sgd":
		return "PS-Clip-SGD γ=" + num(s.Clip)
	default:
		return s.Estimator
	}
	if s.Window != 0 {
		name += fmt.Sprintf(" window=%d", s.Window)
	}
	return name
}

// autoNum is x, or "auto" if auto.
func autoNum(x float64, auto bool) string {
	if auto {
		return "auto"
	}
	return num(x)
}

func num(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

func orDefault(x, def float64) float64 {
	if x == 0 {
		return def
	}
	return x
}
