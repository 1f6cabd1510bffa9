package main

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/psclip/psclip/experiments/images"
	runlayer "github.com/psclip/psclip/run"
)

// experimentFieldFlags are the experiment commands' flags for the
// thresholds' fields.
var experimentFieldFlags = map[string]string{"ClipSGD": "clip-sgd-gamma", "PSClipSGD": "ps-gamma",
	"Alpha": "inc-alpha", "AutoAlpha": "inc-alpha", "Beta": "inc-beta", "AutoBeta": "inc-beta"}

func init() {
	register(&command{
		name:  "experiment cifar",
		short: "AlexNet-CIFAR: SGD, Clip-SGD, PS-Clip-SGD and increasing-threshold PS-Clip-SGD over seeds (tables, figures)",
		run:   runExperimentCIFAR,
		flags: experimentFieldFlags,
	})
	register(&command{
		name:  "experiment images",
		short: "a CNN on any image data set (Fashion-MNIST, CIFAR), optionally with label noise: estimators over seeds (tables, figures)",
		run:   runExperimentImages,
		flags: experimentFieldFlags,
	})
}

// experimentCIFARFlags are the flags of "experiment cifar" beyond
// cifarFlags and the thresholds.
type experimentCIFARFlags struct {
	data, methods, alphas, betas, out string
	from                              string
	full, paper, logNorms             bool
	seeds                             int
	again                             experimentResume
}

// adaptiveFields are the adaptive thresholds' settings, whose flags every
// training command spells the same way.
var adaptiveFields = []string{"Window", "TargetQuantile", "QuantileRate", "AutoClipR"}

func defineExperimentCIFAR(fs *flag.FlagSet, c *images.Config, th *images.Thresholds, f *experimentCIFARFlags, p cnnPreset) {
	cnnFlags(fs, c, &f.data, p)
	fs.StringVar(&f.methods, "methods", f.methods, "comma-separated methods to compare: "+strings.Join(images.MethodNames, ", ")+
		"; clip-sgd=γ and ps-clip-sgd=γ give a method its own threshold")
	fs.Float64Var(&th.ClipSGD, "clip-sgd-gamma", th.ClipSGD, "Clip-SGD's threshold γ (the paper's AlexNet's: 15)")
	fs.Float64Var(&th.PSClipSGD, "ps-gamma", th.PSClipSGD, "PS-Clip-SGD's constant threshold γ (the paper's AlexNet's: 45)")
	fs.Var(autoFloat{&th.Alpha, &th.AutoAlpha}, "inc-alpha", "Increasing-PS-Clip-SGD's α (the paper's: 15), or auto (σ̂ from the recent per-sample norms)")
	fs.Var(autoFloat{&th.Beta, &th.AutoBeta}, "inc-beta", "Increasing-PS-Clip-SGD's β (the paper's: 2), or auto (the tail index p̂, clamped to [1.05, 2])")
	addSpecFlags(fs, &th.Spec, adaptiveFields, func(name, text string) string {
		if name == "window" {
			return "ps-clip-auto, and inc-ps-clip-sgd with --inc-alpha or --inc-beta auto: " + text
		}
		return text
	})
	fs.StringVar(&f.alphas, "grid-alphas", f.alphas, "α values of the increasing-threshold grid, numbers (default: --inc-alpha, or its default if --inc-alpha is auto; the appendix's: 1,15,30,45)")
	fs.StringVar(&f.betas, "grid-betas", f.betas, "β values of the increasing-threshold grid, numbers (the appendix's: 1.2,1.5,1.8,2); empty: no grid; the default grid only with inc-ps-clip-sgd in --methods")
	fs.BoolVar(&f.full, "full-grid", f.full, "run the appendix's whole grid α ∈ {1,15,30,45} × β ∈ {1.2,1.5,1.8,2} (overrides --grid-alphas and --grid-betas)")
	if !p.images {
		fs.BoolVar(&f.paper, "paper", f.paper, "start from the paper's setting: full-width model, 300 epochs, AutoAugment, thresholds 15, 45 and α=15 β=2")
	}
	fs.IntVar(&f.seeds, "seeds", f.seeds, "seeds per method: 1..N")
	fs.StringVar(&f.out, "out", f.out, "output `directory`: results, tables, figures and one directory per run")
	f.again.bind(fs)
	fs.StringVar(&f.from, "from", f.from, "rewrite the results.json and tables of the experiment in this `directory` (or of this results.json) from its runs, without training: the paired comparisons with SGD of this version; no other flag")
	fs.BoolVar(&f.logNorms, "log-norms", f.logNorms, "log every step's per-sample gradient norms in the runs that compute them (input of 'psclip tail --from RUN/log.jsonl')")
}

