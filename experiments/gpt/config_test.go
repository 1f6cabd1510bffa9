package gpt

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/psclip/psclip/run"
)

func TestValidate(t *testing.T) {
	if c := Default(); c.Validate() != nil {
		t.Fatalf("Default: %v", c.Validate())
	}
	if c, err := Preset("gpt2-124m"); err != nil || c.Validate() != nil || c.TokensPerStep() != 8*64*1024 {
		t.Fatalf("gpt2-124m: %v %v, %d tokens a step", err, c.Validate(), c.TokensPerStep())
	}
	if _, err := Preset("gpt3"); err == nil {
		t.Error("unknown preset accepted")
	}
	for _, tc := range []struct {
		mutate func(*Config)
		flag   string
	}{
		{func(c *Config) { c.NLayer = 0 }, "--n-layer"},
		{func(c *Config) { c.NHead = 3 }, "--n-embd"},
		{func(c *Config) { c.BlockSize = -1 }, "--block-size"},
		{func(c *Config) { c.VocabSize = 1 << 17 }, "--vocab-size"},
		{func(c *Config) { c.Dropout = 1 }, "--dropout"},
		{func(c *Config) { c.MicroBatch = 0 }, "--micro-batch"},
		{func(c *Config) { c.Accum = 0 }, "--accum"},
		{func(c *Config) { c.Steps = 0 }, "--steps"},
		{func(c *Config) { c.LR = math.NaN() }, "--lr"},
		{func(c *Config) { c.MinLR = 2 * c.LR }, "--min-lr"},
		{func(c *Config) { c.Warmup = c.Steps + 1 }, "--warmup"},
		{func(c *Config) { c.WeightDecay = -0.1 }, "--weight-decay"},
		{func(c *Config) { c.Beta1 = 1 }, "--beta1"},
		{func(c *Config) { c.Beta2 = -0.5 }, "--beta2"},
		{func(c *Config) { c.Eps = 0 }, "--eps"},
		{func(c *Config) { c.ClipMode = "sometimes" }, "--clip-mode"},
		{func(c *Config) { c.Clip = 0 }, "--clip"},
		{func(c *Config) { c.ClipMode, c.Clip = ClipPerSample, -1 }, "--clip"},
		{func(c *Config) { c.Clip = math.Inf(1) }, "--clip"},
		{func(c *Config) { c.ClipMode, c.Accum, c.Clip = ClipMicroBatch, 8, math.MaxFloat64 }, "--clip"},
		{func(c *Config) { c.ClipConvention = "sum" }, "--clip-convention"},
		{func(c *Config) { c.ClipConvention = "" }, "--clip-convention"},
		{func(c *Config) { c.EvalIters = 0 }, "--eval-iters"},
		{func(c *Config) { c.CkptInterval = -1 }, "--ckpt-interval"},
		{func(c *Config) { c.MaxBadSteps = -1 }, "--max-bad-steps"},
		{func(c *Config) { c.ClipMode, c.PSEstimator = ClipPerSample, "ps-clip-fast" }, "--ps-estimator"},
		{func(c *Config) { c.PSEstimator = "ps-clip-auto" }, "--clip-mode per-sample"},
		{func(c *Config) { c.AutoBeta = true }, "--clip-mode per-sample"},
		{func(c *Config) { c.ClipMode, c.Beta = ClipPerSample, 2 }, "--alpha"},
		{func(c *Config) { c.ClipMode, c.Beta, c.Alpha = ClipPerSample, 2, math.NaN() }, "--alpha"},
		{func(c *Config) { c.ClipMode, c.Beta, c.AutoAlpha = ClipPerSample, math.Inf(1), true }, "--beta"},
		{func(c *Config) { c.ClipMode, c.Alpha = ClipPerSample, 1 }, "--alpha needs --beta"},
		{func(c *Config) { c.ClipMode, c.PSEstimator, c.AutoBeta = ClipPerSample, "ps-clip-auto", true }, "--ps-estimator ps-clip-sgd"},
		{func(c *Config) { c.ClipMode, c.PSEstimator, c.Window = ClipPerSample, "ps-clip-auto", 100 }, "window"},
		{func(c *Config) { c.ClipMode, c.Window = ClipPerSample, 1000 }, "--window"},
		{func(c *Config) { c.ClipMode, c.PSEstimator, c.TargetQuantile = ClipPerSample, "ps-clip-quantile", 1.5 }, "ps-clip-quantile"},
		{func(c *Config) { c.ClipMode, c.PSEstimator, c.Clip = ClipPerSample, "ps-clip-quantile", -1 }, "--clip"},
		{func(c *Config) { c.ClipMode, c.QuantileRate = ClipPerSample, 0.1 }, "--quantile-rate"},
		{func(c *Config) { c.ClipMode, c.PSEstimator, c.AutoClipR = ClipPerSample, "auto-clip", -1 }, "auto-clip"},
		{func(c *Config) { c.ClipMode, c.PSEstimator, c.AutoClipR = ClipPerSample, "ps-clip-auto", 0.1 }, "--auto-clip-r"},
	} {
		c := Default()
		tc.mutate(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.flag) {
			t.Errorf("%+v: error %v, want one naming %s", c, err, tc.flag)
		}
	}
	c := Default()
	c.ClipMode, c.Clip = ClipNone, 0
	if err := c.Validate(); err != nil {
		t.Errorf("no clipping needs no threshold: %v", err)
	}
	// The automatic thresholds read no --clip, so no value of it is wrong.
	for _, mutate := range []func(*Config){
		func(c *Config) { c.PSEstimator = "ps-clip-auto" },
		func(c *Config) { c.AutoAlpha, c.AutoBeta = true, true },
		func(c *Config) { c.AutoAlpha, c.Beta, c.Window = true, 2, 512 },
		func(c *Config) { c.Alpha, c.Beta = 0.5, 2 },
		func(c *Config) { c.PSEstimator, c.AutoClipR = "auto-clip", 0.1 },
	} {
		c := Default()
		c.ClipMode, c.Clip = ClipPerSample, 0
		mutate(&c)
		if err := c.Validate(); err != nil || c.ClipThreshold() != 0 || !c.Adaptive() {
			t.Errorf("%s: %v, threshold %v", c.PSMethod(), err, c.ClipThreshold())
		}
	}
}

