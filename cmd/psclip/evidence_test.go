package main

// The evidence tests hold the published numbers to the code: a change that
// moves one fails here until its study is regenerated (docs/evidence.md,
// "Drift").

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/psclip/psclip/internal/readme"
	"github.com/psclip/psclip/provenance"
)

// repoRoot is the repository's root, from this package's directory.
const repoRoot = "../.."

// driftEnv set to "all" runs every cell; unset, the test runs the cheap
// ones (a few seconds of one core each) and .ci/run the rest.
const driftEnv = "PSCLIP_DRIFT"

// evidenceCell is one cheap cell of an evidence study: the study's command,
// as its results file records it (provenance.command), rerun with a few
// flags appended (flags parse last-wins) that keep one seed and one method
// and cut epochs where the first epoch does not depend on their number;
// its results are compared with the stored file's at the paths given.
type evidenceCell struct {
	// study is the results file, from the repository root.
	study string
	// command is the study's command where its file records none (written
	// before provenance was): the one its README gives. Empty: the file's.
	// kernel is then the micro-kernel its runs reproduce on.
	command []string
	kernel  string
	// cuts are parts of repository files written into the cell's
	// directory first, for a study that cuts a text into parts; setup are
	// commands run then in the cell's directory, to make data the command
	// names by a relative path.
	cuts  []cut
	setup [][]string
	// args are appended to the command; out is the file the cell writes
	// under its --out directory ("" for a command that prints its result
	// to stdout; --out is then not given).
	args []string
	out  string
	// checks pair a path in the study's file with one in the cell's
	// (readme.Lookup): both must give the same values.
	checks []check
	// costly cells run only with PSCLIP_DRIFT=all (.ci/run).
	costly bool
	// pure cells compute without the GEMM micro-kernels: compared to the
	// bit on any machine.
	pure bool
	// covers are the study's other results files, made by the same code
	// from the same command with other flags, that this cell stands for.
	covers []string
}

type check struct{ stored, cell string }

// cut is the bytes [from, to) of the repository file src (to 0: to its
// end), written to the file dst of the cell's directory.
type cut struct {
	src, dst string
	from, to int
}

// firstEpoch compares the first epoch of the study's run sel with the
// cell's run cellSel (readme.Lookup selectors of their runs).
func firstEpoch(sel, cellSel string, fields ...string) []check {
	var cs []check
	for _, f := range fields {
		cs = append(cs, check{"runs[" + sel + "].curve[0]." + f, "runs[" + cellSel + "].curve[0]." + f})
	}
	return cs
}

// cleanImageCell is the drift cell of one arm of the clean-image study
// (--augment arm): the first epoch of its PS-Clip-SGD γ = 25 run of seed
// 1 (a 40-epoch run's first epoch is a one-epoch run's: the learning rate
// is constant).
func cleanImageCell(arm string) evidenceCell {
	return evidenceCell{
		study: "experiments/images/evidence/clean-autoaugment/" + arm + "/results.json",
		command: []string{"psclip", "experiment", "images", "--data", fashionMNIST, "--model", "alexnet", "--width-div", "8",
			"--augment", arm, "--seeds", "1", "--epochs", "1", "--methods", "ps-clip-sgd=25", "--out", "all"},
		out:    "results.json",
		checks: firstEpoch("name=PS-Clip-SGD γ=25,seed=1", "0", "train_loss", "train_acc", "val_loss", "val_acc", "test_acc", "clipped_per_batch"),
		costly: true,
	}
}

// The default Fashion-MNIST directory (.ci/run installs it); the cells
// that read it are skipped where it is missing, except under CI=true.
const fashionMNIST = "/usr/share/datasets/fashion-mnist"

// standIns are files of the repository with the content of data that
// studies name by a path outside it (the runs record the data's hash).
var standIns = map[string]string{
	"/work/shared/data/tinyshakespeare.txt": "data/text/testdata/tinyshakespeare.txt",
}

