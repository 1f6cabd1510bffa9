package main

import (
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/psclip/psclip/estimator"
)

// addSpecFlags defines on fs the flags (fieldFlags) of s's settings named
// in fields (all of specFields if fields is nil), with s's values as
// defaults; usage, if not nil, rewrites each flag's usage text. --alpha and
// --beta take a number or "auto", which sets AutoAlpha or AutoBeta.
func addSpecFlags(fs *flag.FlagSet, s *estimator.Spec, fields []string, usage func(name, text string) string) {
	text := map[string]string{
		"estimator":        "gradient estimator: " + strings.Join(estimator.Names, ", "),
		"clip":             "clipping threshold γ: clip-sgd's, ps-clip-sgd's constant one (no --beta), ps-clip-quantile's initial one (0: the first batch's median)",
		"alpha":            "ps-clip-sgd threshold scale α of α·k^(1/β), or auto (σ̂ from the recent per-sample norms)",
		"beta":             "ps-clip-sgd threshold exponent β (0: the constant threshold --clip), or auto (the tail index p̂, clamped to [1.05, 2])",
		"window":           fmt.Sprintf("per-sample norms the automatic α and β are estimated from (0: %d)", estimator.DefaultWindow),
		"target-quantile":  fmt.Sprintf("ps-clip-quantile: target fraction of unclipped samples (0: %g)", estimator.DefaultTargetQuantile),
		"quantile-rate":    fmt.Sprintf("ps-clip-quantile: geometric rate η_C of the threshold (0: %g)", estimator.DefaultQuantileRate),
		"count-noise":      fmt.Sprintf("dp-sgd with --target-quantile: noise σ_b on the count of unclipped samples, above σ/2 (0: %g × the expected batch); the gradient's noise is then (σ⁻² − (2σ_b)⁻²)^(−1/2), so ε is that of σ", estimator.DefaultCountNoise),
		"auto-clip-r":      fmt.Sprintf("auto-clip: stability constant r of g/(|g|+r) (0: %g)", estimator.DefaultAutoClipR),
		"noise-multiplier": "dp-sgd: noise multiplier σ (noise N(0, σ²C²) on the sum of the clipped gradients, C = --clip)",
		"noise-seed":       "dp-sgd: fixed seed of the noise and of the Poisson samples, for reproductions and tests: the run is then NOT private (0: secret keys from crypto/rand)",
	}
	if fields == nil {
		fields = specFields
	}
	if slices.Contains(fields, "CountNoise") { // a command that trains dp-sgd
		text["target-quantile"] += "; dp-sgd: if set, the clipping norm starts at --clip and follows this quantile privately (Andrew et al. 2021), its count noised and its privacy composed into ε"
		text["quantile-rate"] += "; also dp-sgd's with --target-quantile"
	}
	for _, field := range fields {
		name := fieldFlags[field]
		t := text[name]
		if usage != nil {
			t = usage(name, t)
		}
		switch field {
		case "Estimator":
			fs.StringVar(&s.Estimator, name, s.Estimator, t)
		case "Clip":
			fs.Float64Var(&s.Clip, name, s.Clip, t)
		case "Alpha":
			fs.Var(autoFloat{&s.Alpha, &s.AutoAlpha}, name, t)
		case "Beta":
			fs.Var(autoFloat{&s.Beta, &s.AutoBeta}, name, t)
		case "Window":
			fs.IntVar(&s.Window, name, s.Window, t)
		case "TargetQuantile":
			fs.Float64Var(&s.TargetQuantile, name, s.TargetQuantile, t)
		case "QuantileRate":
			fs.Float64Var(&s.QuantileRate, name, s.QuantileRate, t)
		case "CountNoise":
			fs.Float64Var(&s.CountNoise, name, s.CountNoise, t)
		case "AutoClipR":
			fs.Float64Var(&s.AutoClipR, name, s.AutoClipR, t)
		case "NoiseMultiplier":
			fs.Float64Var(&s.NoiseMultiplier, name, s.NoiseMultiplier, t)
		case "NoiseSeed":
			fs.Uint64Var(&s.NoiseSeed, name, s.NoiseSeed, t)
		}
	}
}

// specFields are the fields of specFlags, in order.
var specFields = []string{"Estimator", "Clip", "Alpha", "Beta", "Window", "TargetQuantile", "QuantileRate", "AutoClipR"}

// cnnSpecFields are the estimator fields of the CNN training commands:
// specFields and dp-sgd's.
var cnnSpecFields = append(slices.Clone(specFields), "CountNoise", "NoiseMultiplier", "NoiseSeed")

// unreadFlag returns the flag of the first of fields that was given on the
// command line although reads says it is not read, or "" if there is none:
// such a flag is refused, not ignored. The flags are fieldFlags', with the
// command's own spellings (flags, as in command.flags) over them; --alpha
// auto and --beta auto stand for AutoAlpha and AutoBeta.
func unreadFlag(fs *flag.FlagSet, flags map[string]string, fields []string, reads func(field string) bool) string {
	c := command{flags: flags}
	for _, field := range fields {
		name := c.flagOf(field)
		if !flagSet(fs, name) {
			continue
		}
		if a, ok := fs.Lookup(name).Value.(autoFloat); ok && *a.auto {
			field = "Auto" + field
		}
		if !reads(field) {
			return name
		}
	}
	return ""
}

// autoFloat is the flag.Value of --alpha and --beta: a number, or "auto",
// which sets *auto and zeroes *v. Range checks are estimator.Spec's.
type autoFloat struct {
	v    *float64
	auto *bool
}

func (a autoFloat) String() string {
	switch {
	case a.v == nil: // the zero Value flag.PrintDefaults makes
		return ""
	case *a.auto:
		return "auto"
	}
	return strconv.FormatFloat(*a.v, 'g', -1, 64)
}

func (a autoFloat) Set(s string) error {
	if s == "auto" {
		*a.auto, *a.v = true, 0
		return nil
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("%q is not a number or auto", s)
	}
	*a.auto, *a.v = false, x
	return nil
}
