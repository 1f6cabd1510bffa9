package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/psclip/psclip/provenance"
)

// bench step --json times every model it builds: AlexNet-CIFAR (narrow)
// and TanhCNN.
func TestBenchStepJSON(t *testing.T) {
	for _, model := range [][]string{
		{"--model", "alexnet-cifar", "--width-div", "32", "--classes", "10"},
		{"--model", "tanh-cnn"},
	} {
		args := append([]string{"bench", "step"}, model...)
		code, out, stderr := runCLI(append(args, "--micro-batch", "2", "--steps", "1", "--warmup", "0", "--estimators", "sgd,ps-clip-sgd", "--json")...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", model, code, stderr)
		}
		var res struct {
			Results []struct {
				Estimator    string  `json:"estimator"`
				StepMsMedian float64 `json:"step_ms_median"`
				ImagesPerS   float64 `json:"images_per_s"`
			} `json:"results"`
			Provenance provenance.Record `json:"provenance"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("%v: %v in %q", model, err, out)
		}
		if len(res.Results) != 2 || res.Results[0].Estimator != "sgd" || res.Results[1].Estimator != "ps-clip-sgd" {
			t.Fatalf("%v: results %+v", model, res.Results)
		}
		for _, r := range res.Results {
			if !(r.StepMsMedian > 0 && r.ImagesPerS > 0) {
				t.Errorf("%v: %s: step %g ms, %g images/s", model, r.Estimator, r.StepMsMedian, r.ImagesPerS)
			}
		}
		if p := res.Provenance; len(p.Command) == 0 || p.Kernel == "" || p.Threads < 1 || p.Finished.IsZero() {
			t.Errorf("%v: provenance %+v: want a command line, a kernel, the threads and a finish time", model, p)
		}
	}
}

// The paired ratio comes with its 95 % interval from 6 rounds on: it
// holds the median, and the first estimator's is [1, 1]; below 6 rounds
// there is none.
func TestBenchStepPairedInterval(t *testing.T) {
	for _, tc := range []struct {
		steps string
		want  bool
	}{{"6", true}, {"5", false}} {
		code, out, stderr := runCLI("bench", "step", "--model", "tanh-cnn", "--micro-batch", "2", "--steps", tc.steps, "--warmup", "0", "--estimators", "sgd,ps-clip-sgd", "--json")
		if code != 0 {
			t.Fatalf("%s steps: exit %d: %s", tc.steps, code, stderr)
		}
		var res struct {
			Results []struct {
				Paired float64   `json:"paired_ratio_to_first"`
				CI95   []float64 `json:"paired_ratio_ci95"`
			} `json:"results"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("%s steps: %v in %q", tc.steps, err, out)
		}
		for i, r := range res.Results {
			switch {
			case !tc.want && r.CI95 != nil:
				t.Errorf("%s steps: result %d has an interval %v", tc.steps, i, r.CI95)
			case tc.want && (len(r.CI95) != 2 || !(r.CI95[0] <= r.Paired && r.Paired <= r.CI95[1])):
				t.Errorf("%s steps: result %d: interval %v of the median %v", tc.steps, i, r.CI95, r.Paired)
			case tc.want && i == 0 && (r.CI95[0] != 1 || r.CI95[1] != 1):
				t.Errorf("%s steps: the first estimator's interval %v, want [1, 1]", tc.steps, r.CI95)
			}
		}
	}
}

