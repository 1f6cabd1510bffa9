package main

import (
	"flag"
	"fmt"

	"github.com/psclip/psclip/data/cifar"
)

func init() {
	register(&command{
		name:  "data synth-cifar",
		short: "write a synthetic data set with outliers in the CIFAR-100 binary format",
		run:   runDataSynthCIFAR,
	})
}

func runDataSynthCIFAR(fs *flag.FlagSet, args []string) error {
	out := fs.String("out", "", "output `directory`, new or empty (created if needed; train.bin, test.bin and label-name files)")
	force := fs.Bool("force", false, forceUsage)
	cfg := cifar.SynthConfig{}
	fs.IntVar(&cfg.Train, "train", 50000, "number of training images")
	fs.IntVar(&cfg.Test, "test", 10000, "number of test images")
	fs.IntVar(&cfg.Classes, "classes", 100, "number of classes (2 to 100)")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "random seed; the files are a function of the flags")
	fs.Float64Var(&cfg.Noise, "noise", 24, "standard deviation of the per-pixel noise, in grey levels")
	fs.Float64Var(&cfg.Outliers, "outliers", 0.1, "fraction of training images that are outliers, in [0, 1)")
	kind := fs.String("outlier-kind", "mixed", "outliers: mislabel (wrong label), corrupt (noise image) or mixed (half each)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return usagef("--out is required")
	}
	var err error
	if cfg.OutlierKind, err = cifar.ParseOutlierKind(*kind); err != nil {
		return usagef("--outlier-kind: %v", err)
	}
	if err := cfg.Validate(); err != nil {
		return usagef("%v", err)
	}
	if err := checkOutDir(*out, *force); err != nil {
		return err
	}
	s, err := cifar.Synthesize(cfg)
	if err != nil {
		return err
	}
	if err := cifar.WriteDir(*out, s.Train, s.Test); err != nil {
		return err
	}
	mislabelled := 0
	for _, k := range s.Kinds {
		if k == cifar.Mislabelled {
			mislabelled++
		}
	}
	fmt.Fprintf(stdout, "wrote %s: %d training images (%d outliers: %d mislabelled, %d corrupted), %d test images, %d classes\n",
		*out, s.Train.Len(), len(s.Outliers), mislabelled, len(s.Outliers)-mislabelled, s.Test.Len(), cfg.Classes)
	return nil
}
