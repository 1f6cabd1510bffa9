package gpt

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/psclip/psclip/checkpoint"
	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/run"
	"github.com/psclip/psclip/setting"
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
		field  string
	}{
		{func(c *Config) { c.NLayer = 0 }, "NLayer"},
		{func(c *Config) { c.NHead = 3 }, "NHead"},
		{func(c *Config) { c.BlockSize = -1 }, "BlockSize"},
		{func(c *Config) { c.VocabSize = 1 << 17 }, "VocabSize"},
		{func(c *Config) { c.Dropout = 1 }, "Dropout"},
		{func(c *Config) { c.MicroBatch = 0 }, "MicroBatch"},
		{func(c *Config) { c.Accum = 0 }, "Accum"},
		{func(c *Config) { c.Steps = 0 }, "Steps"},
		{func(c *Config) { c.LR = math.NaN() }, "LR"},
		// Issue 13: the learning rate is a positive normal float32.
		{func(c *Config) { c.LR = 1e39 }, "LR"},
		{func(c *Config) { c.LR, c.MinLR = 1e-320, 0 }, "LR"},
		{func(c *Config) { c.MinLR = 2 * c.LR }, "MinLR"},
		{func(c *Config) { c.Warmup = c.Steps + 1 }, "Warmup"},
		{func(c *Config) { c.WeightDecay = -0.1 }, "WeightDecay"},
		{func(c *Config) { c.Beta1 = 1 }, "Beta1"},
		{func(c *Config) { c.Beta2 = -0.5 }, "Beta2"},
		{func(c *Config) { c.Eps = 0 }, "Eps"},
		{func(c *Config) { c.Eps = 1e-46 }, "Eps"},
		{func(c *Config) { c.ClipMode = "sometimes" }, "ClipMode"},
		{func(c *Config) { c.Clip = 0 }, "Clip"},
		{func(c *Config) { c.ClipMode, c.Clip = ClipPerSample, -1 }, "Clip"},
		{func(c *Config) { c.Clip = math.Inf(1) }, "Clip"},
		{func(c *Config) { c.Clip = 1e39 }, "Clip"},
		{func(c *Config) { c.ClipMode, c.Accum, c.Clip = ClipMicroBatch, 8, 1e38 }, "Clip"},
		{func(c *Config) { c.ClipMode, c.ClipConvention = ClipMicroBatch, "sum" }, "ClipConvention"},
		// Issue 13: settings the clip mode does not read are refused.
		{func(c *Config) { c.ClipConvention = ConventionNanoGPT }, "ClipConvention"},
		{func(c *Config) { c.ClipMode = ClipNone }, "Clip"},
		{func(c *Config) { c.EvalIters = 0 }, "EvalIters"},
		{func(c *Config) { c.CkptInterval = -1 }, "CkptInterval"},
		{func(c *Config) { c.MaxBadSteps = -1 }, "MaxBadSteps"},
		{func(c *Config) { c.ClipMode, c.Estimator = ClipPerSample, "ps-clip-fast" }, "Estimator"},
		{func(c *Config) { c.ClipMode, c.Estimator = ClipPerSample, "sgd" }, "Estimator"},
		{func(c *Config) { c.Estimator = "ps-clip-auto" }, "Estimator"},
		{func(c *Config) { c.AutoBeta = true }, "AutoBeta"},
		{func(c *Config) { c.ClipMode, c.Clip, c.Beta = ClipPerSample, 0, 2 }, "Alpha"},
		{func(c *Config) { c.ClipMode, c.Clip, c.Beta, c.Alpha = ClipPerSample, 0, 2, math.NaN() }, "Alpha"},
		{func(c *Config) { c.ClipMode, c.Clip, c.Beta, c.AutoAlpha = ClipPerSample, 0, math.Inf(1), true }, "Beta"},
		{func(c *Config) { c.ClipMode, c.Alpha = ClipPerSample, 1 }, "Alpha"},
		{func(c *Config) { c.ClipMode, c.Clip, c.Estimator, c.AutoBeta = ClipPerSample, 0, "ps-clip-auto", true }, "AutoBeta"},
		{func(c *Config) { c.ClipMode, c.Clip, c.Estimator, c.Window = ClipPerSample, 0, "ps-clip-auto", 100 }, "Window"},
		{func(c *Config) { c.ClipMode, c.Window = ClipPerSample, 1000 }, "Window"},
		{func(c *Config) { c.ClipMode, c.Estimator, c.TargetQuantile = ClipPerSample, "ps-clip-quantile", 1.5 }, "TargetQuantile"},
		{func(c *Config) { c.ClipMode, c.Estimator, c.Clip = ClipPerSample, "ps-clip-quantile", -1 }, "Clip"},
		{func(c *Config) { c.ClipMode, c.QuantileRate = ClipPerSample, 0.1 }, "QuantileRate"},
		{func(c *Config) { c.ClipMode, c.Clip, c.Estimator, c.AutoClipR = ClipPerSample, 0, "auto-clip", -1 }, "AutoClipR"},
		{func(c *Config) { c.ClipMode, c.Clip, c.Estimator, c.AutoClipR = ClipPerSample, 0, "ps-clip-auto", 0.1 }, "AutoClipR"},
		// Issue 13: per-sample mode's estimators read no Clip.
		{func(c *Config) { c.ClipMode, c.Estimator = ClipPerSample, "ps-clip-auto" }, "Clip"},
	} {
		c := Default()
		tc.mutate(&c)
		err := c.Validate()
		var se *setting.Error
		if !errors.As(err, &se) || se.Field != tc.field {
			t.Errorf("%+v: error %v, want a *setting.Error for %s", c, err, tc.field)
		}
	}
	c := Default()
	c.ClipMode, c.Clip = ClipNone, 0
	if err := c.Validate(); err != nil {
		t.Errorf("no clipping needs no threshold: %v", err)
	}
	// The automatic thresholds read no Clip.
	for _, mutate := range []func(*Config){
		func(c *Config) { c.Estimator = "ps-clip-auto" },
		func(c *Config) { c.AutoAlpha, c.AutoBeta = true, true },
		func(c *Config) { c.AutoAlpha, c.Beta, c.Window = true, 2, 512 },
		func(c *Config) { c.Alpha, c.Beta = 0.5, 2 },
		func(c *Config) { c.Estimator, c.AutoClipR = "auto-clip", 0.1 },
	} {
		c := Default()
		c.ClipMode, c.Clip = ClipPerSample, 0
		mutate(&c)
		if err := c.Validate(); err != nil || c.ClipThreshold() != 0 || !c.Adaptive() {
			t.Errorf("%s: %v, threshold %v", c.Label(), err, c.ClipThreshold())
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
		c := Config{ClipMode: tc.mode, ClipConvention: tc.conv, Spec: estimator.Spec{Clip: 0.5}, Accum: 8}
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
	if err := c.CheckCorpus(corpus); err == nil || !strings.Contains(err.Error(), "BlockSize") {
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
	c.Init, c.LoRARank, c.LoRAAlpha, c.LoRATargets, c.Freeze = "gpt2", 8, 16, []string{"attn", "fc"}, []string{"transformer.h.0.*"}
	var back Config
	err := run.DecodeConfig(run.ConfigMap(c), &back)
	if err != nil || !reflect.DeepEqual(back, c) {
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

// The configuration maps of runs made before Config embedded
// estimator.Spec, written by that version of train gpt, match
// what train gpt builds today up to the settings the clip mode does not
// read (Config.Unread), and a setting that changed is still refused.
func TestOlderCheckpointConfigs(t *testing.T) {
	const before = `{"n_layer":4,"n_head":4,"n_embd":128,"block_size":64,"vocab_size":0,"dropout":0,"bias":false,"exact_gelu":false,"micro_batch":12,"accum":1,"steps":2000,"lr":0.001,"min_lr":0.0001,"warmup":100,"weight_decay":0.1,"beta1":0.9,"beta2":0.95,"eps":1e-8,"clip_mode":"MODE","clip":1,"clip_convention":"nanogpt","ps_estimator":"ps-clip-sgd","eval_interval":250,"eval_iters":20,"log_interval":1,"ckpt_interval":250,"max_bad_steps":10,"seed":1337}`
	for _, mode := range ClipModes {
		var raw map[string]json.RawMessage
		if err := json.Unmarshal([]byte(strings.Replace(before, "MODE", string(mode), 1)), &raw); err != nil {
			t.Fatal(err)
		}
		old := map[string]string{}
		for k, v := range raw {
			old[k] = string(v)
		}
		// What train gpt builds from the same flags today.
		c := Default()
		c.ClipMode, c.Estimator, c.ClipConvention = mode, "ps-clip-sgd", ConventionNanoGPT
		c = c.Trim()
		if err := c.Validate(); err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		meta := checkpoint.Meta{Config: old}
		if err := meta.CheckConfig(run.ConfigMap(c), append(c.Unread(), mayDiffer...)...); err != nil {
			t.Errorf("%s: %v", mode, err)
		}
		c.LR = 2e-3
		if err := meta.CheckConfig(run.ConfigMap(c), append(c.Unread(), mayDiffer...)...); err == nil {
			t.Errorf("%s: another learning rate resumed", mode)
		}
		var back Config
		err := run.DecodeConfig(run.ConfigMap(c), &back)
		if err != nil || !reflect.DeepEqual(back, c) {
			t.Errorf("%s: configuration map round trip %+v, %v; want %+v", mode, back, err, c)
		}
	}
}