func runExperimentCIFAR(fs *flag.FlagSet, args []string) error {
	defaults := experimentCIFARFlags{methods: strings.Join(images.PaperMethodNames, ","), betas: "1.5,2", seeds: 3, out: "out-experiment-cifar"}
	return runExperimentCNN(fs, args, images.ExperimentDefault(), images.ExperimentThresholds(), defaults, cifarPreset)
}

func runExperimentImages(fs *flag.FlagSet, args []string) error {
	defaults := experimentCIFARFlags{methods: strings.Join(append(images.PaperMethodNames, "ps-clip-auto"), ","), seeds: 3, out: "out-experiment-images"}
	return runExperimentCNN(fs, args, images.ImagesDefault(), images.ImagesThresholds(), defaults, imagesPreset)
}

// runExperimentCNN is a CNN experiment command of preset p from the
// defaults given.
func runExperimentCNN(fs *flag.FlagSet, args []string, c images.Config, defaultTh images.Thresholds, defaults experimentCIFARFlags, p cnnPreset) error {
	th, f := defaultTh, defaults
	defineExperimentCIFAR(fs, &c, &th, &f, p)
	if err := parse(fs, args); err != nil {
		return err
	}
	if f.from != "" {
		return reportExperimentCNN(fs, f.from)
	}
	if p.images {
		if err := finishImageFlags(fs, &c); err != nil {
			return err
		}
	}
	if f.paper {
		// Parse again over the paper's values, so that flags given
		// explicitly override them and the others take them.
		defaultTh = images.PaperThresholds()
		c, th, f = images.Default(), defaultTh, defaults
		again := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
		again.SetOutput(io.Discard)
		defineExperimentCIFAR(again, &c, &th, &f, p)
		if err := parse(again, args); err != nil {
			return err
		}
	}
	// The thresholds are checked before they go to the methods, so that an
	// error names the flag the user typed.
	if err := th.Validate(); err != nil {
		return err
	}
	e := images.Experiment{Base: c, LogNorms: f.logNorms}
	for _, name := range strings.Split(f.methods, ",") {
		m, err := th.Method(strings.TrimSpace(name))
		if err != nil {
			return err
		}
		e.Methods = append(e.Methods, m)
	}
	// The default grid varies inc-ps-clip-sgd's α and β: without that
	// method there is none, unless asked for.
	if !flagSet(fs, "grid-betas") && !slices.ContainsFunc(strings.Split(f.methods, ","), func(m string) bool { return strings.TrimSpace(m) == "inc-ps-clip-sgd" }) {
		f.betas = ""
	}
	if flagSet(fs, "grid-alphas") && f.betas == "" && !f.full {
		return usagef("--grid-alphas applies only with a grid (--grid-betas or --full-grid)")
	}
	// A setting no method reads is refused rather than ignored, as the
	// training commands do.
	reads := func(field string) bool {
		return slices.ContainsFunc(e.Methods, func(m images.Method) bool { return m.Reads(field) })
	}
	if name := unreadFlag(fs, nil, adaptiveFields, reads); name != "" {
		return usagef("--%s applies to none of --methods %s", name, f.methods)
	}
	if name := unreadThreshold(fs, f); name != "" {
		return usagef("--%s applies to none of --methods %s", name, f.methods)
	}
	var err error
	switch {
	case f.full:
		e.GridAlphas, e.GridBetas = images.PaperAlphas, images.PaperBetas
	case f.betas != "":
		if e.GridBetas, err = floats("grid-betas", f.betas); err != nil {
			return err
		}
		// The grid's α values are numbers: an automatic --inc-alpha leaves
		// the grid at the default α.
		e.GridAlphas = []float64{th.Alpha}
		if th.AutoAlpha {
			e.GridAlphas = []float64{defaultTh.Alpha}
		}
		if f.alphas != "" {
			if e.GridAlphas, err = floats("grid-alphas", f.alphas); err != nil {
				return err
			}
		}
	}
	if f.seeds <= 0 {
		return usagef("--seeds = %d, want > 0", f.seeds)
	}
	for i := range f.seeds {
		e.Seeds = append(e.Seeds, uint64(i+1))
	}
	if err := e.Check(); err != nil {
		return err
	}
	d, err := loadImages(f.data)
	if err != nil {
		return err
	}
	if err := f.again.check(); err != nil {
		return err
	}
	ctx, stop := interruptContext()
	defer stop()
	res, err := images.RunExperiment(ctx, e, d, f.again.options(f.out))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Performance comparison\n\n%s\n", res.MainTable())
	fmt.Fprintf(stdout, "Against SGD, and whom clipping picks\n\n%s\n", res.ClippingTable())
	files := []string{runlayer.ResultsFile, images.TableMD, images.ClippingMD, images.AccuracyPNG, images.ClippingPNG}
	if a := res.AugmentTable(); a != "" {
		fmt.Fprintf(stdout, "Per-sample clipping by AutoAugment operation\n\n%s\n", a)
		files = append(files, images.AugmentMD)
	}
	if g := res.GridTable(); g != "" {
		fmt.Fprintf(stdout, "Increasing vs constant threshold\n\n%s\n", g)
		files = append(files, images.GridMD)
	}
	if c.LabelNoise > 0 {
		files = append(files, images.DetectionPNG)
	}
	fmt.Fprintf(stdout, "Results in %s (%s)\n", f.out, strings.Join(files, ", "))
	return nil
}

