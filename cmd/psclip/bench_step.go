package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/optim"
	"github.com/psclip/psclip/train"
)

func init() {
	register(&command{
		name:  "bench step",
		short: "time full training steps of several estimators, interleaved in one process",
		run:   runBenchStep,
	})
}

// stepResult is one estimator's line of "bench step --json".
type stepResult struct {
	Estimator      string    `json:"estimator"`
	StepMsMedian   float64   `json:"step_ms_median"`
	StepMs         []float64 `json:"step_ms"`
	ImagesPerS     float64   `json:"images_per_s,omitempty"`
	TokensPerS     float64   `json:"tokens_per_s,omitempty"`
	RatioToFirst   float64   `json:"ratio_to_first"`
	AllocMBPerStep float64   `json:"alloc_mb_per_step"`
}

func runBenchStep(fs *flag.FlagSet, args []string) error {
	var m modelFlags
	defineModelFlags(fs, &m)
	b := fs.Int("batch", 64, "samples per step")
	names := fs.String("estimators", "sgd,clip-sgd,ps-clip-sgd", "comma-separated estimators to time: "+strings.Join(estimator.Names, ", "))
	steps := fs.Int("steps", 5, "timed steps per estimator")
	warmup := fs.Int("warmup", 1, "untimed steps per estimator first")
	gamma := fs.Float64("gamma", 1, "clipping threshold of clip-sgd and ps-clip-sgd")
	seed := fs.Uint64("seed", 1, "seed of the initialisation, batch and dropout")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	if err := parse(fs, args); err != nil {
		return err
	}
	switch {
	case *b < 1:
		return usagef("--batch %d: need at least 1", *b)
	case *steps < 1:
		return usagef("--steps %d: need at least 1", *steps)
	case *warmup < 0:
		return usagef("--warmup %d: must not be negative", *warmup)
	}
	var ests []estimator.Estimator
	for _, name := range strings.Split(*names, ",") {
		e, err := estimator.New(strings.TrimSpace(name), estimator.Params{Gamma: *gamma})
		if err != nil {
			return usagef("--estimators: %v", err)
		}
		ests = append(ests, e)
	}
	model, x, y, err := m.build(*b, *seed)
	if err != nil {
		return err
	}
	// One model and optimizer for all: the weights drift between steps,
	// which does not change the work a step does.
	opt, err := optim.NewSGD(model.Params(), optim.SGDConfig{LR: 1e-4, Momentum: 0.9})
	if err != nil {
		return err
	}
	trainers := make([]*train.Trainer, len(ests))
	for i, e := range ests {
		trainers[i], err = train.New(train.Config{Model: model, Loss: nn.CrossEntropy, Estimator: e, Optimizer: opt,
			Rand: rand.New(rand.NewPCG(*seed, uint64(i)))})
		if err != nil {
			return err
		}
	}
	batch := train.Batch{X: x, Y: y}
	times := make([][]float64, len(ests))
	allocs := make([]uint64, len(ests))
	var ms runtime.MemStats
	for round := range *warmup + *steps {
		// Rotate the order every round so no estimator always follows
		// the same one (caches, GC debt).
		for j := range ests {
			i := (j + round) % len(ests)
			runtime.ReadMemStats(&ms)
			before := ms.TotalAlloc
			start := time.Now()
			if _, err := trainers[i].Step(batch); err != nil {
				return err
			}
			d := time.Since(start)
			runtime.ReadMemStats(&ms)
			if round >= *warmup {
				times[i] = append(times[i], float64(d.Microseconds())/1000)
				allocs[i] += ms.TotalAlloc - before
			}
		}
		fmt.Fprintf(os.Stderr, "\rbench step: round %d/%d", round+1, *warmup+*steps)
	}
	fmt.Fprintln(os.Stderr)
	items := float64(*b)
	unit := "images/s"
	if m.name == "gpt" {
		items *= float64(x.Dim(1))
		unit = "tokens/s"
	}
	res := make([]stepResult, len(ests))
	for i, e := range ests {
		med := median(times[i])
		res[i] = stepResult{Estimator: e.Name(), StepMsMedian: med, StepMs: times[i],
			AllocMBPerStep: float64(allocs[i]) / float64(*steps) / (1 << 20)}
		if m.name == "gpt" {
			res[i].TokensPerS = items / med * 1000
		} else {
			res[i].ImagesPerS = items / med * 1000
		}
		res[i].RatioToFirst = med / res[0].StepMsMedian
	}
	if *asJSON {
		out := struct {
			Model      string       `json:"model"`
			Batch      int          `json:"batch"`
			GOMAXPROCS int          `json:"gomaxprocs"`
			PeakRSSMB  float64      `json:"peak_rss_mb,omitempty"`
			Results    []stepResult `json:"results"`
		}{m.name, *b, runtime.GOMAXPROCS(0), peakRSSMB(), res}
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "estimator\tstep ms (median)\t%s\tvs %s\talloc MB/step\t\n", unit, res[0].Estimator)
	for _, r := range res {
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%.3f×\t%.1f\t\n", r.Estimator, r.StepMsMedian, items/r.StepMsMedian*1000, r.RatioToFirst, r.AllocMBPerStep)
	}
	if rss := peakRSSMB(); rss > 0 {
		fmt.Fprintf(tw, "peak RSS %.0f MB (whole process)\t\t\t\t\t\n", rss)
	}
	return tw.Flush()
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

// peakRSSMB is the process's peak resident set size (Linux's VmHWM), or 0
// where /proc does not tell.
func peakRSSMB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, err := strconv.ParseFloat(f[1], 64)
			if err == nil {
				return kb / 1024
			}
		}
	}
	return 0
}
