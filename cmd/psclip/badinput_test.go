package main

import (
	"crypto/sha256"
	be "encoding/binary"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/psclip/psclip/safetensors"
)

// badCase is one invocation that must fail: exit status code, and a single
// line on stderr that contains want (the flag or file at fault).
type badCase struct {
	args []string
	code int
	want string
}

// Placeholders in badCase.args, replaced by fixture paths (see
// badFixtures). Each case runs in a fresh directory holding "file", a
// regular file, so "--out file" names a file and "--out out" a directory
// that does not exist yet.
const (
	fxData     = "@data"     // a good synthetic CIFAR directory
	fxTrunc    = "@trunc"    // CIFAR directory whose train.bin ends mid-record
	fxMissing  = "@missing"  // CIFAR directory without train.bin
	fxOversize = "@oversize" // CIFAR directory whose train.bin has a byte too many
	fxEmpty    = "@empty"    // an empty text file
	fxShort    = "@short"    // a text file shorter than one block
	fxText     = "@text"     // a good text corpus
	fxOddTok   = "@oddtok"   // token directory whose train.bin has an odd size
	fxNoVal    = "@noval"    // token directory without val.bin
	fxIDX      = "@idx"      // a good IDX directory (MNIST layout)
	fxIDXTrunc = "@idxtrunc" // IDX directory whose train-images-idx3-ubyte ends early
	fxIDXSize  = "@idxsize"  // IDX directory whose test images are 20×20, the training images 28×28
	fxIDX200   = "@idx200"   // IDX directory with one training label of 200 (the others 0…3)
	fxIDXOne   = "@idxone"   // IDX directory whose images all have label 0
	fxForeign  = "@foreign"  // a safetensors file of another program, no psclip checkpoint
	fxTable    = "@table"    // a good CSV table: features a and b, classes in label
	fxTableTxt = "@tabletxt" // a CSV table with a word in a feature column, line 3
	fxTableNaN = "@tablenan" // a CSV table with NaN in a feature column, line 3
	fxTableOne = "@tableone" // a CSV table whose rows all have one class
)