// A per-sample memory budget: the JSON says what it came to and what each
// per-sample step materialised, none under "none" and within the budget
// otherwise; by default 0.3 times the plain step's memory as measured, and
// the memory each step holds over the plain step's.
func TestBenchStepPerSampleMemory(t *testing.T) {
	for _, tc := range []struct {
		budget string
		bytes  int64 // the budget in bytes; -1 for "none", -2 the default's
	}{{"none", -1}, {"64KiB", 64 << 10}, {"auto", 0}, {"", -2}} {
		args := []string{"bench", "step", "--model", "gpt", "--vocab-size", "11", "--n-layer", "1", "--n-head", "2", "--n-embd", "8", "--block-size", "32",
			"--micro-batch", "2", "--steps", "1", "--warmup", "0", "--estimators", "sgd,ps-clip-sgd", "--json"}
		if tc.budget != "" {
			args = append(args, "--persample-memory", tc.budget)
		}
		code, out, stderr := runCLI(args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.budget, code, stderr)
		}
		var res struct {
			Memory  string  `json:"persample_memory"`
			Budget  int64   `json:"persample_budget_bytes"`
			PlainMB float64 `json:"plain_step_mb"`
			Results []struct {
				PerSampleMB float64 `json:"persample_mb"`
				MemoryRatio float64 `json:"memory_ratio"`
			} `json:"results"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("%s: %v in %q", tc.budget, err, out)
		}
		if res.PlainMB <= 0 || res.Results[0].MemoryRatio != 1 || res.Results[1].MemoryRatio < 1 {
			t.Errorf("%s: plain step %v MiB, memory ratios %v and %v; want a plain step measured, 1 for sgd, at least 1 for ps-clip-sgd",
				tc.budget, res.PlainMB, res.Results[0].MemoryRatio, res.Results[1].MemoryRatio)
		}
		if tc.bytes == -2 {
			want := int64(0.3 * res.PlainMB * (1 << 20))
			if res.Memory != "1.3x" || res.Budget < want-1 || res.Budget > want+1 {
				t.Errorf("the default budget: %q = %d bytes; want 1.3x = %d, 0.3 × the plain step's %v MiB", res.Memory, res.Budget, want, res.PlainMB)
			}
			tc.budget, tc.bytes = "1.3x", res.Budget
		}
		mat := res.Results[1].PerSampleMB * (1 << 20)
		if res.Memory != tc.budget || res.Budget != tc.bytes || res.Results[0].PerSampleMB != 0 ||
			(tc.bytes < 0 && mat != 0) || (tc.bytes > 0 && (mat == 0 || mat > float64(tc.bytes))) {
			t.Errorf("%s: budget %q = %d bytes, materialised %v MiB (sgd) and %v bytes (ps-clip-sgd)", tc.budget, res.Memory, res.Budget, res.Results[0].PerSampleMB, mat)
		}
	}
}

// Clip modes with accumulation: one line per mode, MB-Clip and global
// clipping on the same micro-batches.
func TestBenchStepClipModes(t *testing.T) {
	var code int
	var stderr string
	var out string
	code, out, stderr = runCLI("bench", "step", "--model", "gpt", "--n-layer", "1", "--n-head", "2", "--n-embd", "8",
		"--block-size", "4", "--vocab-size", "11", "--micro-batch", "2", "--accum", "3", "--steps", "2", "--warmup", "0",
		"--clip-modes", "global,micro-batch", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res struct {
		Accum   int `json:"accum"`
		Results []struct {
			Estimator    string    `json:"estimator"`
			ClipMode     string    `json:"clip_mode"`
			StepMs       []float64 `json:"step_ms"`
			TokensPerS   float64   `json:"tokens_per_s"`
			RatioToFirst float64   `json:"ratio_to_first"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v in %q", err, out)
	}
	if res.Accum != 3 || len(res.Results) != 2 || res.Results[0].ClipMode != "global" || res.Results[1].ClipMode != "micro-batch" {
		t.Fatalf("accum %d, results %+v", res.Accum, res.Results)
	}
	for _, r := range res.Results {
		if r.Estimator != "clip-sgd" || len(r.StepMs) != 2 || !(r.TokensPerS > 0 && r.RatioToFirst > 0) {
			t.Errorf("%+v", r)
		}
	}
}

func TestBenchStepBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--estimators", "adam"},
		{"--batch", "0"},
		{"--micro-batch", "0"},
		{"--batch", "2", "--micro-batch", "2"},
		{"--steps", "0"},
		{"--model", "vgg"},
		{"--accum", "0"},
		{"--clip-modes", "global,sometimes"},
		{"--clip-modes", "global", "--gamma", "0"},
		{"--estimators", "sgd,clip-sgd", "--persample-memory", "none"},
		{"--persample-memory", "1.35"},
	} {
		if code, _, stderr := runCLI(append([]string{"bench", "step"}, args...)...); code != 2 {
			t.Errorf("%v: exit %d (%s), want 2", args, code, stderr)
		}
	}
}

// bench step's --batch, which set the samples of a micro-batch where every
// other command's --batch is a step's, is the deprecated spelling of
// --micro-batch: it still works, with a note on stderr.
func TestBenchStepBatchDeprecated(t *testing.T) {
	args := []string{"bench", "step", "--model", "tanh-cnn", "--accum", "2", "--steps", "1", "--warmup", "0", "--estimators", "sgd", "--json"}
	batch := func(stdout string) (int, int) {
		var res struct {
			Batch int `json:"batch"`
			Accum int `json:"accum"`
		}
		if err := json.Unmarshal([]byte(stdout), &res); err != nil {
			t.Fatalf("%v in %q", err, stdout)
		}
		return res.Batch, res.Accum
	}
	code, out, stderr := runCLI(append(args, "--batch", "3")...)
	if code != 0 || !strings.Contains(stderr, "--batch is deprecated, use --micro-batch") {
		t.Fatalf("--batch 3: exit %d, stderr %q", code, stderr)
	}
	if b, k := batch(out); b != 3 || k != 2 {
		t.Errorf("--batch 3 --accum 2: batch %d, accum %d in the JSON", b, k)
	}
	code, out, stderr = runCLI(append(args, "--micro-batch", "3")...)
	if code != 0 || strings.Contains(stderr, "deprecated") {
		t.Fatalf("--micro-batch 3: exit %d, stderr %q", code, stderr)
	}
	if b, k := batch(out); b != 3 || k != 2 {
		t.Errorf("--micro-batch 3 --accum 2: batch %d, accum %d in the JSON", b, k)
	}
}

// bench step --lora-rank times LoRA fine-tuning of a GPT, with every
// estimator and clip mode (the per-sample one works on the adapters
// alone), and says so in the JSON; its flags are refused where they do
// not apply.
func TestBenchStepLoRA(t *testing.T) {
	gpt := []string{"bench", "step", "--model", "gpt", "--vocab-size", "11", "--n-layer", "1", "--n-head", "2", "--n-embd", "8", "--block-size", "16",
		"--micro-batch", "2", "--accum", "2", "--steps", "1", "--warmup", "0"}
	for _, what := range [][]string{
		{"--estimators", "sgd,ps-clip-sgd,dp-sgd"},
		{"--clip-modes", "global,micro-batch,per-sample"},
	} {
		args := append(append(append([]string{}, gpt...), what...), "--lora-rank", "2", "--lora-targets", "attn,fc", "--json")
		code, out, stderr := runCLI(args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", what, code, stderr)
		}
		var res struct {
			LoRARank    int    `json:"lora_rank"`
			LoRATargets string `json:"lora_targets"`
			Results     []struct {
				PerSampleMB float64 `json:"persample_mb"`
			} `json:"results"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("%v: %v in %q", what, err, out)
		}
		if res.LoRARank != 2 || res.LoRATargets != "attn,fc" || len(res.Results) != 3 {
			t.Errorf("%v: %+v", what, res)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "step", "--model", "tanh-cnn", "--lora-rank", "2"}, "--lora-rank"},
		{append(append([]string{}, gpt...), "--lora-rank", "0"), "--lora-rank"},
		{append(append([]string{}, gpt...), "--lora-rank", "9"), "--lora-rank"},
		{append(append([]string{}, gpt...), "--lora-targets", "fc"), "--lora-targets"},
		{append(append([]string{}, gpt...), "--lora-rank", "2", "--lora-targets", "q"), "--lora-targets"},
	} {
		if code, _, stderr := runCLI(c.args...); code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want 2 naming %s", c.args, code, stderr, c.want)
		}
	}
}
