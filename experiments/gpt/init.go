package gpt

import (
	"bytes"
	"fmt"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/psclip/psclip/internal/regfile"
	"github.com/psclip/psclip/models"
	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/run"
	"github.com/psclip/psclip/safetensors"
	"github.com/psclip/psclip/setting"
)

// UseGPT2 sets Init to the Hugging Face GPT-2 directory dir and the
// model's architecture to its config.json's (models.ReadGPT2Config):
// layers, heads, width, vocabulary, biases and GELU. BlockSize and Dropout
// are left as they are. It returns the checkpoint's configuration, whose
// BlockSize is its number of positions.
func (c *Config) UseGPT2(dir string) (models.GPTConfig, error) {
	m, err := models.ReadGPT2Config(filepath.Join(dir, models.GPT2ConfigFile))
	if err != nil {
		return m, err
	}
	c.Init = dir
	c.NLayer, c.NHead, c.NEmbd, c.VocabSize, c.Bias, c.ExactGELU = m.NLayer, m.NHead, m.NEmbd, m.VocabSize, m.Bias, m.ExactGELU
	return m, nil
}

// initialise checks that Init's checkpoint has the model's architecture,
// sets the model's weights from it and returns the SHA-256 of its weights
// file.
func (c *Config) initialise(m *models.GPT) (string, error) {
	hf, err := models.ReadGPT2Config(filepath.Join(c.Init, models.GPT2ConfigFile))
	if err != nil {
		return "", setting.Errorf("Init", c.Init, "a Hugging Face GPT-2 directory (%v)", err)
	}
	mc := m.Config()
	for _, f := range []struct {
		field     string
		have, cpt any
	}{
		{"NLayer", mc.NLayer, hf.NLayer}, {"NHead", mc.NHead, hf.NHead}, {"NEmbd", mc.NEmbd, hf.NEmbd},
		{"VocabSize", mc.VocabSize, hf.VocabSize}, {"Bias", mc.Bias, hf.Bias}, {"ExactGELU", mc.ExactGELU, hf.ExactGELU},
	} {
		if f.have != f.cpt {
			return "", setting.Errorf(f.field, f.have, "the initial checkpoint's %v (%s)", f.cpt, c.Init)
		}
	}
	if mc.BlockSize > hf.BlockSize {
		return "", setting.Errorf("BlockSize", mc.BlockSize, "at most the initial checkpoint's %d positions (%s)", hf.BlockSize, c.Init)
	}
	b, err := readWeights(m, filepath.Join(c.Init, models.GPT2WeightsFile))
	if err != nil {
		return "", setting.Errorf("Init", c.Init, "a Hugging Face GPT-2 directory (%v)", err)
	}
	return run.Hash(b), nil
}

// readWeights imports the GPT-2 weights file path into m and returns its
// bytes.
func readWeights(m *models.GPT, path string) ([]byte, error) {
	f, size, err := regfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, size)
	if _, err := f.ReadAt(b, 0); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	st, err := safetensors.Read(bytes.NewReader(b), size)
	if err == nil {
		err = m.ImportGPT2(st)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

// tune adapts m by LoRA (LoRARank > 0) and freezes the parameters that
// Freeze's patterns match, each of which must match one; a parameter must
// be left to train.
func (c *Config) tune(m *models.GPT) error {
	if c.LoRARank > 0 {
		if err := m.AdaptLoRA(c.lora(), c.Seed); err != nil {
			return err
		}
	}
	for _, pat := range c.Freeze {
		matched := false
		for _, p := range m.Params() {
			if ok, _ := path.Match(pat, p.Name); ok {
				p.Frozen, matched = true, true
			}
		}
		if !matched {
			return setting.Errorf("Freeze", strconv.Quote(pat), "a pattern that matches a parameter name of the model (e.g. transformer.wte.weight, transformer.h.0.*)")
		}
	}
	if len(nn.Trainable(m.Params())) == 0 {
		return setting.Errorf("Freeze", strings.Join(c.Freeze, ","), "patterns that leave a parameter to train")
	}
	return nil
}