// evidenceCells has a cell for every evidence study (TestEvidenceCovered).
// Timing evidence (bench/evidence, step-time.json) is not rerun: a timing
// does not reproduce; its provenance is checked (TestEvidenceProvenance).
var evidenceCells = []evidenceCell{
	{
		study: "experiments/images/evidence/adaptive/results.json",
		setup: [][]string{{"data", "synth-cifar", "--out", "syn5k", "--train", "5000", "--test", "1000", "--classes", "10", "--seed", "1"}},
		args:  []string{"--seeds", "1", "--methods", "ps-clip-sgd=40", "--epochs", "1"},
		out:   "results.json",
		checks: firstEpoch("method.estimator=ps-clip-sgd,method.clip=40,seed=1", "0",
			"train_loss", "train_acc", "val_loss", "val_acc", "clipped_per_batch"),
		// The same data and trainer: the first study (γ = 10, increasing
		// threshold) and train cifar's runs of ps-clip-quantile at 0.9.
		covers: []string{
			"experiments/images/evidence/results.json",
			"experiments/images/evidence/adaptive/quantile-0.9/seed=1/result.json",
			"experiments/images/evidence/adaptive/quantile-0.9/seed=2/result.json",
			"experiments/images/evidence/adaptive/quantile-0.9/seed=3/result.json",
		},
	},
	{
		study: "experiments/images/evidence/fashion-mnist-long/noise-0.4-e40/results.json",
		args:  []string{"--seeds", "1", "--methods", "ps-clip-sgd", "--epochs", "1"},
		out:   "results.json",
		// eval-every 4: the first epoch has no validation figures.
		checks: firstEpoch("name=PS-Clip-SGD γ=10,seed=1", "0", "train_loss", "train_acc", "clipped_per_batch"),
		covers: []string{
			"experiments/images/evidence/fashion-mnist-long/noise-0.4-e20/results.json",
			"experiments/images/evidence/fashion-mnist-long/noise-0.2-e20/results.json",
			"experiments/images/evidence/fashion-mnist-long/noise-0.2-e40/results.json",
		},
	},
	{
		study: "experiments/images/evidence/fashion-mnist/noise-0.4/results.json",
		args:  []string{"--seeds", "1", "--epochs", "1"},
		out:   "results.json",
		checks: append(firstEpoch("name=PS-Clip-SGD γ=10,seed=1", "name=PS-Clip-SGD γ=10", "train_loss", "train_acc", "val_loss", "val_acc"),
			check{"runs[name=SGD,seed=1].curve[0].val_acc", "runs[name=SGD].curve[0].val_acc"}),
		costly: true,
		covers: []string{
			"experiments/images/evidence/fashion-mnist/noise-0/results.json",
			"experiments/images/evidence/fashion-mnist/noise-0.2/results.json",
			"experiments/images/evidence/fashion-mnist/grid/results.json",
			"experiments/images/evidence/fashion-mnist/long-0.4/results.json",
		},
	},
	{
		// The clean-image threshold grid (AutoAugment, AlexNet at width
		// 1/8, one epoch on all 54,000 training images): its γ = 30 run,
		// alone, without the grid's flags that only the increasing
		// threshold reads.
		study: "experiments/images/evidence/clean-autoaugment/grid/results.json",
		command: []string{"psclip", "experiment", "images", "--data", fashionMNIST, "--model", "alexnet", "--width-div", "8",
			"--augment", "autoaugment", "--seeds", "1", "--epochs", "1", "--methods", "ps-clip-sgd=30", "--out", "all"},
		kernel: "avx512",
		out:    "results.json",
		checks: firstEpoch("name=PS-Clip-SGD γ=30,seed=1", "0", "train_loss", "train_acc", "val_loss", "val_acc", "clipped_per_batch"),
		costly: true,
	},
	cleanImageCell("autoaugment"),
	cleanImageCell("cropflip"),
	{
		// DP-SGD draws its noise from crypto/rand: no rerun reproduces a
		// private run. What is deterministic is the ε the runs recorded:
		// the accountant's for the study's sample rate, σ and steps (its
		// "accountants"), which must still give the README's ε.
		study: "experiments/images/evidence/dp-fashion-mnist/results.json",
		command: []string{"psclip", "privacy", "--sample-rate", "0.037925925925925925", "--noise-multiplier", "2.15",
			"--steps", "1080", "--delta", "1e-5", "--json"},
		pure: true,
		checks: []check{
			{"40_epochs.runs[seed=1].epsilon", "epsilon"},
			{"40_epochs.accountants.noise_multiplier", "noise_multiplier"},
		},
		covers: []string{
			"experiments/images/evidence/dp-fashion-mnist/runs-40/seed1/result.json",
			"experiments/images/evidence/dp-fashion-mnist/runs-40/seed2/result.json",
			"experiments/images/evidence/dp-fashion-mnist/runs-40/seed3/result.json",
			"experiments/images/evidence/dp-fashion-mnist/runs-20/seed1/result.json",
			"experiments/images/evidence/dp-fashion-mnist/runs-20/seed2/result.json",
			"experiments/images/evidence/dp-fashion-mnist/runs-20/seed3/result.json",
			"experiments/images/evidence/dp-fashion-mnist/runs-15/seed1/result.json",
			"experiments/images/evidence/dp-fashion-mnist/runs-15/seed2/result.json",
			"experiments/images/evidence/dp-fashion-mnist/runs-15/seed3/result.json",
		},
	},
	{
		// The shorter private runs chose σ by --target-epsilon 3: the
		// 15-epoch runs' ε over q = 2048/54000 and 15 · 27 steps.
		study: "experiments/images/evidence/dp-fashion-mnist/results.json",
		command: []string{"psclip", "privacy", "--sample-rate", "0.037925925925925925", "--noise-multiplier", "1.416015625",
			"--steps", "405", "--delta", "1e-5", "--json"},
		pure: true,
		checks: []check{
			{"15_epochs.runs[seed=1].epsilon", "epsilon"},
			{"15_epochs.accountants.noise_multiplier", "noise_multiplier"},
		},
	},
	{
		// The ScatterNet study's runs are private too: what a rerun gives
		// back is the linear head's ε, its σ (from --target-epsilon 3) over
		// q = 8192/60000 and 8 · 40 steps.
		study: "experiments/images/evidence/scatternet/results.json",
		command: []string{"psclip", "privacy", "--sample-rate", "0.13653333333333334", "--noise-multiplier", "3.80859375",
			"--steps", "320", "--delta", "1e-5", "--json"},
		pure: true,
		checks: []check{
			{"linear.runs[seed=1].epsilon", "epsilon"},
			{"linear.noise_multiplier", "noise_multiplier"},
			{"linear.accountants.rdp_balle", "epsilon"},
		},
	},
	{
		// The same at N = 60,000 with secret sampling, fixed and adaptive
		// clipping at one σ, q and step count: the accountant's ε.
		study: "experiments/images/evidence/dp-fashion-mnist-60k/results.json",
		command: []string{"psclip", "privacy", "--sample-rate", "0.034133333333333335", "--noise-multiplier", "2.15",
			"--steps", "1200", "--delta", "1e-5", "--json"},
		pure: true,
		checks: []check{
			{"accountants.rdp_balle", "epsilon"},
			{"fixed.runs[seed=1].epsilon", "epsilon"},
			{"adaptive.runs[seed=3].epsilon", "epsilon"},
		},
	},
	{
		study: "experiments/gpt/evidence/corruption/results.json",
		args:  []string{"--seeds", "1", "--methods", "global,ps-clip", "--settings", "0.2:scattered:repeat", "--ks", "", "--gamma-grid", "1"},
		out:   "results.json",
		checks: []check{
			{"ps_clip_gamma.chosen", "ps_clip_gamma.chosen"},
			{"runs[setting.corrupt_kind=repeat,k=8,method=global,seed=1].curve", "runs[method=global].curve"},
			{"runs[setting.corrupt_kind=repeat,k=8,method=ps-clip,seed=1].final_val_loss", "runs[method=ps-clip].final_val_loss"},
			{"runs[setting.corrupt_kind=repeat,k=8,method=ps-clip,seed=1].clipped_fraction", "runs[method=ps-clip].clipped_fraction"},
		},
	},
	{
		// The same study with a held-out test split (its recorded command
		// has --test-fraction 0.1): γ chosen on validation, test reported.
		study: "experiments/gpt/evidence/corruption-test/results.json",
		args:  []string{"--seeds", "1", "--methods", "global,ps-clip", "--settings", "0.2:scattered:repeat", "--ks", "", "--gamma-grid", "1"},
		out:   "results.json",
		checks: []check{
			{"ps_clip_gamma.chosen", "ps_clip_gamma.chosen"},
			{"runs[setting.corrupt_kind=repeat,k=8,method=global,seed=1].curve", "runs[method=global].curve"},
			{"runs[setting.corrupt_kind=repeat,k=8,method=global,seed=1].final_test_loss", "runs[method=global].final_test_loss"},
			{"runs[setting.corrupt_kind=repeat,k=8,method=ps-clip,seed=1].final_test_loss", "runs[method=ps-clip].final_test_loss"},
		},
	},
	{
		study: "experiments/gpt/evidence/corruption/longer/results.json",
		args:  []string{"--seeds", "1", "--methods", "global,ps-clip", "--settings", "0.2:scattered:repeat"},
		out:   "results.json",
		checks: []check{
			{"runs[setting.corrupt_kind=repeat,method=global,seed=1].final_val_loss", "runs[method=global].final_val_loss"},
			{"runs[setting.corrupt_kind=repeat,method=ps-clip,seed=1].final_val_loss", "runs[method=ps-clip].final_val_loss"},
		},
		costly: true,
	},
	{
		// Global clipping at two K: the sweep's own comparison. The study's
		// regenerated file is picked up through its recorded command.
		study: "experiments/gpt/evidence/corruption/k-sweep-400/results.json",
		args:  []string{"--seeds", "1", "--methods", "global", "--ks", "16", "--k-methods", "global"},
		out:   "results.json",
		checks: []check{
			{"runs[k=8,method=global,seed=1].final_val_loss", "runs[k=8].final_val_loss"},
			{"runs[k=16,method=global,seed=1].final_val_loss", "runs[k=16].final_val_loss"},
		},
		costly: true,
	},
	{
		// MB-Clip at K = 64: the first 50 steps of the MB-Clip run at
		// the largest learning rate, seed 1, with the study's schedule
		// (--decay-steps 400: the warm-up and cosine of its 400 steps),
		// and the validation loss after them.
		study:  "experiments/gpt/evidence/mbclip-k64/results.json",
		args:   []string{"--lrs", "1e-3", "--clip-modes", "micro-batch", "--seeds", "1", "--steps", "50", "--decay-steps", "400"},
		out:    "results.json",
		checks: []check{{"runs[lr=0.001,clip_mode=micro-batch,seed=1].curve[1]", "runs[0].curve[1]"}},
		costly: true,
	},
	{
		// The fine-tuning study: the pretraining and its export whole
		// (setup), then LoRA's first 20 steps of seed 1, all in the
		// warm-up, whose learning rates do not depend on the steps: the
		// held-out loss before and after them.
		study: "experiments/gpt/evidence/finetune/results.json",
		command: []string{"psclip", "train", "gpt", "--text", "finetune.txt", "--vocab", "byte", "--init", "pretrain-hf",
			"--micro-batch", "16", "--accum", "4", "--steps", "200", "--warmup", "20", "--eval-interval", "20", "--eval-iters", "20", "--ckpt-interval", "50",
			"--seed", "1", "--lr", "2e-3", "--clip-mode", "global", "--clip", "1", "--lora-rank", "8", "--lora-alpha", "16", "--lora-targets", "attn,proj,fc,mlp-proj"},
		kernel: "avx512",
		cuts: []cut{
			{"data/text/testdata/tinyshakespeare.txt", "pretrain.txt", 0, 892315},
			{"data/text/testdata/tinyshakespeare.txt", "finetune.txt", 892315, 0},
		},
		setup: [][]string{
			{"train", "gpt", "--text", "pretrain.txt", "--vocab", "byte", "--bias", "--n-layer", "4", "--n-head", "4", "--n-embd", "128", "--block-size", "64", "--out", "pretrain"},
			{"export", "gpt2", "--ckpt", "pretrain", "--out", "pretrain-hf"},
		},
		args:   []string{"--steps", "20"},
		out:    "result.json",
		checks: []check{{"runs[method=lora,seed=1].curve[0]", "curve[0]"}, {"runs[method=lora,seed=1].curve[1]", "curve[1]"}},
		costly: true,
	},
	{
		study:  "experiments/quadratic/evidence/untuned/results.json",
		checks: []check{{"rows", "rows"}, {"config", "config"}},
	},
	{
		// Every run of a p draws from its own stream (seed, p, run): p = 1.2
		// alone gives the study's p = 1.2 rows.
		study:  "experiments/quadratic/evidence/highprob/results.json",
		args:   []string{"--p", "1.2", "--methods", "ps-clip-sgd"},
		checks: []check{{"rows[p=1.2,method=ps-clip-sgd]", "rows[*]"}},
		costly: true,
	},
	{
		study:  "experiments/tail/results/tail-quadratic.json",
		args:   []string{"--p", "1.2", "--norms-log", "norms.jsonl"},
		out:    "tail-quadratic.json",
		checks: []check{{"rows[p=1.2]", "rows[*]"}},
	},
}