// badInputs lists, for every psclip command, invocations with bad flags,
// bad values or bad files. TestBadInput fails for a command without cases,
// so a new command must add its own here.
var badInputs = map[string][]badCase{
	"bench gemm": {
		{[]string{"--m", "0"}, 2, "--m 0"},
		{[]string{"--n", "-1"}, 2, "--n -1"},
		{[]string{"--runs", "0"}, 2, "--runs 0"},
		{[]string{"--threads", "0"}, 2, "--threads 0"},
		// Issue 26: sizes whose product overflows, and too many threads.
		{[]string{"--m", "9223372036854775807", "--n", "2", "--k", "2"}, 2, "an operand would exceed"},
		{[]string{"--m", "2", "--n", "4611686018427387904", "--k", "4"}, 2, "an operand would exceed"},
		{[]string{"--threads", "100000"}, 2, "--threads 100000: want at most 1024"},
	},
	"bench step": {
		{[]string{"--micro-batch", "0"}, 2, "--micro-batch 0"},
		{[]string{"--gamma", "0"}, 2, "--gamma = 0"},
		{[]string{"--gamma", "-1"}, 2, "--gamma = -1"},
		{[]string{"--steps", "0"}, 2, "--steps 0"},
		{[]string{"--accum", "0"}, 2, "--accum 0"},
		{[]string{"--model", "resnet"}, 2, "resnet"},
		{[]string{"--estimators", "adam"}, 2, "adam"},
		{[]string{"--clip-modes", "layer"}, 2, "layer"},
		{[]string{"--width-div", "0"}, 2, "width divisor"},
		// Issue 13: the other model's flags, repeated entries and a
		// --gamma nothing timed reads are refused.
		{[]string{"--model", "gpt", "--classes", "10"}, 2, "--classes applies to --model alexnet-cifar, not gpt"},
		{[]string{"--n-layer", "2"}, 2, "--n-layer applies to --model gpt, not alexnet-cifar"},
		{[]string{"--estimators", "sgd,sgd"}, 2, "--estimators: sgd is listed twice"},
		{[]string{"--clip-modes", "global,global"}, 2, "--clip-modes: global is listed twice"},
		{[]string{"--estimators", "sgd,nsgd", "--gamma", "2"}, 2, "--gamma applies to none"},
		{[]string{"--gamma", "1e39"}, 2, "--gamma = 1e+39"},
		// Issue 26: --estimators beside --clip-modes, which replaces it.
		{[]string{"--estimators", "sgd", "--clip-modes", "global"}, 2, "--estimators and --clip-modes exclude each other"},
	},
	"data synth-cifar": {
		{[]string{}, 2, "--out is required"},
		{[]string{"--out", "out", "--train", "0"}, 2, "0 training images"},
		{[]string{"--out", "out", "--classes", "1"}, 2, "1 classes"},
		{[]string{"--out", "out", "--noise", "-1"}, 2, "noise -1"},
		{[]string{"--out", "out", "--outliers", "1"}, 2, "outlier fraction 1"},
		{[]string{"--out", "out", "--outliers", "-0.1"}, 2, "outlier fraction -0.1"},
		{[]string{"--out", "out", "--outlier-kind", "blur"}, 2, "blur"},
		{[]string{"--out", "file", "--train", "4", "--test", "2", "--classes", "2"}, 2, "--out file"},
	},
	"data tokenize": {
		{[]string{"--out", "out"}, 2, "--text is required"},
		{[]string{"--text", fxText}, 2, "--out is required"},
		{[]string{"--text", fxText, "--out", "out", "--val-fraction", "1"}, 2, "--val-fraction 1"},
		{[]string{"--text", fxText, "--out", "out", "--val-fraction", "NaN"}, 2, "--val-fraction NaN"},
		{[]string{"--text", fxText, "--out", "out", "--tokenizer", "char", "--vocab-dir", "."}, 2, "--vocab-dir applies only to --tokenizer gpt2"},
		{[]string{"--text", fxText, "--out", "out", "--tokenizer", "words"}, 2, "--tokenizer \"words\""},
		{[]string{"--text", fxText, "--out", "out", "--vocab-dir", "."}, 2, "neither encoder.json and vocab.bpe"},
		{[]string{"--text", fxEmpty, "--out", "out", "--tokenizer", "char"}, 2, "empty"},
		{[]string{"--text", "missing.txt", "--out", "out"}, 2, "missing.txt"},
		{[]string{"--text", fxText, "--out", "file", "--tokenizer", "char"}, 2, "--out file"},
	},
	"export gpt2": {
		{[]string{"--ckpt", "run"}, 2, "--out is required"},
		{[]string{"--ckpt", "run", "--out", "out"}, 2, "--ckpt run: no checkpoint there"},
		{[]string{"--ckpt", fxForeign, "--out", "out"}, 2, "foreign"},
	},
	"experiment cifar": {
		{[]string{"--out", "out"}, 2, "--data is required"},
		{[]string{"--out", "out", "--data", fxTrunc}, 2, "train.bin"},
		{[]string{"--out", "out", "--data", fxMissing}, 2, "train.bin is missing"},
		{[]string{"--out", "out", "--data", fxOversize}, 2, "train.bin"},
		{[]string{"--out", "file", "--data", fxData}, 2, "--out file"},
		{[]string{"--out", "out", "--data", fxData, "--batch", "0"}, 2, "--batch = 0"},
		{[]string{"--out", "out", "--data", fxData, "--ps-gamma", "0"}, 2, "--ps-gamma = 0"},
		{[]string{"--out", "out", "--data", fxData, "--clip-sgd-gamma", "-1"}, 2, "--clip-sgd-gamma = -1"},
		{[]string{"--out", "out", "--data", fxData, "--inc-alpha", "0"}, 2, "--inc-alpha = 0"},
		{[]string{"--out", "out", "--data", fxData, "--inc-beta", "0"}, 2, "--inc-beta = 0"},
		{[]string{"--out", "out", "--data", fxData, "--grid-betas", "-1"}, 2, "--grid-betas = -1"},
		{[]string{"--out", "out", "--data", fxData, "--seeds", "0"}, 2, "--seeds = 0"},
		{[]string{"--out", "out", "--data", fxData, "--methods", "adam"}, 2, "adam"},
		// Issue 13: repeated entries, and settings no method reads.
		{[]string{"--out", "out", "--data", fxData, "--methods", "sgd,sgd"}, 2, "--methods = SGD, want each method once"},
		{[]string{"--out", "out", "--data", fxData, "--methods", "ps-clip-sgd=10,ps-clip-sgd"}, 2, "--methods = PS-Clip-SGD γ=10, want each method once"},
		{[]string{"--out", "out", "--data", fxData, "--grid-betas", "2,2"}, 2, "--grid-betas = 2, want each value once"},
		{[]string{"--out", "out", "--data", fxData, "--methods", "sgd", "--window", "512"}, 2, "--window applies to none of --methods sgd"},
		{[]string{"--out", "out", "--data", fxData, "--lr", "1e39"}, 2, "--lr = 1e+39"},
		// Issue 26: a threshold of a method not selected.
		{[]string{"--out", "out", "--data", fxData, "--methods", "sgd", "--ps-gamma", "5"}, 2, "--ps-gamma applies to none of --methods sgd"},
		{[]string{"--out", "out", "--data", fxData, "--methods", "sgd,clip-sgd=3", "--clip-sgd-gamma", "5"}, 2, "--clip-sgd-gamma applies to none of --methods sgd,clip-sgd=3"},
		{[]string{"--out", "out", "--data", fxData, "--methods", "sgd", "--grid-betas", "", "--inc-alpha", "5"}, 2, "--inc-alpha applies to none of --methods sgd"},
		{[]string{"--out", "out", "--data", fxData, "--methods", "sgd", "--inc-beta", "1.5"}, 2, "--inc-beta applies to none of --methods sgd"},
	},
	"experiment images": {
		{[]string{"--out", "out"}, 2, "--data is required"},
		{[]string{"--out", "out", "--data", fxIDXTrunc}, 2, "train-images-idx3-ubyte"},
		{[]string{"--out", "out", "--data", fxTrunc}, 2, "train.bin"},
		{[]string{"--out", "file", "--data", fxIDX}, 2, "--out file"},
		{[]string{"--out", "out", "--data", fxIDX, "--model", "resnet"}, 2, "resnet"},
		{[]string{"--out", "out", "--data", fxIDX, "--dropout", "0.5"}, 2, "--dropout = 0.5, want 0: small-cnn has no dropout"},
		{[]string{"--out", "out", "--data", fxIDX, "--width-div", "3"}, 2, "--width-div = 3"},
		{[]string{"--out", "out", "--data", fxIDX, "--train-subset", "-1"}, 2, "--train-subset = -1"},
		{[]string{"--out", "out", "--data", fxIDX, "--train-subset", "1000"}, 2, "--train-subset = 1000, want at most the 36 images"},
		{[]string{"--out", "out", "--data", fxIDX, "--label-noise", "1"}, 2, "--label-noise = 1"},
		{[]string{"--out", "out", "--data", fxIDX, "--label-noise", "-0.1"}, 2, "--label-noise = -0.1"},
		{[]string{"--out", "out", "--data", fxIDX, "--label-noise-kind", "next"}, 2, "--label-noise-kind needs --label-noise"},
		{[]string{"--out", "out", "--data", fxIDX, "--label-noise", "0.2", "--label-noise-kind", "swap"}, 2, "--label-noise-kind = \"swap\""},
		{[]string{"--out", "out", "--data", fxIDX, "--ps-gamma", "0"}, 2, "--ps-gamma = 0"},
		{[]string{"--out", "out", "--data", fxIDX, "--paper"}, 2, "paper"},
		{[]string{"--out", "out", "--data", fxIDX, "--methods", "sgd", "--ps-gamma", "5"}, 2, "--ps-gamma applies to none of --methods sgd"},
		{[]string{"--out", "out", "--data", fxIDX, "--methods", "sgd", "--clip-sgd-gamma", "5"}, 2, "--clip-sgd-gamma applies to none of --methods sgd"},
		{[]string{"--out", "out", "--data", fxIDX, "--methods", "sgd", "--inc-alpha", "5"}, 2, "--inc-alpha applies to none of --methods sgd"},
		{[]string{"--out", "out", "--data", fxIDX, "--methods", "sgd", "--grid-alphas", "5"}, 2, "--grid-alphas applies only with a grid"},
		// Issue 26: image sets whose parts disagree.
		{[]string{"--out", "out", "--data", fxIDXSize}, 2, "20×20 images, but the training images"},
		{[]string{"--out", "out", "--data", fxIDX200}, 2, "have no training image"},
		{[]string{"--out", "out", "--data", fxIDXOne}, 2, "a classifier needs at least 2 classes"},
		{[]string{"--from", "nowhere"}, 2, "--from: open nowhere/results.json"},
		{[]string{"--from", "nowhere/results.json", "--seeds", "2"}, 2, "--from takes no other flag (got --seeds)"},
	},
	"experiment gpt-corrupt": {
		{[]string{"--out", "out", "--text", fxEmpty}, 2, "empty corpus"},
		{[]string{"--out", "out", "--text", fxText, "--corrupt", "0.2"}, 2, "--corrupt: the study sets it per run"},
		{[]string{"--out", "out", "--text", fxText, "--test-fraction", "1.5"}, 2, "--test-fraction = 1.5"},
		{[]string{"--out", "out", "--text", fxText, "--settings", "0.2:diagonal"}, 2, "--settings"},
		{[]string{"--out", "out", "--text", fxText, "--settings", "0:clustered"}, 2, "clean data (F = 0) has no layout"},
		{[]string{"--out", "out", "--text", fxText, "--settings", "1"}, 2, "--settings"},
		{[]string{"--out", "out", "--text", fxText, "--settings", "0,0"}, 2, "--settings"},
		{[]string{"--out", "out", "--text", fxText, "--methods", "none,mb-clip"}, 2, "--methods"},
		{[]string{"--out", "out", "--text", fxText, "--methods", "global,layer"}, 2, "layer"},
		{[]string{"--out", "out", "--text", fxText, "--ks", "3"}, 2, "--ks = 3"},
		{[]string{"--out", "out", "--text", fxText, "--k-methods", "mb-clip"}, 2, "--k-methods"},
		{[]string{"--out", "out", "--text", fxText, "--gamma-seeds", "1,2"}, 2, "--gamma-seeds = 1"},
		{[]string{"--out", "out", "--text", fxText, "--gamma-grid", "0"}, 2, "--gamma-grid = 0"},
		// Issue 34: a threshold of the grid is named by --gamma-grid; a
		// one-value grid reads neither --gamma-at nor --gamma-seeds; a
		// corruption share rounds to some sequences and keeps some, in
		// every setting.
		{[]string{"--out", "out", "--text", fxText, "--gamma-grid", "-1"}, 2, "--gamma-grid = -1"},
		{[]string{"--out", "out", "--text", fxText, "--gamma-grid", "2", "--gamma-seeds", "7"}, 2, "--gamma-seeds applies only with two or more values in --gamma-grid"},
		{[]string{"--out", "out", "--text", fxText, "--gamma-grid", "2", "--gamma-at", "0.2"}, 2, "--gamma-at applies only with two or more values in --gamma-grid"},
		{[]string{"--out", "out", "--text", fxText, "--micro-batch", "2", "--accum", "4", "--ks", "", "--settings", "0,0.01"}, 2, "--settings = 0.01, want at least 0.0625: 0.01 of the 8 sequences of a step rounds to 0 of them"},
		{[]string{"--out", "out", "--text", fxText, "--micro-batch", "2", "--accum", "4", "--ks", "", "--settings", "0,0.99999999"}, 2, "--settings = 0.99999999, want below 0.938: 0.99999999 of the 8 sequences of a step rounds to all 8 of them"},
		{[]string{"--out", "out", "--text", fxText, "--micro-batch", "2", "--accum", "4", "--ks", "", "--settings", "0,0.25", "--gamma-at", "0.95"}, 2, "--gamma-at = 0.95, want below 0.938"},
		{[]string{"--out", "out", "--text", fxText, "--micro-batch", "2", "--accum", "4", "--ks", "1,8", "--settings", "0,0.25", "--k-at", "0.01"}, 2, "--k-at = 0.01, want at least 0.0625"},
		{[]string{"--out", "out", "--text", fxText, "--seeds", "0"}, 2, "--seeds = 0"},
		{[]string{"--out", "out", "--text", fxText, "--methods", "global,mb-clip", "--gamma-grid", "1"}, 2, "--gamma-grid applies only with ps-clip"},
		{[]string{"--out", "out", "--text", fxText, "--corpus-bytes", "100000"}, 2, "--corpus-bytes applies to the Go source corpus"},
		{[]string{"--out", "out", "--text", fxText, "--ks", "", "--k-at", "0.05"}, 2, "--k-at applies only with a K sweep"},
	},
	"experiment gpt": {
		{[]string{"--out", "out", "--text", fxEmpty}, 2, "empty corpus"},
		{[]string{"--out", "out", "--text", fxText, "--clip-modes", "per-sample", "--ps-estimator", "dp-sgd"}, 2, "--ps-estimator dp-sgd: experiment gpt does not train privately"},
		{[]string{"--out", "out", "--text", fxShort}, 2, "fewer than block size"},
		{[]string{"--out", "out", "--data", fxOddTok}, 2, "odd size"},
		{[]string{"--out", "file", "--text", fxText, "--block-size", "16"}, 2, "--out file"},
		{[]string{"--out", "out", "--text", fxText, "--clip", "0"}, 2, "--clip = 0"},
		{[]string{"--out", "out", "--text", fxText, "--micro-batch", "0"}, 2, "--micro-batch = 0"},
		{[]string{"--out", "out", "--text", fxText, "--dropout", "1"}, 2, "--dropout = 1"},
		{[]string{"--out", "out", "--text", fxText, "--seeds", "0"}, 2, "--seeds = 0"},
		{[]string{"--out", "out", "--text", fxText, "--lrs", "-1"}, 2, "--lrs = -1"},
		{[]string{"--out", "out", "--text", fxText, "--clip-modes", "layer"}, 2, "layer"},
		{[]string{"--out", "out", "--text", fxText, "--corrupt-kind", "shuffle"}, 2, "--corrupt-kind applies only with --corrupt > 0"},
		{[]string{"--out", "out", "--text", fxText, "--corrupt", "1.5"}, 2, "--corrupt = 1.5"},
		// Issue 34: a share that rounds to no sequence of a step.
		{[]string{"--out", "out", "--text", fxText, "--micro-batch", "2", "--accum", "4", "--corrupt", "0.01"}, 2, "--corrupt = 0.01, want at least 0.0625: 0.01 of the 8 sequences of a step rounds to 0 of them"},
		{[]string{"--out", "out", "--text", fxText, "--corpus-bytes", "100000"}, 2, "--corpus-bytes applies to the Go source corpus, not to --text or --data"},
		// Issue 13: repeated entries, settings no run reads, float32 ranges.
		{[]string{"--out", "out", "--text", fxText, "--lrs", "1e-3,1e-3"}, 2, "--lrs = 0.001, want each value once"},
		{[]string{"--out", "out", "--text", fxText, "--clip-modes", "global,global"}, 2, "--clip-modes = global, want each value once"},
		{[]string{"--out", "out", "--text", fxText, "--clip-modes", "global", "--clip-convention", "mean"}, 2, "--clip-convention applies to none of --clip-modes global"},
		{[]string{"--out", "out", "--text", fxText, "--clip-modes", "none", "--clip", "5"}, 2, "--clip applies to none of --clip-modes none"},
		{[]string{"--out", "out", "--text", fxText, "--lrs", "1e39"}, 2, "--lrs = 1e+39"},
		{[]string{"--out", "out", "--text", fxText, "--lrs", "1e-320"}, 2, "--lrs = 1e-320"},
	},
	"highprob": {
		{[]string{"--p", "1"}, 2, "tail index p = 1"},
		{[]string{"--p", "0.5"}, 2, "tail index p = 0.5"},
		{[]string{"--p", "1.5,inf"}, 2, "tail index p = +Inf"},
		{[]string{"--n", "0"}, 2, "batch size n = 0"},
		{[]string{"--gamma", "0"}, 2, "--gamma = 0"},
		{[]string{"--gamma", "-1"}, 2, "--gamma = -1"},
		{[]string{"--alpha", "0"}, 2, "--alpha = 0"},
		{[]string{"--beta", "0"}, 2, "--beta = 0"},
		{[]string{"--beta", "-1"}, 2, "--beta = -1"},
		{[]string{"--eta", "0"}, 2, "--eta = 0"},
		{[]string{"--runs", "0"}, 2, "runs = 0"},
		{[]string{"--T", "0"}, 2, "T = 0"},
		{[]string{"--methods", "adam"}, 2, "adam"},
		{[]string{"--methods", "nsgd,nsgd"}, 2, "--methods = \"nsgd\", want each method once"},
		{[]string{"--methods", "nsgd", "--gamma", "2"}, 2, "--gamma applies to none of --methods nsgd"},
		{[]string{"--out", "file", "--runs", "2", "--T", "5"}, 2, "--out file"},
	},
	"quadratic": {
		{[]string{"--p", "1"}, 2, "tail index p = 1"},
		{[]string{"--p", "-2"}, 2, "tail index p = -2"},
		{[]string{"--p", "NaN"}, 2, "tail index p = NaN"},
		{[]string{"--n", "0"}, 2, "batch size n = 0"},
		{[]string{"--gamma", "0"}, 2, "--gamma = 0"},
		{[]string{"--alpha", "-1"}, 2, "--alpha = -1"},
		{[]string{"--beta", "0"}, 2, "--beta = 0"},
		{[]string{"--eta", "-1"}, 2, "--eta = -1"},
		{[]string{"--runs", "0"}, 2, "runs = 0"},
		{[]string{"--T", "0"}, 2, "T = 0"},
		{[]string{"--methods", "adam"}, 2, "adam"},
		{[]string{"--methods", "sgd,sgd"}, 2, "--methods = \"sgd\", want each method once"},
		{[]string{"--tuned", "--gamma", "2"}, 2, "--gamma applies to none of --methods clip-sgd,ps-clip-sgd,nsgd with --tuned"},
		{[]string{"--gamma", "1e39"}, 2, "--gamma = 1e+39"},
		{[]string{"--out", "file", "--runs", "1", "--T", "5"}, 2, "--out file"},
	},
	"persample": {
		{[]string{}, 2, "--out is required"},
		{[]string{"--out", "out", "--batch", "0"}, 2, "--batch 0"},
		{[]string{"--out", "out", "--model", "resnet"}, 2, "resnet"},
		{[]string{"--out", "out", "--width-div", "0"}, 2, "width divisor"},
		{[]string{"--out", "out", "--model", "gpt", "--n-head", "3"}, 2, "n_head 3"},
		{[]string{"--out", "file", "--width-div", "16", "--classes", "10"}, 2, "--out file"},
		// Issue 13: the other model's flags are refused, not ignored.
		{[]string{"--out", "out", "--n-embd", "64"}, 2, "--n-embd applies to --model gpt, not alexnet-cifar"},
		{[]string{"--out", "out", "--model", "gpt", "--width-div", "2"}, 2, "--width-div applies to --model alexnet-cifar, not gpt"},
	},
	"privacy": {
		{[]string{"--noise-multiplier", "1", "--steps", "10", "--delta", "1e-5"}, 2, "--sample-rate is required"},
		{[]string{"--sample-rate", "0.1", "--noise-multiplier", "1", "--delta", "1e-5"}, 2, "--steps is required"},
		{[]string{"--sample-rate", "0.1", "--noise-multiplier", "1", "--steps", "10"}, 2, "--delta is required"},
		{[]string{"--sample-rate", "0.1", "--steps", "10", "--delta", "1e-5"}, 2, "exactly one of --noise-multiplier and --target-epsilon"},
		{[]string{"--sample-rate", "0.1", "--noise-multiplier", "1", "--target-epsilon", "1", "--steps", "10", "--delta", "1e-5"}, 2, "exactly one of --noise-multiplier and --target-epsilon"},
		{[]string{"--sample-rate", "0", "--noise-multiplier", "1", "--steps", "10", "--delta", "1e-5"}, 2, "--sample-rate = 0"},
		{[]string{"--sample-rate", "1.5", "--noise-multiplier", "1", "--steps", "10", "--delta", "1e-5"}, 2, "--sample-rate = 1.5"},
		{[]string{"--sample-rate", "NaN", "--noise-multiplier", "1", "--steps", "10", "--delta", "1e-5"}, 2, "--sample-rate = NaN"},
		{[]string{"--sample-rate", "0.1", "--noise-multiplier", "0", "--steps", "10", "--delta", "1e-5"}, 2, "--noise-multiplier = 0"},
		{[]string{"--sample-rate", "0.1", "--noise-multiplier", "NaN", "--steps", "10", "--delta", "1e-5"}, 2, "--noise-multiplier = NaN"},
		{[]string{"--sample-rate", "0.1", "--noise-multiplier", "1e-300", "--steps", "10", "--delta", "1e-5"}, 2, "--noise-multiplier 1e-300 gives no privacy"},
		{[]string{"--sample-rate", "0.1", "--noise-multiplier", "1", "--steps", "0", "--delta", "1e-5"}, 2, "--steps = 0"},
		// Beyond float64 accounting: a per-step RDP that underflows, more steps than float64 counts.
		{[]string{"--sample-rate", "0.1", "--noise-multiplier", "1e200", "--steps", "10", "--delta", "1e-5"}, 2, "--noise-multiplier = 1e+200, want a noise multiplier float64 accounting represents"},
		{[]string{"--sample-rate", "0.1", "--noise-multiplier", "1", "--steps", "9007199254740993", "--delta", "1e-5"}, 2, "--steps = 9007199254740993, want at most 2^53"},
		{[]string{"--sample-rate", "0.01", "--target-epsilon", "1", "--steps", "1000000000000000", "--delta", "1e-5"}, 2, "--target-epsilon = 1"},
		{[]string{"--sample-rate", "0.1", "--noise-multiplier", "1", "--steps", "10", "--delta", "0"}, 2, "--delta = 0"},
		{[]string{"--sample-rate", "0.1", "--noise-multiplier", "1", "--steps", "10", "--delta", "1"}, 2, "--delta = 1"},
		{[]string{"--sample-rate", "0.1", "--noise-multiplier", "1", "--steps", "10", "--delta", "NaN"}, 2, "--delta = NaN"},
		{[]string{"--sample-rate", "0.1", "--target-epsilon", "0", "--steps", "10", "--delta", "1e-5"}, 2, "--target-epsilon = 0"},
		{[]string{"--sample-rate", "0.1", "--target-epsilon", "NaN", "--steps", "10", "--delta", "1e-5"}, 2, "--target-epsilon = NaN"},
		{[]string{"--sample-rate", "1", "--target-epsilon", "1e-9", "--steps", "1000000", "--delta", "1e-5"}, 2, "--target-epsilon = 1e-09"},
		{[]string{"--sample-rate", "0.1", "--noise-multiplier", "1", "--steps", "10", "--delta", "1e-5", "--accountant", "moments"}, 2, "--accountant = moments"},
		{[]string{"--sample-rate", "0.1", "--noise-multiplier", "1", "--steps", "10", "--delta", "1e-5", "--orders", "2,,3"}, 2, "-orders"},
		{[]string{"--sample-rate", "0.1", "--noise-multiplier", "1", "--steps", "10", "--delta", "1e-5", "--orders", "2,x"}, 2, "-orders"},
		{[]string{"--sample-rate", "0.1", "--noise-multiplier", "1", "--steps", "10", "--delta", "1e-5", "--orders", "1,2"}, 2, "--orders = 1"},
		{[]string{"--sample-rate", "0.1", "--noise-multiplier", "1", "--steps", "10", "--delta", "1e-5", "--orders", "2,2"}, 2, "--orders = 2"},
		{[]string{"--sample-rate", "0.1", "--noise-multiplier", "1", "--steps", "10", "--delta", "1e-5", "--orders", "NaN"}, 2, "--orders = NaN"},
		{[]string{"--sample-rate", "0.1", "--noise-multiplier", "1", "--steps", "10", "--delta", "1e-5", "--orders", "2", "--accountant", "gdp"}, 2, "--orders = [2], want unset"},
		{[]string{"--sample-rate", "0.1", "--noise-multiplier", "1", "--steps", "10", "--delta", "1e-5", "--orders", "2", "--accountant", "prv"}, 2, "--orders = [2], want unset"},
		{[]string{"--sample-rate", "0.1", "--noise-multiplier", "1", "--steps", "10", "--delta", "1e-5", "--classical", "--accountant", "prv"}, 2, "--classical = true, want unset"},
		{[]string{"--sample-rate", "0.1", "--noise-multiplier", "0.01", "--steps", "10", "--delta", "1e-5", "--accountant", "prv"}, 2, "--accountant = prv"},
	},
	"eval gpt": {
		{[]string{"--ckpt", "out"}, 2, "--ckpt out"},
		{[]string{"--ckpt", "file"}, 1, "file"},
		{[]string{"--ckpt", "out", "--eval-iters", "-1"}, 2, "--eval-iters -1"},
		{[]string{"--ckpt", "out", "--splits", "val,"}, 2, "--splits"},
		{[]string{"--ckpt", "out", "--splits", "val,test"}, 2, "--splits \"val,test\": the test split needs --test-fraction"},
		{[]string{"--ckpt", "out", "--seeds", "-1"}, 2, "--seeds"},
		{[]string{"--ckpt", "out", "--seeds", "1,1"}, 2, "--seeds \"1,1\": seed 1 is listed twice"},
		{[]string{"--ckpt", "out", "--splits", "val,val"}, 2, "--splits \"val,val\": split val is listed twice"},
		{[]string{"--ckpt", fxForeign}, 2, "a safetensors file, but not a psclip checkpoint"},
	},
	"sample": {
		{[]string{"--ckpt", "out"}, 2, "--ckpt out"},
		{[]string{"--ckpt", "file"}, 1, "file"},
		{[]string{"--ckpt", "out", "--tokens", "0"}, 2, "--tokens = 0"},
		{[]string{"--ckpt", "out", "--temperature", "0"}, 2, "--temperature = 0"},
		{[]string{"--ckpt", "out", "--top-k", "-1"}, 2, "--top-k = -1"},
		{[]string{"--ckpt", "out", "--temperature", "1e39"}, 2, "--temperature = 1e+39"},
		// Issue 26: another program's safetensors file is bad input.
		{[]string{"--ckpt", fxForeign}, 2, "a safetensors file, but not a psclip checkpoint"},
	},
	"tail": {
		{[]string{}, 2, "--from is required"},
		// Issue 26: the log is input: missing or malformed, exit 2.
		{[]string{"--from", "no-such.jsonl"}, 2, "--from no-such.jsonl: no such file or directory"},
		{[]string{"--from", fxEmpty}, 2, "no per-sample norms"},
		{[]string{"--from", "file"}, 2, "--from file: line 1: invalid character"},
		{[]string{"--from", fxEmpty, "--rows", "0"}, 2, "--rows 0"},
		{[]string{"--from", fxEmpty, "--window", "-1"}, 2, "--window -1"},
		{[]string{"--from", fxEmpty, "--window", "1"}, 2, "--window 1: want 0 (4096) or at least 256"},
		{[]string{"--from", fxEmpty, "--out", "file"}, 2, "--out file"},
	},
	"tail quadratic": {
		{[]string{"--p", "1"}, 2, "tail index p = 1"},
		{[]string{"--n", "0"}, 2, "n = 0"},
		{[]string{"--runs", "0"}, 2, "runs = 0"},
		{[]string{"--T", "0"}, 2, "T = 0"},
		{[]string{"--window", "-1"}, 2, "--window = -1"},
		{[]string{"--out", "file", "--runs", "1", "--T", "5"}, 2, "--out file"},
	},
	"train cifar": {
		{[]string{"--out", "out"}, 2, "--data is required"},
		{[]string{"--out", "out", "--data", fxTrunc}, 2, "truncated"},
		{[]string{"--out", "out", "--data", fxMissing}, 2, "train.bin is missing"},
		{[]string{"--out", "out", "--data", fxOversize}, 2, "train.bin"},
		{[]string{"--out", "out", "--data", "no-such-dir"}, 2, "no-such-dir"},
		{[]string{"--out", "file", "--data", fxData}, 2, "--out file"},
		{[]string{"--out", "out", "--data", fxData, "--resume"}, 2, "--resume"},
		{[]string{"--out", "out", "--data", fxData, "--batch", "0"}, 2, "--batch = 0"},
		{[]string{"--out", "out", "--data", fxData, "--epochs", "0"}, 2, "--epochs = 0"},
		{[]string{"--out", "out", "--data", fxData, "--lr", "0"}, 2, "--lr = 0"},
		{[]string{"--out", "out", "--data", fxData, "--lr", "NaN"}, 2, "--lr = NaN"},
		{[]string{"--out", "out", "--data", fxData, "--momentum", "1"}, 2, "--momentum = 1"},
		{[]string{"--out", "out", "--data", fxData, "--weight-decay", "-1"}, 2, "--weight-decay = -1"},
		{[]string{"--out", "out", "--data", fxData, "--clip", "0"}, 2, "--clip = 0"},
		{[]string{"--out", "out", "--data", fxData, "--clip", "-1", "--estimator", "clip-sgd"}, 2, "--clip = -1"},
		{[]string{"--out", "out", "--data", fxData, "--alpha", "1", "--beta", "0"}, 2, "--alpha does not apply"},
		{[]string{"--out", "out", "--data", fxData, "--alpha", "1", "--beta", "-1"}, 2, "--beta = -1"},
		{[]string{"--out", "out", "--data", fxData, "--alpha", "0", "--beta", "2"}, 2, "--alpha = 0"},
		{[]string{"--out", "out", "--data", fxData, "--dropout", "1"}, 2, "--dropout = 1"},
		{[]string{"--out", "out", "--data", fxData, "--width-div", "0"}, 2, "--width-div = 0"},
		{[]string{"--out", "out", "--data", fxData, "--max-bad-steps", "-1"}, 2, "--max-bad-steps = -1"},
		{[]string{"--out", "out", "--data", fxData, "--estimator", "adam"}, 2, "adam"},
		{[]string{"--out", "out", "--data", fxData, "--augment", "mixup"}, 2, "mixup"},
		// Issue 13: a setting the estimator does not read is refused, and
		// every value is checked in float32, the precision it is used in.
		{[]string{"--out", "out", "--data", fxData, "--estimator", "sgd", "--clip", "3"}, 2, "--clip does not apply to --estimator sgd"},
		{[]string{"--out", "out", "--data", fxData, "--estimator", "ps-clip-auto", "--clip", "3"}, 2, "--clip does not apply to --estimator ps-clip-auto"},
		{[]string{"--out", "out", "--data", fxData, "--estimator", "clip-sgd", "--window", "512"}, 2, "--window does not apply to --estimator clip-sgd"},
		{[]string{"--out", "out", "--data", fxData, "--lr", "1e39"}, 2, "--lr = 1e+39, want a positive normal float32"},
		{[]string{"--out", "out", "--data", fxData, "--lr", "1e-320"}, 2, "--lr = 1e-320, want a positive normal float32"},
		{[]string{"--out", "out", "--data", fxData, "--clip", "1e39"}, 2, "--clip = 1e+39"},
		{[]string{"--out", "out", "--data", fxData, "--weight-decay", "1e-40"}, 2, "--weight-decay = 1e-40"},
	},
	"train table": {
		{[]string{"--out", "out", "--target", "label"}, 2, "--data is required"},
		{[]string{"--out", "out", "--data", fxTable}, 2, "--target is required"},
		{[]string{"--out", "out", "--data", fxTable, "--target", "class"}, 2, `no column "class" to predict among ["a" "b" "label"]`},
		{[]string{"--out", "out", "--data", fxTableTxt, "--target", "label"}, 2, `line 3, column "b": "blue" is not a number`},
		{[]string{"--out", "out", "--data", fxTableNaN, "--target", "label"}, 2, `line 3, column "a": missing value "NaN"`},
		{[]string{"--out", "out", "--data", fxTableOne, "--target", "label"}, 2, `every row has class "yes": a classifier needs at least 2`},
		{[]string{"--out", "out", "--data", fxEmpty, "--target", "label"}, 2, "no header row: the file is empty"},
		{[]string{"--out", "out", "--data", "no-such.csv", "--target", "label"}, 2, "no-such.csv"},
		{[]string{"--out", "file", "--data", fxTable, "--target", "label"}, 2, "--out file"},
		{[]string{"--out", "out", "--data", fxTable, "--target", "label", "--resume"}, 2, "--resume"},
		{[]string{"--out", "out", "--data", fxTable, "--target", "label", "--task", "classification", "--loss", "mse"}, 2, `--loss = "mse", want a classification loss (cross-entropy or bce)`},
		{[]string{"--out", "out", "--data", fxTable, "--target", "label", "--task", "ranking"}, 2, `--task = "ranking"`},
		{[]string{"--out", "out", "--data", fxTable, "--target", "label", "--loss", "hinge"}, 2, `--loss = "hinge"`},
		{[]string{"--out", "out", "--data", fxTable, "--target", "label", "--loss", "mse"}, 2, `table.csv: table: line 2, column "label": "no" is not a number`},
		{[]string{"--out", "out", "--data", fxTable, "--target", "label", "--huber-delta", "2"}, 2, "--huber-delta = 2, want unset"},
		{[]string{"--out", "out", "--data", fxTable, "--target", "label", "--hidden", "8,0"}, 2, "-hidden"},
		{[]string{"--out", "out", "--data", fxTable, "--target", "label", "--val-fraction", "1"}, 2, "--val-fraction = 1"},
		{[]string{"--out", "out", "--data", fxTable, "--target", "label", "--standardize", "minmax"}, 2, `--standardize = "minmax"`},
		{[]string{"--out", "out", "--data", fxTable, "--target", "label", "--estimator", "sgd", "--clip", "3"}, 2, "--clip does not apply to --estimator sgd"},
		{[]string{"--out", "out", "--data", fxTable, "--target", "label", "--estimator", "dp-sgd", "--clip", "1", "--noise-multiplier", "1", "--delta", "1e-3", "--standardize", "fit"}, 2, `--standardize = "fit", want none for dp-sgd`},
		{[]string{"--out", "out", "--data", fxTable, "--target", "label", "--estimator", "dp-sgd", "--clip", "1", "--noise-multiplier", "1", "--delta", "0.05", "--batch", "8"}, 2, "--delta = 0.05, want below 1/N = 0.025 (N = 40 training records)"},
		{[]string{"--out", "out", "--data", fxTable, "--target", "label", "--estimator", "dp-sgd", "--clip", "1", "--target-epsilon", "3", "--delta", "1e-3", "--batch", "41"}, 2, "--batch = 41, want at most the 40 training records"},
		{[]string{"--out", "out", "--data", fxTable, "--target", "label", "--estimator", "ps-clip-sgd", "--clip", "1", "--target-epsilon", "3"}, 2, "--target-epsilon does not apply to --estimator ps-clip-sgd"},
		{[]string{"--out", "out", "--data", fxTable, "--test", fxTableTxt, "--target", "label"}, 2, `tabletxt.csv: table: line 3, column "b": "blue" is not a number`},
	},
	"train images": {
		{[]string{"--out", "out"}, 2, "--data is required"},
		{[]string{"--out", "out", "--data", fxIDX, "--normalize", "zscore"}, 2, "zscore"},
		{[]string{"--out", "out", "--data", fxIDX, "--model", "tanh-cnn", "--normalize", "channel"}, 2, `--normalize = "channel", want none: tanh-cnn pads`},
		{[]string{"--out", "out", "--data", fxIDX, "--model", "tanh-cnn", "--dropout", "0.5"}, 2, "--dropout = 0.5, want 0: tanh-cnn has no dropout"},
		{[]string{"--out", "out", "--data", fxData, "--model", "tanh-cnn"}, 2, "--model = \"tanh-cnn\", want a model for 3-channel images"},
		{[]string{"--out", "out", "--data", fxIDXTrunc}, 2, "train-images-idx3-ubyte"},
		{[]string{"--out", "out", "--data", fxTrunc}, 2, "train.bin"},
		{[]string{"--out", "file", "--data", fxIDX}, 2, "--out file"},
		{[]string{"--out", "out", "--data", fxIDX, "--model", "resnet"}, 2, "resnet"},
		{[]string{"--out", "out", "--data", fxIDX, "--dropout", "0.5"}, 2, "--dropout = 0.5, want 0: small-cnn has no dropout"},
		{[]string{"--out", "out", "--data", fxIDX, "--width-div", "3"}, 2, "--width-div = 3"},
		{[]string{"--out", "out", "--data", fxIDX, "--train-subset", "-1"}, 2, "--train-subset = -1"},
		{[]string{"--out", "out", "--data", fxIDX, "--train-subset", "1000"}, 2, "--train-subset = 1000, want at most the 36 images"},
		{[]string{"--out", "out", "--data", fxIDX, "--label-noise", "1"}, 2, "--label-noise = 1"},
		{[]string{"--out", "out", "--data", fxIDX, "--label-noise", "-0.1"}, 2, "--label-noise = -0.1"},
		{[]string{"--out", "out", "--data", fxIDX, "--label-noise-kind", "next"}, 2, "--label-noise-kind needs --label-noise"},
		{[]string{"--out", "out", "--data", fxIDX, "--label-noise", "0.2", "--label-noise-kind", "swap"}, 2, "--label-noise-kind = \"swap\""},
		{[]string{"--out", "out", "--data", fxIDX, "--resume"}, 2, "--resume"},
		{[]string{"--out", "out", "--data", fxIDX, "--estimator", "sgd", "--clip", "3"}, 2, "--clip does not apply to --estimator sgd"},
		// Issue 25: dp-sgd refuses what would make its ε wrong.
		{[]string{"--out", "out", "--data", fxIDX, "--estimator", "dp-sgd", "--clip", "0.1", "--noise-multiplier", "1", "--delta", "0.05"}, 2, "--delta = 0.05, want below 1/N = 0.0278 (N = 36 training images)"},
		{[]string{"--out", "out", "--data", fxIDX, "--estimator", "dp-sgd", "--clip", "0.1", "--noise-multiplier", "1"}, 2, "--delta = 0, want a δ strictly between 0 and 1"},
		{[]string{"--out", "out", "--data", fxIDX, "--estimator", "dp-sgd", "--clip", "0.1", "--noise-multiplier", "0", "--delta", "0.01"}, 2, "--noise-multiplier = 0"},
		{[]string{"--out", "out", "--data", fxIDX, "--estimator", "dp-sgd", "--clip", "0.1", "--noise-multiplier", "1", "--target-epsilon", "3", "--delta", "0.01"}, 2, "--target-epsilon and --noise-multiplier exclude each other"},
		{[]string{"--out", "out", "--data", fxIDX, "--estimator", "dp-sgd", "--clip", "0.1", "--target-epsilon", "0", "--delta", "0.01"}, 2, "--target-epsilon = 0"},
		{[]string{"--out", "out", "--data", fxIDX, "--estimator", "dp-sgd", "--clip", "0.1", "--target-epsilon", "3", "--delta", "0.05"}, 2, "--delta = 0.05, want below 1/N"},
		{[]string{"--out", "out", "--data", fxIDX, "--estimator", "dp-sgd", "--clip", "0.1", "--noise-multiplier", "1", "--delta", "0.01", "--normalize", "channel"}, 2, `--normalize = "channel", want none for dp-sgd`},
		{[]string{"--out", "out", "--data", fxIDX, "--estimator", "dp-sgd", "--clip", "0.1", "--noise-multiplier", "1", "--delta", "0.01", "--accum", "2"}, 2, "--accum = 2, want unset"},
		{[]string{"--out", "out", "--data", fxIDX, "--estimator", "dp-sgd", "--clip", "0.1", "--noise-multiplier", "1", "--delta", "0.01", "--sampling", "shuffle", "--micro-batch", "4", "--accum", "2"}, 2, "--micro-batch and --accum exclude each other"},
		{[]string{"--out", "out", "--data", fxIDX, "--estimator", "ps-clip-sgd", "--noise-multiplier", "1"}, 2, "--noise-multiplier does not apply to --estimator ps-clip-sgd"},
		{[]string{"--out", "out", "--data", fxIDX, "--sampling", "poisson"}, 2, "--sampling = \"poisson\", want unset: Poisson sampling is dp-sgd's"},
		{[]string{"--out", "out", "--data", fxIDX, "--estimator", "ps-clip-sgd", "--target-epsilon", "3"}, 2, "--target-epsilon does not apply to --estimator ps-clip-sgd"},
		// --val-fraction is a share in [0, 1) that holds out an image,
		// or 0; with it, N counts every training image.
		{[]string{"--out", "out", "--data", fxIDX, "--val-fraction", "1"}, 2, "--val-fraction = 1, want 0, or a normal float32 between 0 and 1"},
		{[]string{"--out", "out", "--data", fxIDX, "--val-fraction", "-0.1"}, 2, "--val-fraction = -0.1"},
		{[]string{"--out", "out", "--data", fxIDX, "--val-fraction", "0.01"}, 2, "--val-fraction = 0.01, want 0 or at least 0.025: a share that holds out an image of the 40 training images"},
		{[]string{"--out", "out", "--data", fxIDX, "--val-fraction", "tenth"}, 2, "-val-fraction"},
		{[]string{"--out", "out", "--data", fxIDX, "--val-fraction", "0", "--estimator", "dp-sgd", "--clip", "0.1", "--noise-multiplier", "1", "--delta", "0.025"}, 2, "--delta = 0.025, want below 1/N = 0.025 (N = 40 training images)"},
		// Issue 26: image sets whose parts disagree.
		{[]string{"--out", "out", "--data", fxIDXSize}, 2, "20×20 images, but the training images"},
		{[]string{"--out", "out", "--data", fxIDX200}, 2, "the labels run to 200, but 196 of the classes 0…200 have no training image"},
		{[]string{"--out", "out", "--data", fxIDXOne}, 2, "every training image has label 0; a classifier needs at least 2 classes"},
		// Issue 26: more micro-batches than samples in a batch: the batch
		// given, or the batch used (the 36 images of the training split).
		{[]string{"--out", "out", "--data", fxIDX, "--batch", "8", "--accum", "9"}, 2, "--accum = 9, want at most the batch of 8"},
		{[]string{"--out", "out", "--data", fxIDX, "--batch", "100", "--accum", "40"}, 2, "--accum = 40, want at most the 36 images of a batch"},
		// Issue 26: label noise at the edges: a share that flips no image
		// of a small subset, or every image, or that is 1 in float32, and
		// noise on a one-class set.
		{[]string{"--out", "out", "--data", fxIDX, "--train-subset", "10", "--label-noise", "0.01"}, 2, "--label-noise = 0.01, want at least 0.05: 0.01 of the 10 training images rounds to 0 of them"},
		{[]string{"--out", "out", "--data", fxIDX, "--train-subset", "10", "--label-noise", "0.97"}, 2, "--label-noise = 0.97, want below 0.95: 0.97 of the 10 training images rounds to all 10 of them"},
		{[]string{"--out", "out", "--data", fxIDX, "--label-noise", "0.99999999"}, 2, "--label-noise = 0.99999999, want in [0, 1) in float32 as well"},
		{[]string{"--out", "out", "--data", fxIDXOne, "--label-noise", "0.2"}, 2, "a classifier needs at least 2 classes"},
	},
	"train gpt": {
		{[]string{"--out", "out", "--text", fxEmpty}, 2, "empty corpus"},
		{[]string{"--out", "out", "--text", fxText, "--init", "."}, 2, "--init: stat config.json"},
		// Issue 24: corrupted text.
		{[]string{"--out", "out", "--text", fxText, "--corrupt", "1"}, 2, "--corrupt = 1"},
		{[]string{"--out", "out", "--text", fxText, "--corrupt", "-0.1"}, 2, "--corrupt = -0.1"},
		// Issue 34: a share that rounds to none or all of a step's
		// sequences is not the share asked for.
		{[]string{"--out", "out", "--text", fxText, "--micro-batch", "2", "--accum", "4", "--corrupt", "0.01"}, 2, "--corrupt = 0.01, want at least 0.0625: 0.01 of the 8 sequences of a step rounds to 0 of them"},
		{[]string{"--out", "out", "--text", fxText, "--micro-batch", "2", "--accum", "4", "--corrupt", "0.95"}, 2, "--corrupt = 0.95, want below 0.938: 0.95 of the 8 sequences of a step rounds to all 8 of them"},
		{[]string{"--out", "out", "--text", fxText, "--micro-batch", "2", "--accum", "4", "--corrupt", "0.99999999"}, 2, "--corrupt = 0.99999999, want below 0.938"},
		{[]string{"--out", "out", "--text", fxText, "--micro-batch", "1", "--accum", "1", "--corrupt", "0.5"}, 2, "--corrupt = 0.5, want below 0.5: 0.5 of the 1 sequences of a step rounds to all 1 of them"},
		{[]string{"--out", "out", "--text", fxText, "--corrupt-layout", "clustered"}, 2, "--corrupt-layout applies only with --corrupt > 0"},
		{[]string{"--out", "out", "--text", fxText, "--corrupt-kind", "repeat"}, 2, "--corrupt-kind applies only with --corrupt > 0"},
		{[]string{"--out", "out", "--text", fxText, "--corrupt", "0.2", "--corrupt-layout", "striped"}, 2, "--corrupt-layout = \"striped\""},
		{[]string{"--out", "out", "--text", fxText, "--corrupt", "0.2", "--corrupt-kind", "noise"}, 2, "--corrupt-kind = \"noise\""},
		{[]string{"--out", "out", "--text", fxShort, "--block-size", "16"}, 2, "fewer than block size + 1 = 17"},
		// dp-sgd refuses what would make its record-level ε wrong.
		{[]string{"--out", "out", "--text", fxText, "--block-size", "16", "--clip-mode", "per-sample", "--ps-estimator", "dp-sgd", "--clip", "1", "--noise-multiplier", "1", "--delta", "1e-5", "--sampling", "windows"}, 2, `--sampling = "windows", want poisson for dp-sgd: windows at random offsets overlap`},
		{[]string{"--out", "out", "--text", fxText, "--block-size", "16", "--clip-mode", "per-sample", "--ps-estimator", "dp-sgd", "--clip", "1", "--noise-multiplier", "1", "--delta", "0.01"}, 2, "--delta = 0.01, want below 1/N"},
		{[]string{"--out", "out", "--text", fxText, "--block-size", "16", "--clip-mode", "per-sample", "--ps-estimator", "dp-sgd", "--clip", "1", "--noise-multiplier", "1"}, 2, "--delta = 0, want a δ strictly between 0 and 1"},
		{[]string{"--out", "out", "--text", fxShort, "--block-size", "16", "--clip-mode", "per-sample", "--ps-estimator", "dp-sgd", "--clip", "1", "--noise-multiplier", "1", "--delta", "1e-5"}, 2, "fewer than block size + 1 = 17"},
		{[]string{"--out", "out", "--text", fxText, "--block-size", "16", "--clip-mode", "per-sample", "--ps-estimator", "dp-sgd", "--clip", "1", "--noise-multiplier", "1", "--delta", "1e-5", "--corrupt", "0.1"}, 2, "--corrupt = 0.1, want 0 for dp-sgd"},
		{[]string{"--out", "out", "--text", fxText, "--delta", "1e-5"}, 2, "--delta = 1e-05, want unset: δ is dp-sgd's"},
		{[]string{"--out", "out", "--text", fxText, "--sampling", "poisson"}, 2, `--sampling = "poisson", want unset: Poisson sampling of records is dp-sgd's`},
		{[]string{"--out", "out", "--text", fxText, "--noise-multiplier", "1"}, 2, "--noise-multiplier does not apply to --clip-mode global"},
		{[]string{"--out", "out", "--text", fxText, "--target-epsilon", "3"}, 2, "--target-epsilon does not apply to Clip-SGD (global)"},
		{[]string{"--out", "out", "--text", fxText, "--block-size", "16", "--clip-mode", "per-sample", "--ps-estimator", "dp-sgd", "--clip", "1", "--noise-multiplier", "1", "--delta", "1e-5", "--target-epsilon", "3"}, 2, "--target-epsilon and --noise-multiplier exclude each other"},
		{[]string{"--out", "out", "--text", fxText, "--block-size", "16", "--clip-mode", "per-sample", "--ps-estimator", "dp-sgd", "--clip", "1", "--delta", "1e-5", "--target-epsilon", "0"}, 2, "--target-epsilon = 0"},
		{[]string{"--out", "out", "--text", fxText, "--block-size", "16", "--clip-mode", "per-sample", "--ps-estimator", "dp-sgd", "--clip", "1", "--delta", "0.5", "--target-epsilon", "3"}, 2, "--delta = 0.5, want below 1/N"},
		// A held-out test split: a share of the text below 1 that holds a
		// block out, of a text (a token directory has its own splits).
		{[]string{"--out", "out", "--text", fxText, "--test-fraction", "1"}, 2, "--test-fraction = 1, want 0, or a normal float32 between 0 and 1"},
		{[]string{"--out", "out", "--text", fxText, "--test-fraction", "-0.1"}, 2, "--test-fraction = -0.1"},
		{[]string{"--out", "out", "--text", fxText, "--test-fraction", "1e-9"}, 2, "--test-fraction = 1e-09, want a share of"},
		{[]string{"--out", "out", "--text", fxText, "--test-fraction", "0.001"}, 2, "test split: 24 tokens are fewer than block size + 1 = 65"},
		{[]string{"--out", "out", "--data", fxOddTok, "--test-fraction", "0.1"}, 2, "--test-fraction = 0.1, want unset: a token directory has its own splits"},
		{[]string{"--out", "out", "--text", "no-such.txt"}, 2, "no-such.txt"},
		{[]string{"--out", "out", "--data", fxOddTok}, 2, "odd size"},
		{[]string{"--out", "out", "--data", fxNoVal}, 2, "no val.bin"},
		{[]string{"--out", "out", "--text", fxText, "--data", fxOddTok}, 2, "exclusive"},
		{[]string{"--out", "file", "--text", fxText, "--block-size", "16"}, 2, "--out file"},
		{[]string{"--out", "out", "--text", fxText, "--block-size", "16", "--resume"}, 2, "--resume"},
		{[]string{"--out", "out", "--text", fxText, "--micro-batch", "0"}, 2, "--micro-batch = 0"},
		{[]string{"--out", "out", "--text", fxText, "--accum", "0"}, 2, "--accum = 0"},
		{[]string{"--out", "out", "--text", fxText, "--block-size", "0"}, 2, "--block-size = 0"},
		{[]string{"--out", "out", "--text", fxText, "--steps", "0"}, 2, "--steps = 0"},
		{[]string{"--out", "out", "--text", fxText, "--lr", "0"}, 2, "--lr = 0"},
		{[]string{"--out", "out", "--text", fxText, "--clip", "0"}, 2, "--clip = 0"},
		{[]string{"--out", "out", "--text", fxText, "--clip", "-1", "--clip-mode", "per-sample"}, 2, "--clip = -1"},
		{[]string{"--out", "out", "--text", fxText, "--beta1", "1"}, 2, "--beta1 = 1"},
		{[]string{"--out", "out", "--text", fxText, "--beta2", "1"}, 2, "--beta2 = 1"},
		{[]string{"--out", "out", "--text", fxText, "--eps", "0"}, 2, "--eps = 0"},
		{[]string{"--out", "out", "--text", fxText, "--weight-decay", "-1"}, 2, "--weight-decay = -1"},
		{[]string{"--out", "out", "--text", fxText, "--dropout", "1"}, 2, "--dropout = 1"},
		{[]string{"--out", "out", "--text", fxText, "--n-head", "3"}, 2, "--n-head = 3"},
		{[]string{"--out", "out", "--text", fxText, "--clip-mode", "layer"}, 2, "layer"},
		{[]string{"--out", "out", "--text", fxText, "--vocab", "word"}, 2, "word"},
		{[]string{"--out", "out", "--text", fxText, "--corpus-bytes", "100000"}, 2, "--corpus-bytes applies to the Go source corpus, not to --text or --data"},
		{[]string{"--out", "out", "--text", fxText, "--steps", "10", "--warmup", "20"}, 2, "--warmup = 20"},
		// Issue 13: a setting the clip mode does not read is refused, and
		// every value is checked in float32, the precision it is used in.
		{[]string{"--out", "out", "--text", fxText, "--clip-mode", "none", "--clip", "5"}, 2, "--clip does not apply to --clip-mode none"},
		{[]string{"--out", "out", "--text", fxText, "--clip-convention", "mean"}, 2, "--clip-convention does not apply to --clip-mode global"},
		{[]string{"--out", "out", "--text", fxText, "--clip-mode", "per-sample", "--clip-convention", "nanogpt"}, 2, "--clip-convention does not apply to --clip-mode per-sample"},
		{[]string{"--out", "out", "--text", fxText, "--clip-mode", "per-sample", "--ps-estimator", "ps-clip-auto", "--clip", "3"}, 2, "--clip does not apply to --clip-mode per-sample"},
		{[]string{"--out", "out", "--text", fxText, "--window", "512"}, 2, "--window does not apply to --clip-mode global"},
		{[]string{"--out", "out", "--text", fxText, "--lr", "1e39"}, 2, "--lr = 1e+39, want a positive normal float32"},
		{[]string{"--out", "out", "--text", fxText, "--lr", "1e-320", "--min-lr", "0"}, 2, "--lr = 1e-320, want a positive normal float32"},
		{[]string{"--out", "out", "--text", fxText, "--eps", "1e-50"}, 2, "--eps = 1e-50"},
		{[]string{"--out", "out", "--text", fxText, "--clip-mode", "micro-batch", "--accum", "8", "--clip", "1e38"}, 2, "--clip = 1e+38"},
		// --batch, the sequences of a step, as train images reads it.
		{[]string{"--out", "out", "--text", fxText, "--batch", "0"}, 2, "--batch 0: want > 0"},
		{[]string{"--out", "out", "--text", fxText, "--batch", "12", "--micro-batch", "5"}, 2, "--batch 12 is not a multiple of --micro-batch 5"},
		{[]string{"--out", "out", "--text", fxText, "--batch", "12", "--accum", "5"}, 2, "--batch 12 is not a multiple of --accum 5"},
		{[]string{"--out", "out", "--text", fxText, "--batch", "12", "--micro-batch", "4", "--accum", "2"}, 2, "--batch 12 is not --micro-batch 4 × --accum 2"},
	},
}

