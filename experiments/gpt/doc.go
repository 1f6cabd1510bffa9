// Package gpt is the paper's GPT experiment as library code: training a
// nanoGPT-style GPT with gradient accumulation and four clip modes, exact
// resume from checkpoints, sampling, and the comparison of clipping after
// accumulation (global) with clipping every micro-batch (MB-Clip) over
// learning rates and seeds. The commands "psclip train gpt", "psclip sample"
// and "psclip experiment gpt" are thin wrappers over it.
//
// A run is built on the public packages only: models.GPT, train.Trainer with
// an estimator and scope chosen by ClipMode.Estimator, optim.AdamW with
// nanoGPT's parameter groups and optim.WarmupCosine, data/text samplers,
// checkpoint for atomic, checksummed checkpoints, and internal/loop for
// progress, Ctrl-C and the bad-step limit:
//
//	corpus, _ := gpt.LoadCorpus(gpt.DataSpec{Text: "input.txt"})
//	cfg := gpt.Default()
//	cfg.ClipMode = gpt.ClipMicroBatch
//	r, err := gpt.New(cfg, corpus, gpt.RunOptions{Out: "out"})
//	...
//	summary, err := r.Train(ctx)
//
// Clip thresholds apply to mean gradients: in micro-batch mode the update
// direction is (1/K) Σ_j min(1, γ/|g_j|) g_j over the K micro-batch mean
// gradients g_j, in global mode min(1, γ/|ḡ|) ḡ with ḡ = (1/K) Σ_j g_j. With
// K identical micro-batches both equal one batch clipped to γ. nanoGPT's
// loop (and so the paper's MB-Clip-SGD) backpropagates loss/K, so its
// micro-batch gradients are g_j/K; clipping those to γ is our micro-batch
// mode with threshold K·γ. Global mode is the same in both conventions.
//
// See README.md in this directory for the commands, the nanoGPT quality
// check and the experiment's results.
package gpt
