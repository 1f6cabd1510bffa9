package main

import (
	"flag"
	"io"
	"path/filepath"
	"testing"

	"github.com/psclip/psclip/experiments/images"
)

// --batch, --micro-batch and --accum mean the same in train gpt and train
// images: the samples of a step, of a micro-batch (the most it holds) and
// the micro-batches of a step. train gpt takes --batch (B = M·K) with one
// of the others; train images takes --micro-batch under shuffle sampling
// too, cutting a batch into ⌈batch/micro-batch⌉ micro-batches.
func TestBatchFlagsOneMeaning(t *testing.T) {
	text := textCorpus(t)
	newFS := func() *flag.FlagSet {
		fs := flag.NewFlagSet("train", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		return fs
	}
	for _, tc := range []struct {
		args     []string
		micro, k int
	}{
		{[]string{"--batch", "12", "--accum", "3"}, 4, 3},
		{[]string{"--batch", "12", "--micro-batch", "6"}, 6, 2},
		{[]string{"--batch", "12", "--micro-batch", "6", "--accum", "2"}, 6, 2},
		{[]string{"--micro-batch", "5", "--accum", "2"}, 5, 2},
	} {
		args := append([]string{"--out", filepath.Join(t.TempDir(), "out"), "--text", text, "--block-size", "16"}, tc.args...)
		c, _, _, err := setupTrainGPT(newFS(), args)
		if err != nil || c.MicroBatch != tc.micro || c.Accum != tc.k {
			t.Errorf("train gpt %v: micro-batch %d, accum %d, %v; want %d, %d", tc.args, c.MicroBatch, c.Accum, err, tc.micro, tc.k)
		}
	}
	idx := writeIDX(t, filepath.Join(t.TempDir(), "idx"), 40, 8)
	for _, tc := range []struct {
		args         []string
		micro, accum int
	}{
		{[]string{"--batch", "10", "--micro-batch", "4"}, 0, 3},
		{[]string{"--batch", "10", "--accum", "2"}, 0, 2},
		{[]string{"--batch", "10", "--estimator", "dp-sgd", "--clip", "0.1", "--noise-multiplier", "1", "--delta", "0.01", "--micro-batch", "4"}, 4, 0},
	} {
		args := append([]string{"--out", filepath.Join(t.TempDir(), "out"), "--data", idx}, tc.args...)
		c, _, _, err := setupTrainCNN(newFS(), args, images.ImagesDefault(), imagesPreset)
		if err != nil || c.MicroBatch != tc.micro || c.Accum != tc.accum {
			t.Errorf("train images %v: micro-batch %d, accum %d, %v; want %d, %d", tc.args, c.MicroBatch, c.Accum, err, tc.micro, tc.accum)
		}
	}
}
