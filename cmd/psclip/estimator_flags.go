package main

import (
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/psclip/psclip/estimator"
)

// specFlags are the flags of estimator.Spec's settings, as every training
// command spells them, in the order of estimator.Fields; --alpha and
// --beta set AutoAlpha and AutoBeta with the value "auto".
var specFlags = []struct{ name, field string }{
	{"estimator", "Estimator"}, {"clip", "Clip"}, {"alpha", "Alpha"}, {"beta", "Beta"}, {"window", "Window"},
	{"target-quantile", "TargetQuantile"}, {"quantile-rate", "QuantileRate"}, {"auto-clip-r", "AutoClipR"},
}

// addSpecFlags defines on fs the flags of s's settings named in names (all
// of specFlags if names is nil), with s's values as defaults; usage, if not
// nil, rewrites each flag's usage text.
func addSpecFlags(fs *flag.FlagSet, s *estimator.Spec, names []string, usage func(name, text string) string) {
	text := map[string]string{
		"estimator":       "gradient estimator: " + strings.Join(estimator.Names, ", "),
		"clip":            "clipping threshold γ: clip-sgd's, ps-clip-sgd's constant one (no --beta), ps-clip-quantile's initial one (0: the first batch's median)",
		"alpha":           "ps-clip-sgd threshold scale α of α·k^(1/β), or auto (σ̂ from the recent per-sample norms)",
		"beta":            "ps-clip-sgd threshold exponent β (0: the constant threshold --clip), or auto (the tail index p̂, clamped to [1.05, 2])",
		"window":          fmt.Sprintf("per-sample norms the automatic α and β are estimated from (0: %d)", estimator.DefaultWindow),
		"target-quantile": fmt.Sprintf("ps-clip-quantile: target fraction of unclipped samples (0: %g)", estimator.DefaultTargetQuantile),
		"quantile-rate":   fmt.Sprintf("ps-clip-quantile: geometric rate η_C of the threshold (0: %g)", estimator.DefaultQuantileRate),
		"auto-clip-r":     fmt.Sprintf("auto-clip: stability constant r of g/(|g|+r) (0: %g)", estimator.DefaultAutoClipR),
	}
	for _, f := range specFlags {
		if names != nil && !slices.Contains(names, f.name) {
			continue
		}
		t := text[f.name]
		if usage != nil {
			t = usage(f.name, t)
		}
		switch f.name {
		case "estimator":
			fs.StringVar(&s.Estimator, f.name, s.Estimator, t)
		case "clip":
			fs.Float64Var(&s.Clip, f.name, s.Clip, t)
		case "alpha":
			fs.Var(autoFloat{&s.Alpha, &s.AutoAlpha}, f.name, t)
		case "beta":
			fs.Var(autoFloat{&s.Beta, &s.AutoBeta}, f.name, t)
		case "window":
			fs.IntVar(&s.Window, f.name, s.Window, t)
		case "target-quantile":
			fs.Float64Var(&s.TargetQuantile, f.name, s.TargetQuantile, t)
		case "quantile-rate":
			fs.Float64Var(&s.QuantileRate, f.name, s.QuantileRate, t)
		case "auto-clip-r":
			fs.Float64Var(&s.AutoClipR, f.name, s.AutoClipR, t)
		}
	}
}

// unreadFlag returns the first flag given on the command line whose field
// (flags maps flag names to fields) reads says is not read, or "" if there
// is none: such a flag is refused, not ignored.
func unreadFlag(fs *flag.FlagSet, flags map[string]string, reads func(field string) bool) string {
	var unread string
	fs.Visit(func(f *flag.Flag) {
		field, ok := flags[f.Name]
		if a, isAuto := f.Value.(autoFloat); isAuto && *a.auto {
			field = "Auto" + field // --alpha auto sets AutoAlpha
		}
		if ok && unread == "" && !reads(field) {
			unread = f.Name
		}
	})
	return unread
}

// specFlagFields maps each of specFlags to its field.
func specFlagFields() map[string]string {
	m := map[string]string{}
	for _, f := range specFlags {
		m[f.name] = f.field
	}
	return m
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
