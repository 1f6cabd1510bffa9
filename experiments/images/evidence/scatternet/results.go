//go:build ignore

// Results gathers the study's runs into results.json: every run's test
// accuracy, last and averaged weights, ε and time; the means; the paired
// comparison of the averaged weights with the last ones
// (internal/stats.Pair, pairs within a run); and the accountants' ε for
// the runs' steps. Run from this directory, after run.sh's runs are
// copied into runs/ (or with the directory that holds runs/):
//
//	go run results.go [DIR] > results.json
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/psclip/psclip/internal/stats"
	"github.com/psclip/psclip/privacy"
	"github.com/psclip/psclip/provenance"
)

type result struct {
	Config struct {
		Seed            int     `json:"seed"`
		Batch           int     `json:"batch"`
		LR              float64 `json:"lr"`
		NoiseMultiplier float64 `json:"noise_multiplier"`
		Clip            float64 `json:"clip"`
		Epochs          int     `json:"epochs"`
		AverageSteps    int     `json:"average_steps"`
	} `json:"config"`
	TestAcc    float64 `json:"test_acc"`
	AvgTestAcc float64 `json:"avg_test_acc"`
	AvgSteps   int     `json:"avg_steps"`
	Epsilon    float64 `json:"epsilon"`
	Delta      float64 `json:"delta"`
	Seconds    float64 `json:"train_time_s"`
	Curve      []struct {
		TestAcc float64 `json:"test_acc"`
		EpochS  float64 `json:"epoch_s"`
	} `json:"curve"`
	Provenance provenance.Record `json:"provenance"`
}

type run struct {
	Seed        int       `json:"seed"`
	TestAcc     float64   `json:"test_acc"`
	AvgTestAcc  float64   `json:"avg_test_acc"`
	Epsilon     float64   `json:"epsilon"`
	Minutes     float64   `json:"train_min"`
	EpochS      float64   `json:"epoch_s_mean"`
	TestByEpoch []float64 `json:"test_acc_by_epoch"`
	File        string    `json:"file"`
}

type head struct {
	Model           string             `json:"model"`
	Batch           int                `json:"batch"`
	LR              float64            `json:"lr"`
	Clip            float64            `json:"clip"`
	Epochs          int                `json:"epochs"`
	Steps           int                `json:"steps"`
	SampleRate      float64            `json:"sample_rate"`
	NoiseMultiplier float64            `json:"noise_multiplier"`
	AverageSteps    int                `json:"average_steps"`
	Runs            []run              `json:"runs"`
	MeanTestAcc     float64            `json:"mean_test_acc"`
	MeanAvgTestAcc  float64            `json:"mean_avg_test_acc"`
	AvgMinusLast    stats.Paired       `json:"avg_minus_last"`
	Accountants     map[string]float64 `json:"accountants"`
	Provenance      provenance.Record  `json:"provenance"`
}

const n = 60000 // Fashion-MNIST's training images, all of them (--val-fraction 0)

func main() {
	gather := provenance.New()
	dir := "."
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	out := map[string]any{
		"study": "Tramèr & Boneh's ScatterNet heads on Fashion-MNIST, N = 60,000, DP-SGD at ε = 3 (δ = 1e-5) with secret Poisson sampling",
		"paper": map[string]any{"linear_test_acc": 0.897, "cnn_test_acc": 0.890, "linear_noise_multiplier": 4.05, "cnn_noise_multiplier": 2.15},
	}
	var all []provenance.Record
	for _, model := range []string{"linear", "cnn"} {
		var h head
		var last, avg []float64
		var recs []provenance.Record
		for seed := 1; seed <= 3; seed++ {
			file := filepath.Join("runs", model, fmt.Sprintf("seed%d", seed), "result.json")
			b, err := os.ReadFile(filepath.Join(dir, file))
			if os.IsNotExist(err) {
				continue
			}
			check(err)
			var r result
			check(json.Unmarshal(b, &r))
			c := r.Config
			h.Model, h.Batch, h.LR, h.Clip, h.Epochs, h.NoiseMultiplier, h.AverageSteps = "scatter-"+model, c.Batch, c.LR, c.Clip, c.Epochs, c.NoiseMultiplier, c.AverageSteps
			h.Steps, h.SampleRate = c.Epochs*((n+c.Batch-1)/c.Batch), float64(c.Batch)/n
			rr := run{Seed: c.Seed, TestAcc: r.TestAcc, AvgTestAcc: r.AvgTestAcc, Epsilon: r.Epsilon, Minutes: r.Seconds / 60, File: file}
			for _, e := range r.Curve {
				rr.TestByEpoch = append(rr.TestByEpoch, e.TestAcc)
				rr.EpochS += e.EpochS / float64(len(r.Curve))
			}
			h.Runs = append(h.Runs, rr)
			last, avg = append(last, r.TestAcc), append(avg, r.AvgTestAcc)
			recs = append(recs, r.Provenance)
		}
		if len(h.Runs) == 0 {
			continue
		}
		h.MeanTestAcc, _ = mean(last)
		h.MeanAvgTestAcc, _ = mean(avg)
		var err error
		h.AvgMinusLast, err = stats.Pair(avg, last)
		check(err)
		hist := privacy.History{{SampleRate: h.SampleRate, NoiseMultiplier: h.NoiseMultiplier, Count: h.Steps}}
		h.Accountants = map[string]float64{}
		for name, o := range map[string]privacy.Options{
			"rdp_balle": {}, "rdp_classical": {Classical: true}, "gdp": {Accountant: privacy.GDP}, "prv": {Accountant: privacy.PRV},
		} {
			e, err := privacy.Epsilon(hist, 1e-5, o)
			check(err)
			h.Accountants[name] = e.Epsilon
		}
		h.Provenance = provenance.Merge(gather, recs...)
		all = append(all, recs...)
		out[model] = h
	}
	gather.Finish()
	out["provenance"] = provenance.Merge(gather, all...)
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	check(enc.Encode(out))
}

func mean(x []float64) (float64, int) {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x)), len(x)
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
