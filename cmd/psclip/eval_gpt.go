package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/psclip/psclip/data/text"
	"github.com/psclip/psclip/experiments/gpt"
	"github.com/psclip/psclip/internal/stats"
	runlayer "github.com/psclip/psclip/run"
	"github.com/psclip/psclip/setting"
)

func init() {
	register(&command{
		name:  "eval gpt",
		short: "estimate a GPT checkpoint's validation and training loss on many batches and several batch draws",
		run:   runEvalGPT,
	})
}

// evalResult is the JSON output of "eval gpt".
type evalResult struct {
	Ckpt      string        `json:"ckpt"`
	Step      int           `json:"step"`
	EvalIters int           `json:"eval_iters"`
	Losses    []evalLoss    `json:"losses"`
	Mean      map[string]sd `json:"mean"`
}

type evalLoss struct {
	Split string  `json:"split"`
	Seed  uint64  `json:"seed"`
	Loss  float64 `json:"loss"`
}

// sd is a mean ± standard deviation over the draws.
type sd struct {
	Mean stats.Float `json:"mean"`
	SD   stats.Float `json:"sd"` // null for one draw
}

func runEvalGPT(fs *flag.FlagSet, args []string) error {
	ckpt := fs.String("ckpt", "out-gpt", "checkpoint file, or a run directory holding "+runlayer.CheckpointFile)
	var d gpt.DataSpec
	dataFlags(fs, &d)
	iters := fs.Int("eval-iters", 200, "batches per estimate")
	seeds := fs.String("seeds", strconv.FormatUint(text.EvalSeed, 10), "comma-separated seeds of the batch draws (the default draws the batches training evaluates on)")
	splits := fs.String("splits", "val,train", "comma-separated splits to evaluate: val, train, test (the split --test-fraction holds out)")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *iters <= 0 {
		return usagef("--eval-iters %d: want > 0", *iters)
	}
	var draws []uint64
	for _, s := range strings.Split(*seeds, ",") {
		v, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return usagef("--seeds %q: %q is not a seed", *seeds, s)
		}
		if slices.Contains(draws, v) {
			return usagef("--seeds %q: seed %d is listed twice", *seeds, v)
		}
		draws = append(draws, v)
	}
	names := strings.Split(*splits, ",")
	for i, s := range names {
		if s != "val" && s != "train" && s != "test" {
			return usagef("--splits %q: unknown split %q (want val, train or test)", *splits, s)
		}
		if s == "test" && d.TestFraction == 0 {
			return usagef("--splits %q: the test split needs --test-fraction, the share of the text held out when the model was trained", *splits)
		}
		if slices.Contains(names[:i], s) {
			return usagef("--splits %q: split %s is listed twice", *splits, s)
		}
	}
	m, err := loadGPT(*ckpt)
	if err != nil {
		return err
	}
	corpus, err := loadCorpus(d)
	if err != nil {
		return err
	}
	res := evalResult{Ckpt: *ckpt, Step: m.Step, EvalIters: *iters, Mean: map[string]sd{}}
	// The estimates stream out as they are made (the table's rows; JSON
	// at the end), with a progress line on stderr about once a second.
	if !*asJSON {
		fmt.Fprintf(stdout, "%s after %d steps, %d batches of %d × %d tokens per estimate\n",
			*ckpt, m.Step, *iters, m.Config.MicroBatch, m.Config.BlockSize)
		fmt.Fprintf(stdout, "%-6s %-20s %s\n", "split", "seed", "loss")
	}
	for _, split := range names {
		tokens := map[string][]uint16{"val": corpus.Val, "train": corpus.Train, "test": corpus.Test}[split]
		var losses []float64
		for _, seed := range draws {
			p := newProgress(fmt.Sprintf("eval gpt: %s, seed %d", split, seed), "batches", *iters)
			l, err := m.Loss(corpus, tokens, *iters, seed, p.update)
			if err != nil {
				return corpusMismatch(err)
			}
			losses = append(losses, l)
			res.Losses = append(res.Losses, evalLoss{split, seed, l})
			if !*asJSON {
				fmt.Fprintf(stdout, "%-6s %-20d %.4f\n", split, seed, l)
			}
		}
		mean, dev := stats.MeanSD(losses)
		res.Mean[split] = sd{mean, dev}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	for _, split := range names {
		fmt.Fprintf(stdout, "%-6s %-20s %.4f ± %.4f\n", split, "mean ± sd", float64(res.Mean[split].Mean), float64(res.Mean[split].SD))
	}
	return nil
}

// corpusMismatch is the usage error of a corpus that does not fit the
// checkpoint: a setting of the model (which eval gpt has no flag for) that
// the corpus does not allow is said in words, with the flags that choose
// the corpus.
func corpusMismatch(err error) error {
	var se *setting.Error
	if !errors.As(err, &se) {
		return usage(err)
	}
	what := map[string]string{"VocabSize": "vocabulary size", "BlockSize": "block size"}[se.Field]
	if what == "" {
		what = se.Field
	}
	return usagef("the corpus does not fit the checkpoint: the model's %s is %v, want %s; evaluate on the corpus the model was trained on (--text, --data, --vocab)", what, se.Value, se.Want)
}
