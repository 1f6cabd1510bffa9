package estimator

import (
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Flags are the estimator flags every psclip training command shares, so
// that each accepts the same spelling, --alpha auto --beta auto included:
//
//	--estimator       one of Names
//	--clip            Clip-SGD's γ, PS-Clip-SGD's constant threshold (with
//	                  --beta 0), ps-clip-quantile's initial γ (0: median)
//	--alpha, --beta   PS-Clip-SGD's threshold α·k^(1/β): numbers or "auto"
//	--window          norms the automatic α, β are estimated from
//	--target-quantile ps-clip-quantile's target fraction of unclipped samples
//	--quantile-rate   ps-clip-quantile's rate η_C
//	--auto-clip-r     auto-clip's stability constant r
//
// Define them with AddFlags, parse the FlagSet, then call Estimator.
type Flags struct {
	fs          *flag.FlagSet
	method      string
	p           Params
	alpha, beta flag.Value
}

// AddFlags defines the estimator flags on fs with the defaults method and
// def (def.AutoAlpha and def.AutoBeta give the default "auto").
func AddFlags(fs *flag.FlagSet, method string, def Params) *Flags {
	f := &Flags{fs: fs, method: method, p: def}
	f.alpha = AutoFloat(&f.p.Alpha, &f.p.AutoAlpha)
	f.beta = AutoFloat(&f.p.Beta, &f.p.AutoBeta)
	fs.StringVar(&f.method, "estimator", method, "gradient estimator: "+strings.Join(Names, ", "))
	fs.Float64Var(&f.p.Gamma, "clip", def.Gamma, "clipping threshold γ: clip-sgd's, ps-clip-sgd's constant one (--beta 0), ps-clip-quantile's initial one (0: the first batch's median)")
	fs.Var(f.alpha, "alpha", "ps-clip-sgd threshold scale α of α·k^(1/β), or auto (σ̂ from the recent per-sample norms)")
	fs.Var(f.beta, "beta", "ps-clip-sgd threshold exponent β (0: the constant threshold --clip), or auto (the tail index p̂, clamped to [1.05, 2])")
	fs.IntVar(&f.p.Window, "window", def.Window, fmt.Sprintf("per-sample norms the automatic α and β are estimated from (0: %d)", DefaultWindow))
	fs.Float64Var(&f.p.TargetQuantile, "target-quantile", def.TargetQuantile, fmt.Sprintf("ps-clip-quantile: target fraction of unclipped samples (0: %g)", DefaultTargetQuantile))
	fs.Float64Var(&f.p.QuantileRate, "quantile-rate", def.QuantileRate, fmt.Sprintf("ps-clip-quantile: geometric rate η_C of the threshold (0: %g)", DefaultQuantileRate))
	fs.Float64Var(&f.p.R, "auto-clip-r", def.R, fmt.Sprintf("auto-clip: stability constant r of g/(|g|+r) (0: %g)", DefaultAutoClipR))
	return f
}

// AddSomeFlags defines only the named estimator flags on fs, for a command
// that chooses the estimator its own way (a per-sample mode's estimator, a
// list of methods); usage rewrites each flag's usage text. The returned
// Flags' Params hold the parsed values; its Estimator checks nothing about
// flags given but unread, which is then the command's job.
func AddSomeFlags(fs *flag.FlagSet, def Params, names []string, usage func(name, text string) string) *Flags {
	scratch := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	f := AddFlags(scratch, "", def)
	for _, name := range names {
		fl := scratch.Lookup(name)
		fs.Var(fl.Value, name, usage(name, fl.Usage))
	}
	return f
}

// uses lists the flags each estimator reads, besides --estimator.
var uses = map[string][]string{
	"clip-sgd":         {"clip"},
	"ps-clip-sgd":      {"clip", "alpha", "beta", "window"},
	"ps-clip-auto":     {"window"},
	"ps-clip-quantile": {"clip", "target-quantile", "quantile-rate"},
	"auto-clip":        {"auto-clip-r"},
}

// Method returns the parsed --estimator.
func (f *Flags) Method() string { return f.method }

// Params returns the parsed parameters.
func (f *Flags) Params() Params { return f.p }

// Estimator checks the parsed flags and returns the estimator. Its errors
// are about flag values (usage errors, exit status 2) and name the flag: an
// unknown --estimator, a value out of range, or a flag given explicitly that
// the chosen estimator does not read.
func (f *Flags) Estimator() (Estimator, error) {
	if !slices.Contains(Names, f.method) {
		return nil, fmt.Errorf("--estimator %q: want one of %s", f.method, strings.Join(Names, ", "))
	}
	var unused string
	f.fs.Visit(func(fl *flag.Flag) {
		if unused == "" && fl.Name != "estimator" && isEstimatorFlag(fl.Name) && !slices.Contains(uses[f.method], fl.Name) {
			unused = fl.Name
		}
	})
	if unused != "" {
		return nil, fmt.Errorf("--%s does not apply to --estimator %s", unused, f.method)
	}
	p := f.p
	if f.method == "ps-clip-sgd" && !p.AutoAlpha && !p.AutoBeta {
		p.Window = 0 // only read by the automatic threshold
	}
	e, err := New(f.method, p)
	if err != nil {
		return nil, fmt.Errorf("--estimator %s: %s", f.method, strings.TrimPrefix(err.Error(), "estimator: "))
	}
	return e, nil
}

func isEstimatorFlag(name string) bool {
	switch name {
	case "clip", "alpha", "beta", "window", "target-quantile", "quantile-rate", "auto-clip-r":
		return true
	}
	return false
}

// AutoFloat returns the flag.Value of --alpha and --beta, for commands that
// define them with their own usage: "auto" sets *auto and zeroes *v, a
// number sets *v and clears *auto. Range checks are the caller's (New's).
func AutoFloat(v *float64, auto *bool) flag.Value { return autoFloat{v: v, auto: auto} }

// autoFloat is a flag.Value holding a number or "auto".
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
