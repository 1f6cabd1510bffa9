package main

import (
	"flag"
	"fmt"
	"github.com/psclip/psclip/train"
	"io"
	"slices"
	"strings"

	"github.com/psclip/psclip/data/text"
	"github.com/psclip/psclip/dist"
	"github.com/psclip/psclip/experiments/gpt"
)

func init() {
	register(&command{
		name:  "train gpt",
		short: "train a nanoGPT-style GPT with gradient accumulation and global, micro-batch or per-sample clipping",
		run:   runTrainGPT,
		flags: gptFieldFlags,
		ranks: true,
	})
}

// gptFlags binds the flags that "train gpt" and "experiment gpt" share to a
// configuration, whose current values are the defaults.
func gptFlags(fs *flag.FlagSet, c *gpt.Config, d *gpt.DataSpec) {
	fs.IntVar(&c.NLayer, "n-layer", c.NLayer, "transformer blocks")
	fs.IntVar(&c.NHead, "n-head", c.NHead, "attention heads (must divide --n-embd)")
	fs.IntVar(&c.NEmbd, "n-embd", c.NEmbd, "embedding width")
	fs.IntVar(&c.BlockSize, "block-size", c.BlockSize, "context length in tokens")
	fs.IntVar(&c.VocabSize, "vocab-size", c.VocabSize, "model vocabulary, ≥ the corpus's (0: the corpus's; 50304 for --data)")
	fs.Float64Var(&c.Dropout, "dropout", c.Dropout, "dropout probability")
	fs.BoolVar(&c.Bias, "bias", c.Bias, "biases in linear and layer-norm layers")
	fs.BoolVar(&c.ExactGELU, "exact-gelu", c.ExactGELU, "the erf GELU of today's nanoGPT (torch.nn.GELU()) instead of GPT-2's tanh approximation")
	fs.Int("batch", c.MicroBatch*c.Accum, "sequences per step (B = M·K): give --batch with one of --micro-batch and --accum, which sets the other")
	fs.IntVar(&c.MicroBatch, "micro-batch", c.MicroBatch, "sequences per micro-batch (M; with poisson sampling the most a micro-batch holds)")
	fs.IntVar(&c.Accum, "accum", c.Accum, "micro-batches accumulated per step (K)")
	fs.IntVar(&c.Steps, "steps", c.Steps, "optimizer steps")
	fs.IntVar(&c.Warmup, "warmup", c.Warmup, "linear warm-up steps before the cosine decay")
	fs.IntVar(&c.DecaySteps, "decay-steps", c.DecaySteps, "the step at which the cosine decay reaches --min-lr, which holds after it (0: --steps; nanoGPT's lr_decay_iters)")
	fs.Float64Var(&c.WeightDecay, "weight-decay", c.WeightDecay, "AdamW decoupled weight decay (parameters with ≥ 2 dimensions)")
	fs.Float64Var(&c.Beta1, "beta1", c.Beta1, "AdamW β1")
	fs.Float64Var(&c.Beta2, "beta2", c.Beta2, "AdamW β2")
	fs.Float64Var(&c.Eps, "eps", c.Eps, "AdamW ε")
	fs.Float64Var(&c.Clip, "clip", c.Clip, "clipping threshold γ (see --clip-convention)")
	if c.ClipConvention == "" {
		c.ClipConvention = gpt.ConventionNanoGPT
	}
	fs.StringVar((*string)(&c.ClipConvention), "clip-convention", string(c.ClipConvention),
		"micro-batch mode: what --clip bounds, nanogpt (each micro-batch's share g_j/K of the accumulated gradient, as nanoGPT and the paper) or mean (each micro-batch's mean gradient g_j)")
	fs.Float64Var(&c.Corrupt, "corrupt", c.Corrupt, "corrupt a share F of the training sequences: exactly round(F·n) of each step's n = M·K sequences (0 ≤ F < 1; validation text stays clean)")
	if c.CorruptLayout == "" {
		c.CorruptLayout = gpt.LayoutScattered
	}
	if c.CorruptKind == "" {
		c.CorruptKind = gpt.KindRandom
	}
	fs.StringVar((*string)(&c.CorruptLayout), "corrupt-layout", string(c.CorruptLayout),
		"--corrupt: scattered (random sequences of the step) or clustered (consecutive sequences, the same ones at every --accum for the same M·K, so that whole micro-batches are corrupt)")
	fs.StringVar((*string)(&c.CorruptKind), "corrupt-kind", string(c.CorruptKind),
		"--corrupt: what a corrupted sequence holds: random (uniform tokens), shuffle (a clean sequence's tokens permuted) or repeat (one of its tokens repeated)")
	fs.IntVar(&c.EvalInterval, "eval-interval", c.EvalInterval, "steps between validation-loss estimates")
	fs.IntVar(&c.EvalIters, "eval-iters", c.EvalIters, "validation batches per estimate")
	fs.IntVar(&c.LogInterval, "log-interval", c.LogInterval, "steps between log.jsonl step records")
	fs.IntVar(&c.CkptInterval, "ckpt-interval", c.CkptInterval, "steps between checkpoints (0: only at the end and on Ctrl-C)")
	fs.IntVar(&c.MaxBadSteps, "max-bad-steps", c.MaxBadSteps, "stop after this many consecutive steps with non-finite gradients (0: never)")
	dataFlags(fs, d)
}