func TestClipThreshold(t *testing.T) {
	for _, tc := range []struct {
		mode ClipMode
		conv ClipConvention
		want float64
	}{
		{ClipGlobal, ConventionNanoGPT, 0.5},
		{ClipGlobal, ConventionMean, 0.5},
		{ClipMicroBatch, ConventionNanoGPT, 8 * 0.5},
		{ClipMicroBatch, ConventionMean, 0.5},
		{ClipPerSample, ConventionNanoGPT, 0.5},
		{ClipPerSample, ConventionMean, 0.5},
		{ClipNone, ConventionNanoGPT, 0},
	} {
		c := Config{ClipMode: tc.mode, ClipConvention: tc.conv, Clip: 0.5, Accum: 8}
		if got := c.ClipThreshold(); got != tc.want {
			t.Errorf("%s, %s: threshold %v, want %v", tc.mode, tc.conv, got, tc.want)
		}
	}
}

func TestCheckCorpus(t *testing.T) {
	corpus := testCorpus(t) // about 18,000 train and 2,000 val characters
	c := tinyConfig(ClipGlobal)
	if err := c.CheckCorpus(corpus); err != nil {
		t.Fatal(err)
	}
	c.BlockSize = len(corpus.Val)
	if err := c.CheckCorpus(corpus); err == nil || !strings.Contains(err.Error(), "--block-size") {
		t.Errorf("block as long as the validation split: %v", err)
	}
	c = tinyConfig(ClipGlobal)
	c.VocabSize = corpus.Vocab.Size() - 1
	if err := c.CheckCorpus(corpus); err == nil {
		t.Error("a vocabulary smaller than the corpus's was accepted")
	}
}

func TestConfigMapRoundTrip(t *testing.T) {
	c, _ := Preset("gpt2-124m")
	c.Dropout, c.Clip = 0.1, 0.25
	var back Config
	err := run.DecodeConfig(run.ConfigMap(c), &back)
	if err != nil || back != c {
		t.Errorf("round trip: %+v, %v; want %+v", back, err, c)
	}
}

func TestFloatJSON(t *testing.T) {
	b, err := json.Marshal([]Float{1.5, Float(math.NaN()), Float(math.Inf(-1)), 1e-300})
	if err != nil || string(b) != "[1.5,null,null,1e-300]" {
		t.Fatalf("%s, %v", b, err)
	}
	var back []Float
	if err := json.Unmarshal(b, &back); err != nil || back[0] != 1.5 || !math.IsNaN(float64(back[1])) || back[3] != 1e-300 {
		t.Errorf("%v, %v", back, err)
	}
}
