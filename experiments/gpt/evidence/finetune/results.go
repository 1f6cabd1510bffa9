//go:build ignore

// Results gathers the fine-tuning study's runs (run.sh) into one JSON
// document on stdout: every run's held-out validation loss (eval gpt), its
// CPU time and token rate, its trainable parameters, ε and σ of the
// DP-LoRA runs and its provenance; the mean over seeds of each method; and
// the paired differences between methods over the seeds (stats.Pair).
//
//	go run experiments/gpt/evidence/finetune/results.go OUT > experiments/gpt/evidence/finetune/results.json
package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/psclip/psclip/experiments/gpt"
	"github.com/psclip/psclip/internal/stats"
	"github.com/psclip/psclip/models"
	"github.com/psclip/psclip/nn"
)

// methods are the study's fine-tuning methods, by run-name prefix.
var methods = []string{"full", "lora", "dp-lora-eps8", "dp-lora-eps3"}

var seeds = []int{1, 2, 3}

// pairs are the comparisons: method minus reference.
var pairs = [][2]string{{"lora", "full"}, {"dp-lora-eps8", "lora"}, {"dp-lora-eps3", "lora"}, {"dp-lora-eps3", "dp-lora-eps8"}}

type result struct {
	Config     gpt.Config      `json:"config"`
	Curve      json.RawMessage `json:"curve"`
	Seconds    float64         `json:"train_time_s"`
	Epsilon    *float64        `json:"epsilon"`
	FinalVal   *float64        `json:"final_val_loss"`
	Provenance json.RawMessage `json:"provenance"`
}

type run struct {
	Method string `json:"method"`
	Seed   int    `json:"seed"`
	// ValLoss is eval gpt's loss on the held-out text's validation split
	// (2 draws of 100 batches); Curve the run's own estimates (20 batches,
	// absent for dp-sgd, which does not release them).
	ValLoss float64         `json:"val_loss"`
	Curve   json.RawMessage `json:"curve"`
	// Tokens the run trained on (dp-sgd: the expected number under
	// Poisson sampling); CPUSeconds its process's user and system time;
	// WallSeconds its train_time_s (evaluations included; the machine was
	// shared, so wall rates are low).
	Tokens          int     `json:"tokens"`
	CPUSeconds      float64 `json:"cpu_s"`
	TokensPerCPUS   float64 `json:"tokens_per_cpu_s"`
	WallSeconds     float64 `json:"train_time_s"`
	TokensPerS      float64 `json:"tokens_per_s"`
	TrainableParams int     `json:"trainable_params"`
	// Epsilon at Delta and the noise multiplier chosen for it (dp-sgd).
	Epsilon         *float64        `json:"epsilon,omitempty"`
	NoiseMultiplier float64         `json:"noise_multiplier,omitempty"`
	Provenance      json.RawMessage `json:"provenance"`
}

type summary struct {
	Method          string   `json:"method"`
	ValLoss         meanSD   `json:"val_loss"`
	TokensPerCPUS   meanSD   `json:"tokens_per_cpu_s"`
	TrainableParams int      `json:"trainable_params"`
	Epsilon         *float64 `json:"epsilon,omitempty"`
}

type meanSD struct {
	Mean stats.Float `json:"mean"`
	SD   stats.Float `json:"sd"`
}

type paired struct {
	Method string `json:"method"`
	Ref    string `json:"ref"`
	// ValLoss is method's held-out loss minus ref's, seed by seed.
	ValLoss stats.Paired `json:"val_loss"`
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go run results.go OUT")
		os.Exit(2)
	}
	if err := gather(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "results:", err)
		os.Exit(1)
	}
}