// corruptFlags finishes the corruption flags after parsing: without
// --corrupt, --corrupt-layout and --corrupt-kind are refused if given and
// their defaults cleared, since clean data reads neither.
func corruptFlags(fs *flag.FlagSet, c *gpt.Config) error {
	if c.Corrupt != 0 {
		return nil
	}
	for _, name := range []string{"corrupt-layout", "corrupt-kind"} {
		if flagSet(fs, name) {
			return usagef("--%s applies only with --corrupt > 0", name)
		}
	}
	c.CorruptLayout, c.CorruptKind = "", ""
	return nil
}

// trainGPTFlags are the flags of "train gpt" beyond gptFlags.
type trainGPTFlags struct {
	preset, out string
	targetEps   float64
	resume      bool
	restart     bool
	mode        string
	logNorms    bool
	memory      train.MemoryBudget
	loraTargets string
}

// psFields are per-sample mode's estimator settings beside the estimator,
// whose flags every training command spells the same way; --clip is every
// mode's.
var psFields = []string{"Alpha", "Beta", "Window", "TargetQuantile", "QuantileRate", "AutoClipR"}

// gptClipFields are the settings only some clip modes read
// (gpt.Config.Reads).
var gptClipFields = append([]string{"ClipConvention"}, cnnSpecFields...)

// gptBatch applies --batch, the sequences of a step, B = M·K, as train
// images reads it: with --micro-batch M it sets --accum to B/M, otherwise
// --micro-batch to B/K for --accum K (its default or the one given). The
// three given together must agree; B must be a multiple of the one it
// divides.
func gptBatch(fs *flag.FlagSet, c *gpt.Config) error {
	if !flagSet(fs, "batch") {
		return nil
	}
	b := fs.Lookup("batch").Value.(flag.Getter).Get().(int)
	m, k := flagSet(fs, "micro-batch"), flagSet(fs, "accum")
	switch {
	case b <= 0:
		return usagef("--batch %d: want > 0", b)
	case m && k && c.MicroBatch*c.Accum != b:
		return usagef("--batch %d is not --micro-batch %d × --accum %d", b, c.MicroBatch, c.Accum)
	case m && k:
	case m && (c.MicroBatch <= 0 || b%c.MicroBatch != 0):
		return usagef("--batch %d is not a multiple of --micro-batch %d", b, c.MicroBatch)
	case m:
		c.Accum = b / c.MicroBatch
	case c.Accum <= 0 || b%c.Accum != 0:
		return usagef("--batch %d is not a multiple of --accum %d", b, c.Accum)
	default:
		c.MicroBatch = b / c.Accum
	}
	return nil
}

// definePS defines per-sample mode's flags on fs, bound to c's estimator
// settings: --ps-estimator (default def), one of estimators, and the flags
// of psFields. mode is how the command selects per-sample mode, for the
// usage.
func definePS(fs *flag.FlagSet, c *gpt.Config, def, mode string, estimators []string) {
	fs.StringVar(&c.Estimator, "ps-estimator", def, mode+": the threshold, "+strings.Join(estimators, ", ")+
		" (ps-clip-sgd, the default: the constant --clip, or α·k^(1/β) with --alpha and --beta)")
	addSpecFlags(fs, &c.Spec, psFields, func(_, text string) string { return mode + ": " + text })
}

