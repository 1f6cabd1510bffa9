package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/psclip/psclip/experiments/quadratic"
	"github.com/psclip/psclip/provenance"
)

func init() {
	register(&command{
		name:  "quadratic",
		short: "the paper's noisy-quadratic experiment: minimal and average gradient norms per method and p",
		run:   runQuadratic,
		flags: quadraticFieldFlags,
	})
}

func runQuadratic(fs *flag.FlagSet, args []string) error {
	c, err := quadraticFlags(fs, args, quadratic.DefaultConfig())
	if err != nil {
		return err
	}
	res, err := quadratic.Run(c.Config)
	if err != nil {
		return err
	}
	return c.emit(res, res.WriteTable, res.Save)
}

// quadraticCLI is what the quadratic and highprob commands share: the
// experiment's flags and the output flags.
type quadraticCLI struct {
	quadratic.Config
	out   string
	json  bool
	force bool
	// rec is the provenance of the result, begun when the flags are read.
	rec provenance.Record
}

// quadraticFlags defines the experiments' flags on fs with defaults from
// def, parses args and checks the values.
func quadraticFlags(fs *flag.FlagSet, args []string, def quadratic.Config) (*quadraticCLI, error) {
	c := &quadraticCLI{Config: def, rec: provenance.New()}
	ps := floatList(def.P)
	methods := strings.Join(def.Methods, ",")
	fs.Var(&ps, "p", "comma-separated tail indices p > 1 of the symmetrized Pareto noise")
	fs.StringVar(&methods, "methods", methods, "comma-separated methods: "+strings.Join(quadratic.MethodNames, ", "))
	fs.IntVar(&c.T, "T", def.T, "iterations per run")
	fs.IntVar(&c.N, "n", def.N, "batch size")
	fs.IntVar(&c.Dim, "d", def.Dim, "dimension of x")
	fs.Float64Var(&c.Eta, "eta", def.Eta, "step size η")
	fs.Var(autoFloat{&c.Alpha, &c.AutoAlpha}, "alpha", "PS-Clip-SGD threshold scale α (τ_k = α·k^(1/β)), or auto: σ̂ of the recent per-sample norms (with --tuned too)")
	fs.Var(autoFloat{&c.Beta, &c.AutoBeta}, "beta", "PS-Clip-SGD threshold exponent β, or auto: the tail index p̂ of the recent per-sample norms, clamped to [1.05, 2] (with --tuned too)")
	fs.Float64Var(&c.Clip, "gamma", def.Clip, "Clip-SGD clipping threshold γ")
	fs.IntVar(&c.Runs, "runs", def.Runs, "independent runs per p")
	fs.Uint64Var(&c.Seed, "seed", def.Seed, "random seed; the results are a function of the flags")
	fs.BoolVar(&c.Tuned, "tuned", false, "use the paper's tuned η, γ, α, β per p and method instead of --eta, --gamma and numeric --alpha, --beta")
	fs.BoolVar(&c.json, "json", false, "print the JSON result to stdout instead of the table")
	fs.StringVar(&c.out, "out", "", "if set, write the JSON result and the figure (PNG, SVG) into this `directory`")
	fs.BoolVar(&c.force, "force", false, forceUsage)
	if err := parse(fs, args); err != nil {
		return nil, err
	}
	c.P = ps
	c.Methods = strings.Split(methods, ",")
	for _, m := range c.Methods {
		if !slices.Contains(quadratic.MethodNames, m) {
			return nil, usagef("--methods: unknown method %q (want %s)", m, strings.Join(quadratic.MethodNames, ", "))
		}
	}
	// A flag no method reads (with --tuned: the numbers it replaces) is
	// refused rather than ignored.
	if name := unreadFlag(fs, quadraticFieldFlags, []string{"Eta", "Clip", "Alpha", "Beta"}, c.Reads); name != "" {
		return nil, usagef("--%s applies to none of --methods %s%s", name, methods, map[bool]string{true: " with --tuned"}[c.Tuned])
	}
	if err := c.Validate(); err != nil {
		return nil, usage(err)
	}
	if err := checkOutDir(c.out, c.force); err != nil {
		return nil, err
	}
	return c, nil
}

// emit prints the result (table or JSON) and, with --out, saves it.
func (c *quadraticCLI) emit(res any, table func(io.Writer) error, save func(dir string) error) error {
	if c.out != "" {
		if err := os.MkdirAll(c.out, 0o755); err != nil {
			return err
		}
		if err := save(c.out); err != nil {
			return err
		}
	}
	if c.json {
		c.rec.Finish()
		return encodeWithProvenance(stdout, res, c.rec)
	}
	return table(stdout)
}

// floatList is a flag.Value for comma-separated numbers.
type floatList []float64

func (l *floatList) String() string {
	s := make([]string, len(*l))
	for i, v := range *l {
		s[i] = strconv.FormatFloat(v, 'g', -1, 64)
	}
	return strings.Join(s, ",")
}

func (l *floatList) Set(v string) error {
	var out floatList
	for _, f := range strings.Split(v, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return fmt.Errorf("%q is not a number", f)
		}
		out = append(out, x)
	}
	*l = out
	return nil
}