// driftTolerance is the relative difference allowed between a stored
// number and the cell's when the cell cannot run on the study's
// micro-kernel (or the study recorded none): another kernel sums float32
// products in another order, and training amplifies the last bits. On the
// study's kernel the numbers must be equal to the bit.
const driftTolerance = 0.02

// TestEvidenceDrift reruns every cell (the costly ones with
// PSCLIP_DRIFT=all) from its study's recorded command, with the study's
// micro-kernel (PSCLIP_KERNEL) where this CPU has it, and compares.
func TestEvidenceDrift(t *testing.T) {
	bin := binary(t)
	all := os.Getenv(driftEnv) == "all"
	for _, c := range evidenceCells {
		t.Run(c.name(), func(t *testing.T) {
			if c.costly && !all {
				t.Skipf("costly: runs with %s=all (.ci/run)", driftEnv)
			}
			stored := readJSON(t, filepath.Join(repoRoot, c.study))
			cmd, err := c.recorded(stored)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			args := c.cellArgs(t, cmd, dir)
			kernel := cmp.Or(storedKernel(stored), c.kernel)
			for _, k := range c.cuts {
				b, err := os.ReadFile(filepath.Join(repoRoot, k.src))
				if err != nil {
					t.Fatal(err)
				}
				if k.to != 0 {
					b = b[:k.to]
				}
				if err := os.WriteFile(filepath.Join(dir, k.dst), b[k.from:], 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for _, s := range c.setup {
				runCell(t, bin, dir, kernel, s)
			}
			start := time.Now()
			out := runCell(t, bin, dir, kernel, args)
			var got map[string]any
			if c.out == "" {
				if err := json.Unmarshal(out, &got); err != nil {
					t.Fatalf("%v: stdout is no JSON: %v", args, err)
				}
			} else {
				got = readJSON(t, filepath.Join(dir, "cell", c.out))
			}
			exact := c.pure || kernel != "" && storedKernel(got) == kernel
			t.Logf("%s: %.1fs; kernel %q, the study's %q: exact %v", strings.Join(args, " "), time.Since(start).Seconds(), storedKernel(got), kernel, exact)
			for _, ch := range c.checks {
				want, err := readme.Lookup(stored, ch.stored)
				if err != nil {
					t.Fatalf("stored %s: %v", ch.stored, err)
				}
				have, err := readme.Lookup(got, ch.cell)
				if err != nil {
					t.Fatalf("cell %s: %v", ch.cell, err)
				}
				if len(want) == 0 || len(want) != len(have) {
					t.Fatalf("%s: %d stored values, the cell's %s %d", ch.stored, len(want), ch.cell, len(have))
				}
				for i := range want {
					if d := differ(want[i], have[i], exact); d != "" {
						t.Errorf("%s [%d]: %s: the code no longer gives the published number; regenerate the study (its README has the command)", ch.stored, i, d)
					}
				}
			}
		})
	}
}

// name names the cell's subtest after its study: images-adaptive for
// experiments/images/evidence/adaptive/results.json.
func (c evidenceCell) name() string {
	r := strings.NewReplacer("experiments/", "", "evidence/", "", "results/", "", "/results.json", "", "/result.json", "", ".json", "", "/", "-")
	return r.Replace(c.study)
}

// recorded is the study's command: the one its file records, or c.command.
func (c evidenceCell) recorded(stored map[string]any) ([]string, error) {
	if c.command != nil {
		return c.command, nil
	}
	v, err := readme.Lookup(stored, "provenance.command")
	if err != nil {
		return nil, fmt.Errorf("%s records no command: %w", c.study, err)
	}
	var cmd []string
	for _, a := range v[0].([]any) {
		cmd = append(cmd, a.(string))
	}
	return cmd, nil
}

// cellArgs is the command without its program and its flags that reuse
// or replace output (--gather with its parts), with data outside the
// repository replaced by its stand-in, then c.args and the cell's --out.
func (c evidenceCell) cellArgs(t *testing.T, cmd []string, dir string) []string {
	var args []string
	for i := 1; i < len(cmd); i++ {
		a := cmd[i]
		switch {
		case a == "--resume", a == "-resume", a == "--restart", a == "-restart", a == "--force", a == "-force",
			strings.HasPrefix(a, "--gather="), strings.HasPrefix(a, "-gather="):
			continue
		case a == "--gather", a == "-gather":
			i++
			continue
		}
		if local, ok := standIns[a]; ok {
			if _, err := os.Stat(a); err != nil {
				a, _ = filepath.Abs(filepath.Join(repoRoot, local))
			}
		}
		if a == fashionMNIST {
			if _, err := os.Stat(filepath.Join(a, "train-images-idx3-ubyte.gz")); err != nil {
				if os.Getenv("CI") == "true" {
					t.Fatalf("%s is missing and CI=true allows no skipped cell", a)
				}
				t.Skipf("%s is missing (apt-get install dataset-fashion-mnist)", a)
			}
		}
		args = append(args, a)
	}
	args = append(args, c.args...)
	if c.out != "" {
		args = append(args, "--out", filepath.Join(dir, "cell"))
	}
	return args
}

// storedKernel is the micro-kernel a results file's provenance names, ""
// where it names none or several.
func storedKernel(doc map[string]any) string {
	v, err := readme.Lookup(doc, "provenance.kernel")
	if err != nil {
		return ""
	}
	k, _ := v[0].(string)
	if k == provenance.Unknown || strings.Contains(k, ",") {
		return ""
	}
	return k
}

// runCell runs the binary with args in dir, one thread, on kernel (if
// set), and returns its stdout.
func runCell(t *testing.T, bin, dir, kernel string, args []string) []byte {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
	if kernel != "" {
		cmd.Env = append(cmd.Env, "PSCLIP_KERNEL="+kernel)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("psclip %s: %v\n%s", strings.Join(args, " "), err, lastChars(stderr.String(), 2000))
	}
	return stdout.Bytes()
}

// differ says how have differs from want: exactly, or numbers within
// driftTolerance; "" when it does not.
func differ(want, have any, exact bool) string {
	if exact || reflect.DeepEqual(want, have) {
		if !reflect.DeepEqual(want, have) {
			return fmt.Sprintf("stored %s, the cell gives %s", compact(want), compact(have))
		}
		return ""
	}
	switch w := want.(type) {
	case float64:
		h, ok := have.(float64)
		if !ok || math.Abs(w-h) > driftTolerance*max(math.Abs(w), math.Abs(h)) {
			return fmt.Sprintf("stored %v, the cell gives %v (beyond the relative tolerance %g of another kernel)", w, have, driftTolerance)
		}
	case []any:
		h, ok := have.([]any)
		if !ok || len(h) != len(w) {
			return fmt.Sprintf("stored %s, the cell gives %s", compact(want), compact(have))
		}
		for i := range w {
			if d := differ(w[i], h[i], false); d != "" {
				return fmt.Sprintf("[%d]: %s", i, d)
			}
		}
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok || len(h) != len(w) {
			return fmt.Sprintf("stored %s, the cell gives %s", compact(want), compact(have))
		}
		for k := range w {
			if d := differ(w[k], h[k], false); d != "" {
				return fmt.Sprintf("%s: %s", k, d)
			}
		}
	default:
		return fmt.Sprintf("stored %s, the cell gives %s", compact(want), compact(have))
	}
	return ""
}

func compact(v any) string {
	b, _ := json.Marshal(v)
	return lastChars(string(b), 300)
}

func lastChars(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return doc
}

// evidenceFiles are the results files of the studies: every JSON file
// under an evidence or results directory of experiments/, and of
// bench/evidence.
func evidenceFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, top := range []string{"experiments", "bench/evidence"} {
		err := filepath.WalkDir(filepath.Join(repoRoot, top), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || filepath.Ext(path) != ".json" {
				return err
			}
			rel, _ := filepath.Rel(repoRoot, path)
			rel = filepath.ToSlash(rel)
			if top == "experiments" && !strings.Contains(rel, "/evidence/") && !strings.Contains(rel, "/results/") {
				return nil
			}
			files = append(files, rel)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// TestEvidenceCovered checks that every study's results outside
// bench/evidence (whose timings do not reproduce) have a drift cell, or
// are made by the code and command of one (covers).
func TestEvidenceCovered(t *testing.T) {
	covered := map[string]bool{}
	for _, c := range evidenceCells {
		covered[c.study] = true
		for _, f := range c.covers {
			covered[f] = true
		}
	}
	for _, f := range evidenceFiles(t) {
		if strings.HasPrefix(f, "bench/evidence/") || timing(f) {
			continue
		}
		if !covered[f] && !coveredByRuns(f, covered) {
			t.Errorf("%s: no drift cell reruns its study; add one to evidenceCells (docs/evidence.md, Drift)", f)
		}
	}
	for f := range covered {
		if _, err := os.Stat(filepath.Join(repoRoot, f)); err != nil {
			t.Errorf("evidenceCells names %s: %v", f, err)
		}
	}
}

// timing reports whether f is a timing (bench step's output kept beside a
// study).
func timing(f string) bool { return filepath.Base(f) == "step-time.json" }

// coveredByRuns reports whether f is one run's result.json inside a study
// that is covered (its results gather it).
func coveredByRuns(f string, covered map[string]bool) bool {
	i := strings.Index(f, "/runs/")
	if i < 0 || filepath.Base(f) != "result.json" {
		return false
	}
	return covered[f[:i]+"/results.json"]
}

// TestEvidenceProvenance checks that every evidence file records its
// provenance with a commit (docs/evidence.md): a file written by a binary
// that did not know its commit must be regenerated.
func TestEvidenceProvenance(t *testing.T) {
	for _, f := range evidenceFiles(t) {
		if strings.Contains(f, "/runs/") && !strings.Contains(f, "dp-fashion-mnist") {
			continue // a run of a study: the study's record sums it up
		}
		commits := recordedCommits(readJSON(t, filepath.Join(repoRoot, f)))
		if len(commits) == 0 {
			t.Errorf("%s records no provenance: regenerate it with a binary built by bench/evidence/build.sh (it stamps the commit)", f)
		}
		for _, c := range commits {
			if c == "" || strings.Contains(c, provenance.Unknown) {
				t.Errorf("%s records commit %q: regenerate it with a binary built by bench/evidence/build.sh (it stamps the commit)", f, c)
			}
		}
	}
}

// recordedCommits are the commits of every provenance record in doc: the
// file's, its runs', or those of its parts (a file gathered from several
// studies keeps each one's).
func recordedCommits(doc any) []string {
	var commits []string
	switch d := doc.(type) {
	case map[string]any:
		if p, ok := d["provenance"].(map[string]any); ok {
			c, _ := p["commit"].(string)
			commits = append(commits, c)
		}
		for k, v := range d {
			if k != "provenance" {
				commits = append(commits, recordedCommits(v)...)
			}
		}
	case []any:
		for _, v := range d {
			commits = append(commits, recordedCommits(v)...)
		}
	}
	return commits
}