func defineTrainGPT(fs *flag.FlagSet, c *gpt.Config, d *gpt.DataSpec, f *trainGPTFlags) {
	gptFlags(fs, c, d)
	fs.Float64Var(&c.LR, "lr", c.LR, "peak learning rate")
	fs.Float64Var(&c.MinLR, "min-lr", c.MinLR, "final learning rate of the cosine decay (default: 10 % of --lr)")
	fs.StringVar(&f.mode, "clip-mode", string(c.ClipMode), "global (clip the accumulated gradient), micro-batch (MB-Clip), per-sample (PS-Clip) or none")
	definePS(fs, c, "ps-clip-sgd", "--clip-mode per-sample", gpt.PSEstimators)
	addSpecFlags(fs, &c.Spec, []string{"CountNoise", "NoiseMultiplier", "NoiseSeed"}, func(_, text string) string { return "--clip-mode per-sample --ps-estimator " + text })
	fs.Float64Var(&f.targetEps, "target-epsilon", f.targetEps, "dp-sgd: the ε to spend at --delta over the whole run; σ is chosen for it (RDP accountant) instead of --noise-multiplier")
	fs.Float64Var(&c.Delta, "delta", c.Delta, "dp-sgd: δ of the (ε, δ) guarantee for one record (a window of --block-size + 1 tokens), below 1/N (N records); ε is logged at every evaluation and in result.json")
	fs.StringVar(&c.Sampling, "sampling", c.Sampling, "training sequences: windows (at random offsets, nanoGPT's; the default but for dp-sgd) or poisson (the training text cut into N disjoint records of --block-size + 1 tokens, each joining a step with probability --micro-batch·--accum/N; dp-sgd's default and only for it)")
	fs.BoolVar(&c.ReleaseUnprotected, "release-unprotected", c.ReleaseUnprotected, "--clip-mode per-sample --ps-estimator "+releaseUsage)
	fs.BoolVar(&f.logNorms, "log-norms", f.logNorms, "--clip-mode per-sample: log every logged step's per-sample gradient norms (sample_norms), for psclip tail --from OUT/log.jsonl")
	definePerSampleMemory(fs, &f.memory)
	fs.Uint64Var(&c.Seed, "seed", c.Seed, "seed of the initialisation, data order and dropout")
	fs.StringVar(&c.Init, "init", c.Init, "fine-tune: start from the weights of a Hugging Face GPT-2 `directory` (config.json and model.safetensors), whose architecture the model takes; nothing is downloaded")
	fs.IntVar(&c.LoRARank, "lora-rank", c.LoRARank, "--init: fine-tune by LoRA at this rank (1 to the width): the checkpoint's weights frozen, low-rank adapters trained beside the --lora-targets of every block")
	fs.Float64Var(&c.LoRAAlpha, "lora-alpha", c.LoRAAlpha, "--lora-rank: LoRA's α, which scales the adapters' update by α/rank (default: the rank, a scale of 1)")
	fs.StringVar(&f.loraTargets, "lora-targets", "attn", "--lora-rank: the layers of every block to adapt, comma-separated: "+
		"attn (attn.c_attn: q, k and v), proj (attn.c_proj), fc (mlp.c_fc), mlp-proj (mlp.c_proj)")
	fs.Func("freeze", "freeze the parameters whose names match this `pattern` (Go's path.Match: * is any run of characters, e.g. transformer.wte.weight or 'transformer.h.0.*'): "+
		"no gradient, no per-sample work; repeat the flag for more patterns", func(p string) error {
		c.Freeze = append(c.Freeze, p)
		return nil
	})
	fs.StringVar(&f.preset, "preset", f.preset, "start from a named configuration: gpt2-124m (needs --data)")
	fs.StringVar(&f.out, "out", f.out, "output directory: log.jsonl and the checkpoint")
	fs.BoolVar(&f.resume, "resume", f.resume, "continue the run checkpointed in --out")
	fs.BoolVar(&f.restart, "restart", f.restart, restartUsage)
}

