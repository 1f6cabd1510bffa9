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
// Config.Clip is the threshold γ as the paper sets it (under the default
// Config.ClipConvention, nanogpt): global mode clips the accumulated
// gradient ḡ = (1/K) Σ_j g_j to γ, and micro-batch mode clips each
// micro-batch's share of it, g_j/K, to γ. nanoGPT's loop backpropagates
// loss/K, so g_j/K is the gradient the paper's MB-Clip-SGD clips. In mean
// gradients the direction is (1/K) Σ_j min(1, K·γ/|g_j|) g_j. Under the
// mean convention micro-batch mode clips each g_j to γ instead, a K times
// stronger clip. Per-sample mode clips each sequence's gradient to γ in
// both. Config.ClipThreshold is the threshold on mean gradients a run
// applies; the log's first record and the summaries carry it.
//
// Per-sample mode can instead clip to an adaptive threshold (the
// estimator.Spec that Config embeds: Estimator, Alpha and Beta or their
// automatic forms, …): PS-Clip-SGD's increasing α·k^(1/β), ps-clip-auto's α = σ̂,
// β = p̂ from a window of recent per-sample norms, ps-clip-quantile or
// auto-clip. A step's micro-batches are one batch to the estimator (see
// package train): k runs over the step's K·M sequences and the window fills
// K·M norms at a time. The estimator's state is saved in checkpoints, so resuming stays
// exact; the step records carry p̂, σ̂ (ps-clip-auto) or γ
// (ps-clip-quantile), and RunOptions.LogNorms adds the step's per-sample
// norms, the input of the tail command.
//
// Config.Corruption corrupts a share of the training sequences of every
// step (random tokens, shuffled or repeated ones; scattered over the step
// or clustered in whole micro-batches), drawn from the seed on its own
// stream so that the clean sequences are those of the clean run; the step
// records then score clipping as a detector of them (Detection).
// RunCorruptionStudy compares every clip mode on corrupted text over
// corruption settings, seeds and micro-batch counts, paired by seed against
// global clipping (CorruptionStudy, StudyResults), the library side of
// "psclip experiment gpt-corrupt".
//
// See README.md in this directory for the commands, the nanoGPT quality
// check and the experiment's results.
package gpt
