package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"strconv"

	"github.com/psclip/psclip/privacy"
	"github.com/psclip/psclip/setting"
)

func init() {
	register(&command{
		name:  "privacy",
		short: "the ε that DP-SGD spends (RDP, GDP or PRV accountant), or the noise multiplier for a target ε",
		run:   runPrivacy,
		flags: privacyFieldFlags,
	})
}

// privacyFieldFlags: the flags of the privacy package's fields.
var privacyFieldFlags = map[string]string{
	"SampleRate": "sample-rate", "NoiseMultiplier": "noise-multiplier", "Count": "steps", "Delta": "delta",
	"Epsilon": "target-epsilon", "Orders": "orders", "Accountant": "accountant", "Classical": "classical",
}

// privacyResult is the output of "privacy --json": the ε spent, RDP's best
// order, and the noise multiplier (given, or found for --target-epsilon).
type privacyResult struct {
	Epsilon         float64 `json:"epsilon"`
	Order           float64 `json:"order,omitempty"`
	NoiseMultiplier float64 `json:"noise_multiplier"`
}

func runPrivacy(fs *flag.FlagSet, args []string) error {
	q := fs.Float64("sample-rate", 0, "Poisson sample rate q in (0, 1]: the expected batch over the data set size (required)")
	sigma := fs.Float64("noise-multiplier", 0, "noise multiplier σ: the noise's standard deviation over the clipping threshold (this or --target-epsilon)")
	target := fs.Float64("target-epsilon", 0, "print the noise multiplier that spends at most this ε (this or --noise-multiplier)")
	steps := fs.Int("steps", 0, "number of steps T (required)")
	delta := fs.Float64("delta", 0, "δ in (0, 1) (required)")
	accountant := fs.String("accountant", string(privacy.RDP), "accountant: rdp, gdp or prv")
	var orders floatList
	fs.Var(&orders, "orders", "RDP orders, comma-separated (default Opacus' 1.1, 1.2, …, 10.9, 12, …, 63)")
	classical := fs.Bool("classical", false, "RDP: the classical conversion ε = rdp − log δ/(α−1) instead of Balle et al. 2020")
	asJSON := fs.Bool("json", false, `print JSON {"epsilon", "order", "noise_multiplier"} instead of a line of text`)
	if err := parse(fs, args); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, name := range []string{"sample-rate", "steps", "delta"} {
		if !set[name] {
			return usagef("--%s is required", name)
		}
	}
	if set["noise-multiplier"] == set["target-epsilon"] {
		return usagef("give exactly one of --noise-multiplier and --target-epsilon")
	}
	if err := setting.Positive("Count", *steps); err != nil {
		return err
	}
	o := privacy.Options{Accountant: privacy.Accountant(*accountant), Classical: *classical}
	if set["orders"] {
		o.Orders = orders
	}
	res := privacyResult{NoiseMultiplier: *sigma}
	if set["target-epsilon"] {
		s, err := privacy.NoiseMultiplier(*q, *steps, *target, *delta, o)
		if err != nil {
			return err
		}
		res.NoiseMultiplier = s
	}
	r, err := privacy.Epsilon(privacy.History{{SampleRate: *q, NoiseMultiplier: res.NoiseMultiplier, Count: *steps}}, *delta, o)
	if err != nil {
		return err
	}
	if math.IsInf(r.Epsilon, 1) {
		return usagef("--noise-multiplier %g gives no privacy: ε = +Inf", res.NoiseMultiplier)
	}
	res.Epsilon, res.Order = r.Epsilon, r.Order
	if *asJSON {
		return json.NewEncoder(stdout).Encode(res)
	}
	line := fmt.Sprintf("epsilon %.6g", res.Epsilon)
	if set["target-epsilon"] {
		line = fmt.Sprintf("noise_multiplier %s (epsilon %.6g ≤ %s)", fmtG(res.NoiseMultiplier), res.Epsilon, fmtG(*target))
	}
	line += fmt.Sprintf(" at delta %s: %d steps at sample rate %s, %s accountant", fmtG(*delta), *steps, fmtG(*q), o.Accountant)
	if res.Order != 0 {
		line += ", best order " + fmtG(res.Order)
	}
	_, err = fmt.Fprintln(stdout, line)
	return err
}

// fmtG formats x in the shortest form that reads back exactly: the
// noise multiplier printed is the one accounted.
func fmtG(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