func runTrainGPT(fs *flag.FlagSet, args []string) error {
	c, corpus, f, err := setupTrainGPT(fs, args)
	// Under mpirun, a rank whose flags or corpus are bad must not leave
	// the others waiting: every rank ends with its error.
	if err := dist.AgreeError(world, err); err != nil {
		return err
	}
	run, err := gpt.New(c, corpus, gpt.RunOptions{Out: f.out, Resume: f.resume, Restart: f.restart, Progress: stderr, Label: "gpt " + string(c.ClipMode), LogNorms: f.logNorms, Comm: world, PerSampleMemory: f.memory})
	if err != nil {
		return err
	}
	ctx, stop := interruptContext()
	defer stop()
	s, err := run.Train(ctx)
	if err != nil {
		return err
	}
	clip := "no clipping"
	switch {
	case c.Adaptive():
		clip = fmt.Sprintf("clipped %.1f %% of sequences by %s", 100*s.ClippedFraction, c.Label())
	case c.ClipMode != gpt.ClipNone:
		clip = fmt.Sprintf("clipped %.1f %% at %v on mean gradients", 100*s.ClippedFraction, float64(s.ClipThreshold))
	}
	test := ""
	if s.FinalTestLoss != nil {
		test = fmt.Sprintf(", final test loss %.4f", float64(*s.FinalTestLoss))
	}
	full := fmt.Sprintf("%s: %d steps, final validation loss %.4f%s, %.1f min, %s, %d skipped steps; %s in %s",
		corpus.Name, s.Steps, float64(s.FinalValLoss), test, s.Seconds/60, clip, s.SkippedSteps, runFileNames, f.out)
	if !c.DPSGD() {
		fmt.Fprintln(stdout, full)
		return nil
	}
	// The validation text is the private corpus's: its loss is not
	// released ("psclip eval gpt" evaluates the model on public text).
	line := fmt.Sprintf("%s: %d steps, %.1f min; %s in %s", corpus.Name, s.Steps, s.Seconds/60, runFileNames, f.out)
	fmt.Fprintf(stdout, "privacy: ε = %.4g at δ = %g for one record of %d tokens (N = %d, q = %.4g; RDP accountant, Balle et al. 2020 conversion)\n",
		float64(*s.Epsilon), s.Delta, c.BlockSize+1, s.Records, s.SampleRate)
	return printRelease(stdout, run.Privacy(), s, line, full)
}

// setupTrainGPT reads the flags and the corpus of "train gpt".
func setupTrainGPT(fs *flag.FlagSet, args []string) (gpt.Config, *text.Corpus, trainGPTFlags, error) {
	c, d, f := gpt.Default(), gpt.DataSpec{}, trainGPTFlags{out: "out-gpt"}
	defineTrainGPT(fs, &c, &d, &f)
	if err := parse(fs, args); err != nil {
		return c, nil, f, err
	}
	if f.preset != "" {
		// Parse again over the preset's values, so that flags given
		// explicitly override the preset and the others take its values.
		p, err := gpt.Preset(f.preset)
		if err != nil {
			return c, nil, f, usagef("--preset: %v", err)
		}
		c, d, f = p, gpt.DataSpec{}, trainGPTFlags{out: "out-gpt"}
		again := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
		again.SetOutput(io.Discard)
		defineTrainGPT(again, &c, &d, &f)
		if err := parse(again, args); err != nil {
			return c, nil, f, err
		}
		if d.Dir == "" {
			return c, nil, f, usagef("--preset %s needs --data (a directory with nanoGPT's OpenWebText train.bin and val.bin)", f.preset)
		}
	}
	if !flagSet(fs, "min-lr") {
		c.MinLR = c.LR / 10
	}
	if c.Init != "" {
		if err := initFlags(fs, &c); err != nil {
			return c, nil, f, err
		}
	}
	if err := loraFlags(fs, &c, f.loraTargets); err != nil {
		return c, nil, f, err
	}
	if err := corruptFlags(fs, &c); err != nil {
		return c, nil, f, err
	}
	if err := gptBatch(fs, &c); err != nil {
		return c, nil, f, err
	}
	var err error
	if c.ClipMode, err = gpt.ParseClipMode(f.mode); err != nil {
		return c, nil, f, err
	}
	if c.ClipMode == gpt.ClipPerSample && !slices.Contains(gpt.PSEstimators, c.Estimator) {
		return c, nil, f, usagef("--ps-estimator %q: want one of %s", c.Estimator, strings.Join(gpt.PSEstimators, ", "))
	}
	// A flag the clip mode does not read is refused; the defaults of the
	// settings it does not read are cleared.
	if name := unreadFlag(fs, gptFieldFlags, gptClipFields, c.Reads); name != "" {
		return c, nil, f, usagef("--%s does not apply to --clip-mode %s (%s)", name, c.ClipMode, c.Label())
	}
	c = c.Trim()
	if f.logNorms && c.ClipMode != gpt.ClipPerSample {
		return c, nil, f, usagef("--log-norms needs --clip-mode per-sample, not %s", c.ClipMode)
	}
	if flagSet(fs, "persample-memory") && c.ClipMode != gpt.ClipPerSample {
		return c, nil, f, usagef("--persample-memory needs --clip-mode per-sample, not %s", c.ClipMode)
	}
	var corpus *text.Corpus
	if flagSet(fs, "target-epsilon") {
		if corpus, err = targetNoise(fs, d, &c, f.targetEps); err != nil {
			return c, nil, f, err
		}
	}
	if err := c.Validate(); err != nil {
		return c, nil, f, err
	}
	switch {
	case f.out == "":
		return c, nil, f, usagef("--out is empty")
	case f.resume && f.restart:
		return c, nil, f, usagef("--resume and --restart exclude each other")
	case world.Size() > c.Accum:
		return c, nil, f, usagef("--accum %d: %d ranks share a step's micro-batches, so it needs at least %d", c.Accum, world.Size(), world.Size())
	}
	if corpus != nil {
		return c, corpus, f, nil
	}
	corpus, err = corpusFor(d, &c)
	return c, corpus, f, err
}

