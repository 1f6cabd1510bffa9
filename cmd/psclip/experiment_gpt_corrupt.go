package main

import (
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/psclip/psclip/experiments/gpt"
	runlayer "github.com/psclip/psclip/run"
)

func init() {
	register(&command{
		name:  "experiment gpt-corrupt",
		short: "GPT on corrupted text: no clipping, global, MB-Clip (both conventions), PS-Clip and ps-clip-auto over corruption settings, seeds and micro-batch counts, paired against global clipping",
		run:   runExperimentGPTCorrupt,
		flags: gptFieldFlags,
	})
}

// corruptionList spells corruption settings as F[:layout[:kind]], e.g. 0,
// 0.2:clustered or 0.05:scattered:repeat (layout scattered and kind random
// by default).
func corruptionList(flagName, s string) ([]gpt.Corruption, error) {
	var out []gpt.Corruption
	for _, item := range strings.Split(s, ",") {
		c, err := corruption(flagName, strings.TrimSpace(item))
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// corruption parses one F[:layout[:kind]].
func corruption(flagName, s string) (gpt.Corruption, error) {
	parts := strings.Split(s, ":")
	f, err := strconv.ParseFloat(parts[0], 64)
	if err != nil || len(parts) > 3 {
		return gpt.Corruption{}, usagef("--%s: %q is not F[:layout[:kind]]", flagName, s)
	}
	c := gpt.Corruption{Corrupt: f}
	if f == 0 {
		if len(parts) > 1 {
			return c, usagef("--%s: %q: clean data (F = 0) has no layout or kind", flagName, s)
		}
		return c, nil
	}
	c.CorruptLayout, c.CorruptKind = gpt.LayoutScattered, gpt.KindRandom
	if len(parts) > 1 {
		c.CorruptLayout = gpt.CorruptLayout(parts[1])
	}
	if len(parts) > 2 {
		c.CorruptKind = gpt.CorruptKind(parts[2])
	}
	if err := c.Validate(); err != nil {
		return c, usagef("--%s: %q: %v", flagName, s, err)
	}
	return c, nil
}

// methodList parses a comma-separated list of study methods.
func methodList(flagName, s string) ([]gpt.Method, error) {
	var out []gpt.Method
	for _, item := range strings.Split(s, ",") {
		m, err := gpt.ParseMethod(strings.TrimSpace(item))
		if err != nil {
			return nil, usagef("--%s: %q is not a method (want none, global, mb-clip, mb-clip-mean, ps-clip or ps-clip-auto)", flagName, item)
		}
		out = append(out, m)
	}
	return out, nil
}

// numberList parses a comma-separated list of numbers; "" is none.
func numberList[T int | uint64 | float64](flagName, s string, parse func(string) (T, error)) ([]T, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []T
	for _, item := range strings.Split(s, ",") {
		v, err := parse(strings.TrimSpace(item))
		if err != nil {
			return nil, usagef("--%s: %q is not a number", flagName, item)
		}
		out = append(out, v)
	}
	return out, nil
}

func runExperimentGPTCorrupt(fs *flag.FlagSet, args []string) error {
	def := gpt.CorruptionStudyDefault()
	c, d := def.Base, gpt.DataSpec{}
	gptFlags(fs, &c, &d)
	fs.Float64Var(&c.LR, "lr", c.LR, "peak learning rate (decays to a tenth)")
	settings := fs.String("settings", "0,0.05:scattered,0.05:clustered,0.2:scattered,0.2:clustered,0.2:scattered:repeat",
		"comma-separated corruption settings F[:layout[:kind]] (layout scattered, kind random unless given)")
	methods := fs.String("methods", "none,global,mb-clip,mb-clip-mean,ps-clip,ps-clip-auto",
		"comma-separated methods: none, global (γ = --clip on ḡ, the reference), mb-clip (γ on each g_j/K, the paper's), mb-clip-mean (γ on each g_j), ps-clip (the constant γ chosen from --gamma-grid), ps-clip-auto")
	seeds := fs.Int("seeds", len(def.Seeds), "seeds per setting and method: 1..N")
	gammaGrid := fs.String("gamma-grid", "1,2,3", "ps-clip: the constant thresholds to choose from (one value: used as it is)")
	gammaAt := fs.String("gamma-at", "0.2:scattered", "ps-clip: the corruption setting γ is chosen at, by the final validation loss")
	gammaSeeds := fs.String("gamma-seeds", "101,102", "ps-clip: the seeds γ is chosen on (apart from the study's)")
	ks := fs.String("ks", "1,2,4,8,16", "the K sweep: micro-batch counts splitting the step's --micro-batch × --accum sequences (empty: no sweep)")
	kAt := fs.String("k-at", "0.2:clustered", "the K sweep's corruption setting")
	kMethods := fs.String("k-methods", "global,mb-clip-mean", "the K sweep's methods")
	out := fs.String("out", "out-experiment-gpt-corrupt", "output directory: results.json, tables.md, figures and one directory per run")
	var again experimentResume
	again.bind(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	for _, name := range []string{"corrupt", "corrupt-layout", "corrupt-kind", "clip-convention"} {
		if flagSet(fs, name) {
			return usagef("--%s: the study sets it per run (--settings, --methods)", name)
		}
	}
	if err := gptBatch(fs, &c); err != nil {
		return err
	}
	c.MinLR = c.LR / 10
	c.Corruption, c.ClipConvention = gpt.Corruption{}, ""
	s := gpt.CorruptionStudy{Base: c}
	var err error
	if s.Settings, err = corruptionList("settings", *settings); err != nil {
		return err
	}
	if s.Methods, err = methodList("methods", *methods); err != nil {
		return err
	}
	if *seeds <= 0 {
		return usagef("--seeds = %d, want > 0", *seeds)
	}
	for i := range *seeds {
		s.Seeds = append(s.Seeds, uint64(i+1))
	}
	// The γ choice's flags need ps-clip, the sweep's a sweep: a flag no run
	// reads is refused.
	for _, name := range []string{"gamma-grid", "gamma-at", "gamma-seeds"} {
		if flagSet(fs, name) && !slices.Contains(s.Methods, gpt.MethodPSClip) {
			return usagef("--%s applies only with ps-clip in --methods", name)
		}
	}
	if slices.Contains(s.Methods, gpt.MethodPSClip) {
		if s.GammaGrid, err = numberList("gamma-grid", *gammaGrid, func(v string) (float64, error) { return strconv.ParseFloat(v, 64) }); err != nil {
			return err
		}
		// One threshold is used as it is: nothing reads where and on
		// which seeds a choice would be made.
		for _, name := range []string{"gamma-at", "gamma-seeds"} {
			if flagSet(fs, name) && len(s.GammaGrid) == 1 {
				return usagef("--%s applies only with two or more values in --gamma-grid (one is used as it is)", name)
			}
		}
		if len(s.GammaGrid) > 1 {
			if s.GammaAt, err = corruption("gamma-at", *gammaAt); err != nil {
				return err
			}
			if s.GammaSeeds, err = numberList("gamma-seeds", *gammaSeeds, func(v string) (uint64, error) { return strconv.ParseUint(v, 10, 64) }); err != nil {
				return err
			}
		}
	}
	if s.Ks, err = numberList("ks", *ks, strconv.Atoi); err != nil {
		return err
	}
	for _, name := range []string{"k-at", "k-methods"} {
		if flagSet(fs, name) && len(s.Ks) == 0 {
			return usagef("--%s applies only with a K sweep (--ks)", name)
		}
	}
	if len(s.Ks) > 0 {
		if s.KAt, err = corruption("k-at", *kAt); err != nil {
			return err
		}
		if s.KMethods, err = methodList("k-methods", *kMethods); err != nil {
			return err
		}
	}
	if err := s.Check(); err != nil {
		return err
	}
	corpus, err := corpusFor(d, &c)
	if err != nil {
		return err
	}
	if err := again.check(); err != nil {
		return err
	}
	ctx, stop := interruptContext()
	defer stop()
	res, err := gpt.RunCorruptionStudy(ctx, s, corpus, again.options(*out))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s\nResults in %s (%s, %s, %s.png/.svg)\n", res.Tables(), *out, runlayer.ResultsFile, gpt.StudyTableMD, gpt.StudyCurves)
	return nil
}
