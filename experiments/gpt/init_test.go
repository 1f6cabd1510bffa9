package gpt

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/psclip/psclip/models"
	"github.com/psclip/psclip/run"
	"github.com/psclip/psclip/setting"
)

// tinyGPT2 is models' GPT-2-layout test checkpoint: 2 layers, 4 heads,
// width 32, 16 positions, 64 tokens.
const tinyGPT2 = "../../models/testdata/gpt2-tiny"

// initConfig is tinyConfig with the test checkpoint's architecture.
func initConfig(t *testing.T, dir string) Config {
	t.Helper()
	c := tinyConfig(ClipPerSample)
	if _, err := c.UseGPT2(dir); err != nil {
		t.Fatal(err)
	}
	c.BlockSize = 8
	return c
}

// A run with Init starts from the checkpoint's weights, which are part of
// its data identity.
func TestInitFromGPT2(t *testing.T) {
	corpus := testCorpus(t) // a character vocabulary well below 64
	cfg := initConfig(t, tinyGPT2)
	out := filepath.Join(t.TempDir(), "run")
	r, err := New(cfg, corpus, RunOptions{Out: out})
	if err != nil {
		t.Fatal(err)
	}
	want, err := models.ReadGPT2(tinyGPT2)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range r.model.Params() {
		if w := want.Params()[i].Value.Data[:len(p.Value.Data)]; !slices.Equal(p.Value.Data, w) {
			t.Errorf("%s is not the checkpoint's", p.Name)
		}
	}
	if _, err := r.Train(t.Context()); err != nil {
		t.Fatal(err)
	}

	// Resuming from a moved copy of the same weights is the same run; from
	// other weights it is refused.
	moved := filepath.Join(t.TempDir(), "gpt2")
	copyDir(t, tinyGPT2, moved)
	cfg.Init = moved
	r, err = New(cfg, corpus, RunOptions{Out: out, Resume: true})
	if err != nil {
		t.Fatalf("resume from a moved copy: %v", err)
	}
	r.Close()
	m, err := models.ReadGPT2(moved)
	if err != nil {
		t.Fatal(err)
	}
	m.Params()[0].Value.Data[0]++
	if err := models.WriteGPT2(moved, m); err != nil {
		t.Fatal(err)
	}
	var changed *run.DataChangedError
	if _, err := New(cfg, corpus, RunOptions{Out: out, Resume: true}); !errors.As(err, &changed) {
		t.Errorf("resume from other weights: %v, want a *run.DataChangedError", err)
	}
}

func TestInitRefusesAnotherModel(t *testing.T) {
	corpus := testCorpus(t)
	for _, c := range []struct {
		field string
		edit  func(*Config)
	}{
		{"NLayer", func(c *Config) { c.NLayer = 3 }},
		{"NHead", func(c *Config) { c.NHead = 2 }},
		{"VocabSize", func(c *Config) { c.VocabSize = 65 }},
		{"Bias", func(c *Config) { c.Bias = false }},
		{"ExactGELU", func(c *Config) { c.ExactGELU = true }},
		{"BlockSize", func(c *Config) { c.BlockSize = 17 }},
		{"Init", func(c *Config) { c.Init = t.TempDir() }},
		{"Init", func(c *Config) { // a weights file that is not safetensors
			c.Init = filepath.Join(t.TempDir(), "gpt2")
			copyDir(t, tinyGPT2, c.Init)
			if err := os.WriteFile(filepath.Join(c.Init, models.GPT2WeightsFile), []byte("not safetensors"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		cfg := initConfig(t, tinyGPT2)
		c.edit(&cfg)
		_, err := New(cfg, corpus, RunOptions{Out: filepath.Join(t.TempDir(), "run")})
		var se *setting.Error
		if !errors.As(err, &se) || se.Field != c.field {
			t.Errorf("%s changed: %v, want a *setting.Error for it", c.field, err)
		}
	}
}

// copyDir copies the regular files of src into a new directory dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
