package main

// fieldFlags maps the fields that the libraries' errors name
// (*setting.Error: estimator.Spec, the experiments' configurations) to the
// flags that set them, as most commands spell them; a command whose flag
// for a field differs says so in its command.flags.
var fieldFlags = map[string]string{
	// estimator.Spec
	"Estimator": "estimator", "Clip": "clip", "Alpha": "alpha", "Beta": "beta", "AutoAlpha": "alpha", "AutoBeta": "beta",
	"Window": "window", "TargetQuantile": "target-quantile", "QuantileRate": "quantile-rate", "CountNoise": "count-noise", "AutoClipR": "auto-clip-r",
	"NoiseMultiplier": "noise-multiplier", "NoiseSeed": "noise-seed",
	// cifar.Config, cifar.Experiment, cifar.RunOptions
	"LR": "lr", "Momentum": "momentum", "WeightDecay": "weight-decay", "Batch": "batch", "Epochs": "epochs",
	"EvalEvery": "eval-every", "WidthDiv": "width-div", "Dropout": "dropout", "Augment": "augment", "MaxBadSteps": "max-bad-steps",
	"Model": "model", "Features": "features", "AverageSteps": "average-steps", "Normalize": "normalize", "TrainSubset": "train-subset", "ValFraction": "val-fraction", "LabelNoise": "label-noise", "LabelNoiseKind": "label-noise-kind",
	"Sampling": "sampling", "Delta": "delta", "Epsilon": "target-epsilon", "ReleaseUnprotected": "release-unprotected",
	"LogNorms": "log-norms", "PerSampleMemory": "persample-memory", "Methods": "methods", "Seeds": "seeds", "GridAlphas": "grid-alphas", "GridBetas": "grid-betas",
	// gpt.Config, gpt.Experiment, gpt.DataSpec, models.GenerateOptions
	"NLayer": "n-layer", "NHead": "n-head", "NEmbd": "n-embd", "BlockSize": "block-size", "VocabSize": "vocab-size",
	"Bias": "bias", "ExactGELU": "exact-gelu", "Init": "init",
	"LoRARank": "lora-rank", "LoRAAlpha": "lora-alpha", "LoRATargets": "lora-targets", "Freeze": "freeze",
	"MicroBatch": "micro-batch", "Accum": "accum", "Steps": "steps", "MinLR": "min-lr", "Warmup": "warmup", "DecaySteps": "decay-steps",
	"Beta1": "beta1", "Beta2": "beta2", "Eps": "eps", "ClipMode": "clip-mode", "ClipConvention": "clip-convention",
	"EvalInterval": "eval-interval", "EvalIters": "eval-iters", "LogInterval": "log-interval", "CkptInterval": "ckpt-interval",
	"Corrupt": "corrupt", "CorruptLayout": "corrupt-layout", "CorruptKind": "corrupt-kind",
	"Settings": "settings", "GammaGrid": "gamma-grid", "GammaAt": "gamma-at", "KAt": "k-at", "GammaSeeds": "gamma-seeds", "Ks": "ks", "KMethods": "k-methods",
	"LRs": "lrs", "Modes": "clip-modes", "Text": "text", "Dir": "data", "Level": "vocab", "TestFraction": "test-fraction",
	"Tokens": "tokens", "Temperature": "temperature", "TopK": "top-k", "Prompt": "prompt",
	// quadratic.Config
	"P": "p", "T": "T", "N": "n", "Dim": "d", "Runs": "runs", "Eta": "eta",
}

// Per-command spellings that differ from fieldFlags.
var (
	// gptFieldFlags: per-sample mode's estimator is --ps-estimator.
	gptFieldFlags = map[string]string{"Estimator": "ps-estimator"}
	// quadraticFieldFlags: Clip-SGD's threshold is --gamma.
	quadraticFieldFlags = map[string]string{"Clip": "gamma"}
)

// flagOf returns the command's flag for a library field, or the field's
// own name if no flag sets it.
func (c *command) flagOf(field string) string {
	if f, ok := c.flags[field]; ok {
		return f
	}
	if f, ok := fieldFlags[field]; ok {
		return f
	}
	return field
}
