package estimator

import (
	"flag"
	"io"
	"strings"
	"testing"
)

func parseFlags(t *testing.T, args ...string) (Estimator, error) {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := AddFlags(fs, "ps-clip-sgd", Params{Gamma: 45, Alpha: 1})
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	return f.Estimator()
}

func TestFlags(t *testing.T) {
	tests := []struct {
		args []string
		want string // the estimator's String, or its Name for those without
	}{
		{nil, "γ=45"},
		{[]string{"--beta", "1.5"}, "1·k^(1/1.5)"},
		{[]string{"--alpha", "auto", "--beta", "auto"}, "σ̂·k^(1/p̂) over 4096 norms"},
		{[]string{"--alpha", "2", "--beta", "auto", "--window", "512"}, "2·k^(1/p̂) over 512 norms"},
		{[]string{"--alpha", "auto", "--beta", "1.2"}, "σ̂·k^(1/1.2) over 4096 norms"},
		{[]string{"--estimator", "ps-clip-auto"}, "σ̂·k^(1/p̂) over 4096 norms"},
		{[]string{"--estimator", "ps-clip-quantile", "--target-quantile", "0.8"}, "γ→q0.8 (η_C=0.2)"},
		{[]string{"--estimator", "auto-clip", "--auto-clip-r", "0.1"}, "auto-clip"},
		{[]string{"--estimator", "clip-sgd", "--clip", "3"}, "clip-sgd"},
		{[]string{"--estimator", "sgd"}, "sgd"},
	}
	for _, tt := range tests {
		e, err := parseFlags(t, tt.args...)
		if err != nil {
			t.Errorf("%q: %v", tt.args, err)
			continue
		}
		got := e.Name()
		switch e := e.(type) {
		case *PSClip:
			got = e.Threshold().String()
		case *PSAuto:
			got = e.String()
		case *Quantile:
			got = e.String()
		}
		if got != tt.want {
			t.Errorf("%q: %s, want %s", tt.args, got, tt.want)
		}
	}
	if e, _ := parseFlags(t, "--estimator", "auto-clip", "--auto-clip-r", "0.1"); e.(AutoClip).R != 0.1 {
		t.Errorf("--auto-clip-r 0.1 gave %v", e)
	}
}

func TestFlagsErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string // in the error
	}{
		{[]string{"--estimator", "adam"}, `--estimator "adam"`},
		{[]string{"--alpha", "big"}, `"big" is not a number or auto`},
		{[]string{"--beta", "-1"}, "exponent β = -1"},
		{[]string{"--clip", "0"}, "threshold γ = 0"},
		{[]string{"--alpha", "auto"}, "β = 0"}, // an automatic α needs an increasing threshold
		{[]string{"--alpha", "auto", "--beta", "auto", "--window", "10"}, "window of 10 norms"},
		{[]string{"--estimator", "ps-clip-auto", "--beta", "1.5"}, "--beta does not apply to --estimator ps-clip-auto"},
		{[]string{"--estimator", "clip-sgd", "--alpha", "auto"}, "--alpha does not apply"},
		{[]string{"--estimator", "ps-clip-quantile", "--target-quantile", "1"}, "target quantile 1"},
		{[]string{"--estimator", "auto-clip", "--auto-clip-r", "-0.1"}, "r = -0.1"},
		{[]string{"--estimator", "sgd", "--clip", "1"}, "--clip does not apply to --estimator sgd"},
	}
	for _, tt := range tests {
		e, err := parseFlags(t, tt.args...)
		if err == nil || e != nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, %v; want a one-line error containing %q", tt.args, e, err, tt.want)
		}
	}
}

// The defaults print as PrintDefaults expects, "auto" included.
func TestFlagsDefaults(t *testing.T) {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	var b strings.Builder
	fs.SetOutput(&b)
	AddFlags(fs, "ps-clip-auto", Params{AutoAlpha: true, Beta: 1.5})
	fs.PrintDefaults()
	if out := b.String(); !strings.Contains(out, "(default auto)") || !strings.Contains(out, "(default 1.5)") {
		t.Errorf("PrintDefaults:\n%s", out)
	}
}

// AddSomeFlags defines just the named flags, with rewritten usage, sharing
// AddFlags's parsing.
func TestAddSomeFlags(t *testing.T) {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := AddSomeFlags(fs, Params{}, []string{"alpha", "window"}, func(name, text string) string { return name + "! " + text })
	if fs.Lookup("beta") != nil || fs.Lookup("estimator") != nil {
		t.Error("flags that were not named are defined")
	}
	if u := fs.Lookup("window").Usage; !strings.HasPrefix(u, "window! per-sample norms") {
		t.Errorf("--window usage %q", u)
	}
	if err := fs.Parse([]string{"--alpha", "auto", "--window", "64"}); err != nil {
		t.Fatal(err)
	}
	if p := f.Params(); !p.AutoAlpha || p.Window != 64 {
		t.Errorf("parsed %+v, want auto α and window 64", p)
	}
	if err := fs.Parse([]string{"--alpha", "often"}); err == nil {
		t.Error("--alpha often parsed")
	}
}
