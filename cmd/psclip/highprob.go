package main

import (
	"flag"

	"github.com/psclip/psclip/experiments/quadratic"
)

func init() {
	register(&command{
		name:  "highprob",
		short: "the paper's high-probability study: (1−δ)-quantiles of the average gradient norm over 10⁴ runs",
		run:   runHighProb,
		flags: quadraticFieldFlags,
	})
}

func runHighProb(fs *flag.FlagSet, args []string) error {
	c, err := quadraticFlags(fs, args, quadratic.DefaultHighProbConfig())
	if err != nil {
		return err
	}
	res, err := quadratic.HighProb(c.Config)
	if err != nil {
		return err
	}
	return c.emit(res, res.WriteTable, res.Save)
}
