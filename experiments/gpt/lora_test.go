package gpt

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/psclip/psclip/checkpoint"
	"github.com/psclip/psclip/models"
	"github.com/psclip/psclip/run"
	"github.com/psclip/psclip/setting"
)

// loraConfig is initConfig fine-tuned by LoRA at rank 4 on every target.
func loraConfig(t *testing.T, mode ClipMode) Config {
	t.Helper()
	c := initConfig(t, tinyGPT2)
	c.ClipMode, c.Clip = mode, 0.5
	if mode == ClipPerSample {
		c.Estimator = "ps-clip-sgd"
	}
	c = c.Trim()
	c.LoRARank, c.LoRAAlpha, c.LoRATargets = 4, 8, models.LoRATargets
	return c
}

// A LoRA run trains only its adapters in every clip mode and with dp-sgd:
// the checkpoint's base weights are the initial checkpoint's bit for bit,
// the adapters moved, and the optimizer holds state for the adapters
// alone; an interrupted run resumes to the uninterrupted one's weights,
// optimizer state and log, bit for bit.
func TestLoRARun(t *testing.T) {
	corpus := testCorpus(t)
	init, err := models.ReadGPT2(tinyGPT2)
	if err != nil {
		t.Fatal(err)
	}
	dp := loraConfig(t, ClipPerSample)
	dp.Estimator, dp.NoiseMultiplier, dp.NoiseSeed, dp.Delta, dp.ReleaseUnprotected = "dp-sgd", 1.1, 3, 1e-5, true
	dp = dp.Trim()
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"global", loraConfig(t, ClipGlobal)},
		{"micro-batch", loraConfig(t, ClipMicroBatch)},
		{"per-sample", loraConfig(t, ClipPerSample)},
		{"dp-sgd", dp},
	} {
		t.Run(tc.name, func(t *testing.T) {
			whole, parts := t.TempDir(), t.TempDir()
			if _, err := trainRun(t, tc.cfg, corpus, RunOptions{Out: whole}); err != nil {
				t.Fatal(err)
			}
			l, err := checkpoint.Load(filepath.Join(whole, run.CheckpointFile))
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range init.Params() {
				got := l.Model[p.Name]
				if got == nil || !slices.Equal(got.Data, p.Value.Data[:len(got.Data)]) {
					t.Errorf("base weight %s changed", p.Name)
				}
			}
			adapters := 0
			for name, v := range l.Model {
				if strings.Contains(name, ".lora_") {
					adapters++
					if !slices.ContainsFunc(v.Data, func(x float32) bool { return x != 0 }) {
						t.Errorf("adapter %s is all zeros", name)
					}
				}
			}
			if want := 2 * len(models.LoRATargets) * tc.cfg.NLayer; adapters != want {
				t.Errorf("%d adapters in the checkpoint, want %d", adapters, want)
			}
			for name := range l.Optimizer.Tensors {
				if !strings.Contains(name, ".lora_") {
					t.Errorf("optimizer state %s of a frozen weight", name)
				}
			}
			interruptAt(t, tc.cfg, corpus, RunOptions{Out: parts}, 3)
			if _, err := trainRun(t, tc.cfg, corpus, RunOptions{Out: parts, Resume: true}); err != nil {
				t.Fatal(err)
			}
			sameCheckpoints(t, filepath.Join(whole, run.CheckpointFile), filepath.Join(parts, run.CheckpointFile))
			if a, b := logLosses(t, whole), logLosses(t, parts); a != b {
				t.Errorf("logs differ:\nuninterrupted %s\nresumed       %s", a, b)
			}
			// LoadModel rebuilds the adapted model.
			m, err := LoadModel(whole)
			if err != nil {
				t.Fatal(err)
			}
			if !m.Adapted() {
				t.Error("LoadModel of a LoRA run: no adapters")
			}
			for _, p := range m.Params() {
				if !slices.Equal(p.Value.Data, l.Model[p.Name].Data) {
					t.Errorf("LoadModel: %s is not the checkpoint's", p.Name)
				}
			}
		})
	}
}

// Freeze's patterns freeze what they match, in a run without LoRA too:
// the frozen parameters keep their initial values.
func TestFreeze(t *testing.T) {
	corpus := testCorpus(t)
	c := initConfig(t, tinyGPT2)
	c.Freeze = []string{"transformer.wte.weight", "transformer.h.0.*"}
	out := t.TempDir()
	if _, err := trainRun(t, c, corpus, RunOptions{Out: out}); err != nil {
		t.Fatal(err)
	}
	init, err := models.ReadGPT2(tinyGPT2)
	if err != nil {
		t.Fatal(err)
	}
	l, err := checkpoint.Load(filepath.Join(out, run.CheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range init.Params() {
		frozen := p.Name == "transformer.wte.weight" || strings.HasPrefix(p.Name, "transformer.h.0.")
		same := slices.Equal(l.Model[p.Name].Data, p.Value.Data[:len(l.Model[p.Name].Data)])
		if frozen != same {
			t.Errorf("%s: frozen %v, unchanged %v", p.Name, frozen, same)
		}
	}
}

// Bad LoRA and freezing settings are refused with a *setting.Error naming
// the field, before anything is written.
func TestLoRARefused(t *testing.T) {
	corpus := testCorpus(t)
	for _, tc := range []struct {
		name  string
		edit  func(*Config)
		field string
	}{
		{"no init", func(c *Config) { c.Init = "" }, "LoRARank"},
		{"negative rank", func(c *Config) { c.LoRARank = -1 }, "LoRARank"},
		{"rank above the width", func(c *Config) { c.LoRARank = 33 }, "LoRARank"},
		{"alpha", func(c *Config) { c.LoRAAlpha = -1 }, "LoRAAlpha"},
		{"unknown target", func(c *Config) { c.LoRATargets = []string{"attn", "q"} }, "LoRATargets"},
		{"no target", func(c *Config) { c.LoRATargets = nil }, "LoRATargets"},
		{"alpha without rank", func(c *Config) { c.LoRARank, c.LoRATargets = 0, nil }, "LoRAAlpha"},
		{"targets without rank", func(c *Config) { c.LoRARank, c.LoRAAlpha = 0, 0 }, "LoRATargets"},
		{"bad pattern", func(c *Config) { c.Freeze = []string{"transformer.h.[0"} }, "Freeze"},
		{"pattern matching nothing", func(c *Config) { c.Freeze = []string{"transformer.h.9.*"} }, "Freeze"},
		{"nothing left to train", func(c *Config) { c.Freeze = []string{"*lora*"} }, "Freeze"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := loraConfig(t, ClipPerSample)
			tc.edit(&c)
			out := filepath.Join(t.TempDir(), "run")
			r, err := New(c, corpus, RunOptions{Out: out})
			if err == nil {
				r.Close()
			}
			var se *setting.Error
			if !errors.As(err, &se) || se.Field != tc.field {
				t.Fatalf("error %v, want a *setting.Error for %s", err, tc.field)
			}
			if m, _ := filepath.Glob(filepath.Join(out, "*")); len(m) > 0 {
				t.Errorf("a refused run wrote %v", m)
			}
		})
	}
}