// reportExperimentCNN rewrites the results and tables of the experiment
// whose directory or results.json is from (images.Report) and prints its
// tables.
func reportExperimentCNN(fs *flag.FlagSet, from string) error {
	var other string
	fs.Visit(func(f *flag.Flag) {
		if f.Name != "from" && other == "" {
			other = f.Name
		}
	})
	if other != "" {
		return usagef("--from takes no other flag (got --%s)", other)
	}
	dir := from
	if filepath.Base(from) == runlayer.ResultsFile {
		dir = filepath.Dir(from)
	}
	res, err := images.Report(dir)
	if err != nil {
		return usagef("--from: %v", err)
	}
	fmt.Fprintf(stdout, "Performance comparison\n\n%s\n", res.MainTable())
	fmt.Fprintf(stdout, "Against SGD, and whom clipping picks\n\n%s\n", res.ClippingTable())
	fmt.Fprintf(stdout, "Rewrote %s from its %d runs\n", filepath.Join(dir, runlayer.ResultsFile), len(res.Runs))
	return nil
}

// unreadThreshold returns the first threshold flag given that no method of
// --methods reads: --clip-sgd-gamma and --ps-gamma are the thresholds of
// clip-sgd and ps-clip-sgd without their own =γ, --inc-alpha and
// --inc-beta inc-ps-clip-sgd's, --inc-alpha also the grid's α unless
// --grid-alphas or --full-grid gives it; "" if none.
func unreadThreshold(fs *flag.FlagSet, f experimentCIFARFlags) string {
	var methods []string
	for _, m := range strings.Split(f.methods, ",") {
		methods = append(methods, strings.TrimSpace(m))
	}
	inc := slices.Contains(methods, "inc-ps-clip-sgd")
	for _, t := range []struct {
		flag  string
		reads bool
	}{
		{"clip-sgd-gamma", slices.Contains(methods, "clip-sgd")},
		{"ps-gamma", slices.Contains(methods, "ps-clip-sgd")},
		{"inc-alpha", inc || f.betas != "" && f.alphas == "" && !f.full},
		{"inc-beta", inc},
	} {
		if !t.reads && flagSet(fs, t.flag) {
			return t.flag
		}
	}
	return ""
}

// floats parses a comma-separated list of numbers given to --name.
func floats(name, s string) ([]float64, error) {
	var xs []float64
	for _, f := range strings.Split(s, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil {
			return nil, usagef("--%s: %q is not a number", name, f)
		}
		xs = append(xs, x)
	}
	return xs, nil
}