func gather(out string) error {
	doc := struct {
		Study    string `json:"study"`
		Command  string `json:"command"`
		Pretrain struct {
			// FinalValLoss is on the pretraining text's own validation
			// split; HeldOutValLoss eval gpt's on the fine-tuning text's,
			// before any fine-tuning.
			FinalValLoss   *float64        `json:"final_val_loss"`
			HeldOutValLoss float64         `json:"heldout_val_loss"`
			CPUSeconds     float64         `json:"cpu_s"`
			Curve          json.RawMessage `json:"curve"`
			Provenance     json.RawMessage `json:"provenance"`
		} `json:"pretrain"`
		Runs    []run     `json:"runs"`
		Methods []summary `json:"methods"`
		Paired  []paired  `json:"paired"`
	}{
		Study:   "the char GPT pretrained on tiny Shakespeare's first 80 %, fine-tuned on the last 20 % by full fine-tuning, LoRA and DP-LoRA at ε = 8 and 3",
		Command: "experiments/gpt/evidence/finetune/run.sh PSCLIP OUT",
	}
	var pre result
	if err := readJSON(filepath.Join(out, "pretrain", "result.json"), &pre); err != nil {
		return err
	}
	var err error
	p := &doc.Pretrain
	p.FinalValLoss, p.Curve, p.Provenance = pre.FinalVal, pre.Curve, pre.Provenance
	if p.HeldOutValLoss, err = evalLoss(out, "pretrain"); err != nil {
		return err
	}
	if p.CPUSeconds, err = cpuSeconds(out, "pretrain"); err != nil {
		return err
	}
	losses := map[string][]float64{}
	for _, m := range methods {
		s := summary{Method: m}
		var rates []float64
		for _, seed := range seeds {
			name := m + "-" + strconv.Itoa(seed)
			var res result
			if err := readJSON(filepath.Join(out, name, "result.json"), &res); err != nil {
				return err
			}
			c := res.Config
			r := run{Method: m, Seed: seed, Curve: res.Curve, Tokens: c.Steps * c.TokensPerStep(), WallSeconds: res.Seconds,
				Epsilon: res.Epsilon, NoiseMultiplier: c.NoiseMultiplier, Provenance: res.Provenance}
			if r.ValLoss, err = evalLoss(out, name); err != nil {
				return err
			}
			if r.CPUSeconds, err = cpuSeconds(out, name); err != nil {
				return err
			}
			if r.TrainableParams, err = trainable(c); err != nil {
				return err
			}
			r.TokensPerCPUS = float64(r.Tokens) / r.CPUSeconds
			r.TokensPerS = float64(r.Tokens) / r.WallSeconds
			doc.Runs = append(doc.Runs, r)
			losses[m] = append(losses[m], r.ValLoss)
			rates = append(rates, r.TokensPerCPUS)
			s.TrainableParams, s.Epsilon = r.TrainableParams, r.Epsilon
		}
		s.ValLoss = meanOf(losses[m])
		s.TokensPerCPUS = meanOf(rates)
		doc.Methods = append(doc.Methods, s)
	}
	for _, pr := range pairs {
		d, err := stats.Pair(losses[pr[0]], losses[pr[1]])
		if err != nil {
			return err
		}
		doc.Paired = append(doc.Paired, paired{Method: pr[0], Ref: pr[1], ValLoss: d})
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

func meanOf(v []float64) meanSD {
	m, sd := stats.MeanSD(v)
	return meanSD{m, sd}
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// evalLoss is the mean validation loss of OUT/NAME.eval.json.
func evalLoss(out, name string) (float64, error) {
	var e struct {
		Mean map[string]struct {
			Mean float64 `json:"mean"`
		} `json:"mean"`
	}
	path := filepath.Join(out, name+".eval.json")
	if err := readJSON(path, &e); err != nil {
		return 0, err
	}
	v, ok := e.Mean["val"]
	if !ok {
		return 0, fmt.Errorf("%s has no validation loss", path)
	}
	return v.Mean, nil
}

// cpuSeconds is the user plus system time of OUT/NAME.time (/usr/bin/time
// -f "%U %S"): the last session's, for a resumed run.
func cpuSeconds(out, name string) (float64, error) {
	path := filepath.Join(out, name+".time")
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, fmt.Errorf("%s: %q is not user and system seconds", path, b)
	}
	u, err1 := strconv.ParseFloat(f[len(f)-2], 64)
	s, err2 := strconv.ParseFloat(f[len(f)-1], 64)
	if err1 != nil || err2 != nil || !(u+s > 0) || math.IsInf(u+s, 0) {
		return 0, fmt.Errorf("%s: %q is not user and system seconds", path, b)
	}
	return u + s, nil
}

// trainable counts the parameters a run of c trains: all of the GPT's, or
// its LoRA adapters'.
func trainable(c gpt.Config) (int, error) {
	m, err := models.NewGPT(models.GPTConfig{NLayer: c.NLayer, NHead: c.NHead, NEmbd: c.NEmbd, BlockSize: c.BlockSize,
		VocabSize: c.VocabSize, Bias: c.Bias, ExactGELU: c.ExactGELU}, 0)
	if err != nil {
		return 0, err
	}
	if c.LoRARank > 0 {
		if err := m.AdaptLoRA(models.LoRAConfig{Rank: c.LoRARank, Alpha: c.LoRAAlpha, Targets: c.LoRATargets}, 0); err != nil {
			return 0, err
		}
	}
	n := 0
	for _, p := range nn.Trainable(m.Params()) {
		n += p.Value.Len()
	}
	return n, nil
}