// targetNoise sets c's noise multiplier to the σ that spends the ε of
// --target-epsilon over the run (gpt.NoiseMultiplier), and returns the
// corpus it loaded to count the records.
func targetNoise(fs *flag.FlagSet, d gpt.DataSpec, c *gpt.Config, eps float64) (*text.Corpus, error) {
	switch {
	case !c.DPSGD():
		return nil, usagef("--target-epsilon does not apply to %s", c.Label())
	case flagSet(fs, "noise-multiplier"):
		return nil, usagef("--target-epsilon and --noise-multiplier exclude each other: σ is chosen for the ε")
	}
	corpus, err := corpusFor(d, c)
	if err != nil {
		return nil, err
	}
	if c.NoiseMultiplier, err = gpt.NoiseMultiplier(*c, corpus, eps); err != nil {
		return nil, err
	}
	if world.Rank() == 0 {
		fmt.Fprintf(stderr, "dp-sgd: noise multiplier σ = %g for ε = %g at δ = %g\n", c.NoiseMultiplier, eps, c.Delta)
	}
	return corpus, nil
}

// flagSet reports whether the flag name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// initFlags gives the model the architecture of the --init checkpoint
// (gpt.Config.UseGPT2), refusing a model flag that sets another, and cuts
// the default block size to the checkpoint's positions.
func initFlags(fs *flag.FlagSet, c *gpt.Config) error {
	was := *c
	hf, err := c.UseGPT2(c.Init)
	if err != nil {
		return usagef("--init: %v", err)
	}
	for _, m := range []struct {
		flag      string
		was, init any
	}{
		{"n-layer", was.NLayer, c.NLayer}, {"n-head", was.NHead, c.NHead}, {"n-embd", was.NEmbd, c.NEmbd},
		{"vocab-size", was.VocabSize, c.VocabSize}, {"bias", was.Bias, c.Bias}, {"exact-gelu", was.ExactGELU, c.ExactGELU},
	} {
		if flagSet(fs, m.flag) && m.was != m.init {
			return usagef("--%s %v: the --init checkpoint %s has %v", m.flag, m.was, c.Init, m.init)
		}
	}
	if !flagSet(fs, "block-size") {
		c.BlockSize = min(c.BlockSize, hf.BlockSize)
	}
	return nil
}

// loraFlags finishes the LoRA flags after parsing: --lora-rank needs
// --init and a rank of at least 1; with it, --lora-alpha defaults to the
// rank and --lora-targets (a comma-separated list) is read; without it,
// neither applies.
func loraFlags(fs *flag.FlagSet, c *gpt.Config, targets string) error {
	if !flagSet(fs, "lora-rank") {
		for _, name := range []string{"lora-alpha", "lora-targets"} {
			if flagSet(fs, name) {
				return usagef("--%s applies only with --lora-rank", name)
			}
		}
		return nil
	}
	switch {
	case c.LoRARank < 1:
		return usagef("--lora-rank %d: want a rank from 1 to the width %d", c.LoRARank, c.NEmbd)
	case c.Init == "":
		return usagef("--lora-rank needs --init: LoRA adapts the weights of a pretrained GPT")
	}
	if !flagSet(fs, "lora-alpha") {
		c.LoRAAlpha = float64(c.LoRARank)
	}
	c.LoRATargets = strings.Split(targets, ",")
	return nil
}
