package main

import (
	"encoding/json"
	"errors"
	"flag"
	"io"
	iofs "io/fs"
	"os"
	"slices"

	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/experiments/tail"
	"github.com/psclip/psclip/internal/atomicfile"
	"github.com/psclip/psclip/internal/regfile"
	"github.com/psclip/psclip/provenance"
)

func init() {
	register(&command{
		name:  "tail",
		short: "online tail index p̂ (Hill) and moment bound σ̂ of the per-sample gradient norms in a training log",
		run:   runTail,
	})
	register(&command{
		name:  "tail quadratic",
		short: "parameter-free per-sample clipping (ps-clip-auto, ps-clip-quantile, auto-clip) vs the paper's PS-Clip-SGD on the noisy quadratic",
		run:   runTailQuadratic,
	})
}

func runTail(fs *flag.FlagSet, args []string) error {
	from := fs.String("from", "", "JSON-lines training `log` whose step lines carry \"sample_norms\" (required)")
	window := fs.Int("window", 0, "per-sample norms the estimates are computed over (0: 4096)")
	rows := fs.Int("rows", 20, "about this many table rows")
	asJSON := fs.Bool("json", false, "print the JSON result to stdout instead of the table")
	out := fs.String("out", "", "if set, write tail.json and the figure tail.png, tail.svg into this `directory`")
	force := fs.Bool("force", false, forceUsage)
	if err := parse(fs, args); err != nil {
		return err
	}
	switch {
	case *from == "":
		return usagef("--from is required")
	case *rows <= 0:
		return usagef("--rows %d: want > 0", *rows)
	case *window < 0 || *window > 0 && *window < estimator.MinTailSamples:
		return usagef("--window %d: want 0 (%d) or at least %d", *window, estimator.DefaultWindow, estimator.MinTailSamples)
	}
	if err := checkOutDir(*out, *force); err != nil {
		return err
	}
	// The log is the user's input: a missing or malformed one is bad
	// input (exit 2), as a bad flag is.
	f, _, err := regfile.Open(*from)
	if pe := (*iofs.PathError)(nil); errors.As(err, &pe) {
		return usagef("--from %s: %v", *from, pe.Err)
	}
	if err != nil {
		return usagef("--from %v", err)
	}
	defer f.Close()
	res, err := tail.Trace(f, *window)
	if err != nil {
		return usagef("--from %s: %v", *from, err)
	}
	return emitTail(*out, *asJSON, res, res.Save, func(w io.Writer) error { return res.WriteTable(w, *rows) })
}

func runTailQuadratic(fs *flag.FlagSet, args []string) error {
	c := tail.DefaultConfig()
	ps := floatList(c.P)
	fs.Var(&ps, "p", "comma-separated tail indices p of the noise (the paper's tuned parameters exist for 1.8, 1.5, 1.2)")
	fs.IntVar(&c.T, "T", c.T, "iterations per run")
	fs.IntVar(&c.N, "n", c.N, "batch size")
	fs.IntVar(&c.Dim, "d", c.Dim, "dimension of x")
	fs.IntVar(&c.Runs, "runs", c.Runs, "independent runs per p")
	fs.Uint64Var(&c.Seed, "seed", c.Seed, "random seed; the results are a function of the flags")
	window := fs.Int("window", 0, "per-sample norms ps-clip-auto estimates p̂, σ̂ from (0: 4096)")
	asJSON := fs.Bool("json", false, "print the JSON result to stdout instead of the table")
	out := fs.String("out", "", "if set, write tail-quadratic.json and the figures (PNG, SVG) into this `directory`")
	normsLog := fs.String("norms-log", "", "if set, also write run 0's per-sample norms at the first --p, as ps-clip-auto at η=0.01 sees them, to this new JSON-lines `file` (input for psclip tail --from)")
	force := fs.Bool("force", false, forceUsage)
	if err := parse(fs, args); err != nil {
		return err
	}
	c.P = ps
	for i := range c.Methods {
		if c.Methods[i].Reads("Window") {
			c.Methods[i].Window = *window
		}
	}
	if err := c.Validate(); err != nil {
		return usage(err)
	}
	if err := checkOutDir(*out, *force); err != nil {
		return err
	}
	if err := checkOutFile("norms-log", *normsLog, *force); err != nil {
		return err
	}
	rec := provenance.New()
	res, err := tail.Run(c)
	if err != nil {
		return err
	}
	rec.Finish()
	res.Provenance = &rec
	if *normsLog != "" {
		m := slices.IndexFunc(c.Methods, func(m tail.Method) bool { return m.Estimator == "ps-clip-auto" })
		err := atomicfile.Write(*normsLog, func(f *os.File) error { return tail.WriteNormsLog(f, c, c.P[0], m) })
		if err != nil {
			return err
		}
	}
	return emitTail(*out, *asJSON, res, res.Save, res.WriteTable)
}

// emitTail saves the result into dir (if set) and prints it as JSON or a table.
func emitTail(dir string, asJSON bool, res any, save func(string) error, table func(io.Writer) error) error {
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := save(dir); err != nil {
			return err
		}
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	return table(stdout)
}