// badFixtures writes the damaged inputs the cases name and returns the
// placeholder → path map.
func badFixtures(t *testing.T) map[string]string {
	dir := t.TempDir()
	good := cifarData(t)
	fx := map[string]string{fxData: good, fxText: textCorpus(t)}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(good, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, d := range []struct {
		ph    string
		train func([]byte) []byte // nil: no train.bin
	}{
		{fxTrunc, func(b []byte) []byte { return b[:len(b)-200] }},
		{fxMissing, nil},
		{fxOversize, func(b []byte) []byte { return append(b, 0) }},
	} {
		for _, n := range []string{"test.bin", "fine_label_names.txt", "coarse_label_names.txt"} {
			write(filepath.Join(d.ph[1:], n), read(n))
		}
		if d.train != nil {
			write(filepath.Join(d.ph[1:], "train.bin"), d.train(read("train.bin")))
		}
		fx[d.ph] = filepath.Join(dir, d.ph[1:])
	}
	fx[fxEmpty] = write("empty.txt", nil)
	fx[fxShort] = write("short.txt", []byte("To be, or not"))
	write("oddtok/train.bin", []byte{1, 0, 2})
	write("oddtok/val.bin", []byte{1, 0})
	fx[fxOddTok] = filepath.Join(dir, "oddtok")
	write("noval/train.bin", []byte{1, 0, 2, 0})
	fx[fxNoVal] = filepath.Join(dir, "noval")
	fx[fxIDX] = writeIDX(t, filepath.Join(dir, "idx"), 40, 8)
	trunc := writeIDX(t, filepath.Join(dir, "idxtrunc"), 40, 8)
	images := filepath.Join(trunc, "train-images-idx3-ubyte")
	if err := os.Truncate(images, 16+39*28*28+5); err != nil {
		t.Fatal(err)
	}
	fx[fxIDXTrunc] = trunc
	// Issue 26: image sets whose parts disagree.
	size := writeIDX(t, filepath.Join(dir, "idxsize"), 40, 8)
	testImages := be.BigEndian.AppendUint32(nil, 0x0803)
	for _, d := range []int{8, 20, 20} {
		testImages = be.BigEndian.AppendUint32(testImages, uint32(d))
	}
	write("idxsize/t10k-images-idx3-ubyte", append(testImages, make([]byte, 8*20*20)...))
	fx[fxIDXSize] = size
	labels := func(name string, f func(l []byte)) string {
		d := writeIDX(t, filepath.Join(dir, name), 40, 8)
		for _, file := range []string{"train-labels-idx1-ubyte", "t10k-labels-idx1-ubyte"} {
			b, err := os.ReadFile(filepath.Join(d, file))
			if err != nil {
				t.Fatal(err)
			}
			f(b[8:])
			write(filepath.Join(name, file), b)
		}
		return d
	}
	fx[fxIDX200] = labels("idx200", func(l []byte) {
		if len(l) == 40 {
			l[5] = 200
		}
	})
	fx[fxIDXOne] = labels("idxone", func(l []byte) { clear(l) })
	fx[fxTable] = writeTable(t, 50, 2)
	fx[fxTableTxt] = write("tabletxt.csv", []byte("a,b,label\n1,2,yes\n3,blue,no\n"))
	fx[fxTableNaN] = write("tablenan.csv", []byte("a,b,label\n1,2,yes\nNaN,4,no\n"))
	fx[fxTableOne] = write("tableone.csv", []byte("a,b,label\n1,2,yes\n3,4,yes\n"))
	fx[fxForeign] = filepath.Join(dir, "foreign.safetensors")
	w := []safetensors.Tensor{safetensors.New("weight", []int{2}, []float32{1, 2})}
	if err := safetensors.WriteFile(fx[fxForeign], w, map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
	return fx
}

// TestBadInput runs every command with bad flags, values and files: each
// must exit with the case's status (2: usage) and one line on stderr naming
// the problem, print nothing on stdout, and leave its working directory
// and the input files exactly as they were (no output directory, no
// partial file, the file given as --out untouched).
func TestBadInput(t *testing.T) {
	help := psclip(t, "", nil, "help")
	names := helpCommands(help.stdout)
	if len(names) < 10 {
		t.Fatalf("psclip help lists %d commands: %v", len(names), names)
	}
	for name := range badInputs {
		if !slices.Contains(names, name) {
			t.Errorf("badInputs has cases for %q, which psclip help does not list", name)
		}
	}
	fx := badFixtures(t)
	inputs := snapshot(t, filepath.Dir(fx[fxTrunc]))
	data := snapshot(t, fx[fxData])
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			cases := badInputs[name]
			if len(cases) == 0 {
				t.Fatalf("no bad-input cases for %q: add them to badInputs", name)
			}
			// Every command refuses an unknown flag and a stray argument.
			cases = append(cases,
				badCase{[]string{"--no-such-flag"}, 2, "no-such-flag"},
				badCase{[]string{"stray"}, 2, `unexpected argument "stray"`})
			for _, c := range cases {
				args := strings.Fields(name)
				for _, a := range c.args {
					if p, ok := fx[a]; ok {
						a = p
					}
					args = append(args, a)
				}
				work := t.TempDir()
				if err := os.WriteFile(filepath.Join(work, "file"), []byte("keep"), 0o644); err != nil {
					t.Fatal(err)
				}
				before := snapshot(t, work)
				r := psclip(t, work, nil, args...)
				line := strings.TrimSuffix(r.stderr, "\n")
				switch {
				case r.code != c.code:
					t.Errorf("%s: exit %d, want %d; stderr %q", strings.Join(c.args, " "), r.code, c.code, r.stderr)
				case strings.Contains(line, "\n") || !strings.HasSuffix(r.stderr, "\n"):
					t.Errorf("%s: stderr is not one line: %q", strings.Join(c.args, " "), r.stderr)
				case !strings.HasPrefix(line, "psclip "+name+": ") || !strings.Contains(line, c.want):
					t.Errorf("%s: stderr %q, want psclip %s: ...%s...", strings.Join(c.args, " "), line, name, c.want)
				case r.stdout != "":
					t.Errorf("%s: printed %q on stdout", strings.Join(c.args, " "), r.stdout)
				}
				if after := snapshot(t, work); !reflect.DeepEqual(before, after) {
					t.Errorf("%s: the working directory changed: %v, then %v", strings.Join(c.args, " "), before, after)
				}
			}
		})
	}
	if !reflect.DeepEqual(inputs, snapshot(t, filepath.Dir(fx[fxTrunc]))) || !reflect.DeepEqual(data, snapshot(t, fx[fxData])) {
		t.Error("a command changed its input files")
	}
}

// helpCommands returns the command names "psclip help" lists: the lines
// after "Commands:", name and description separated by two spaces or more.
func helpCommands(help string) []string {
	_, list, _ := strings.Cut(help, "Commands:\n")
	var names []string
	for _, l := range strings.Split(list, "\n") {
		if name, _, ok := strings.Cut(strings.TrimSpace(l), "  "); ok {
			names = append(names, name)
		}
	}
	return names
}

// snapshot describes every file and directory under root: its path, mode
// and a hash of its content.
func snapshot(t *testing.T, root string) []string {
	t.Helper()
	var s []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			s = append(s, rel+"/")
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		s = append(s, fmt.Sprintf("%s %x", rel, sha256.Sum256(b)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}
