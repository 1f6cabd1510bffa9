package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/psclip/psclip/data/bpe"
	"github.com/psclip/psclip/experiments/gpt"
	"github.com/psclip/psclip/models"
	runlayer "github.com/psclip/psclip/run"
)

func init() {
	register(&command{
		name:  "sample",
		short: "generate text from a GPT checkpoint written by 'psclip train gpt'",
		run:   runSample,
	})
}

func runSample(fs *flag.FlagSet, args []string) error {
	ckpt := fs.String("ckpt", "out-gpt", "checkpoint file, or a run directory holding "+runlayer.CheckpointFile)
	o := models.GenerateOptions{Tokens: 500, Temperature: 0.8, TopK: 200, Seed: 1337}
	fs.IntVar(&o.Tokens, "tokens", o.Tokens, "tokens to generate")
	fs.Float64Var(&o.Temperature, "temperature", o.Temperature, "divides the logits: < 1 is more conservative, > 1 more random")
	fs.IntVar(&o.TopK, "top-k", o.TopK, "sample among the K most likely tokens only (0: all)")
	fs.Uint64Var(&o.Seed, "seed", o.Seed, "seed of the sampling")
	prompt := fs.String("prompt", "\n", "text to continue")
	vocabDir := fs.String("vocab-dir", "", "a model trained on GPT-2 BPE token files (psclip data tokenize): the `directory` of its tokenizer files, which must be the ones the tokens were made with (default: $PSCLIP_GPT2_DIR or ~/.cache/psclip/gpt2)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := o.Check(); err != nil {
		return usage(err)
	}
	if *prompt == "" {
		return usagef("--prompt is empty")
	}
	m, err := loadGPT(*ckpt)
	if err != nil {
		return err
	}
	if err := useBPE(m, *vocabDir, flagSet(fs, "vocab-dir")); err != nil {
		return err
	}
	// The text streams out token by token, after the prompt, once the
	// checkpoint and the prompt have proved usable; unless it goes to a
	// terminal, where it shows itself, a progress line goes to stderr
	// about once a second: a long sample is never silent.
	var p *progress
	if !stdoutIsTerminal() {
		p = newProgress("sample", "tokens", o.Tokens)
	}
	done := 0
	var writeErr error // stdout's: a failure of the work, not bad input
	o.Each = func(t int32) error {
		s, err := m.Decode([]int32{t})
		if err != nil {
			return err
		}
		if done == 0 {
			s = *prompt + s
		}
		done++
		if _, writeErr = io.WriteString(stdout, s); writeErr != nil {
			return writeErr
		}
		p.update(done)
		return nil
	}
	if _, err := m.Sample(*prompt, o); err != nil {
		if writeErr != nil {
			return writeErr
		}
		return usage(err)
	}
	return nil
}

// loadGPT loads the GPT checkpoint that --ckpt names, reporting on stderr
// when it had to fall back to the previous one.
func loadGPT(ckpt string) (*gpt.Model, error) {
	m, err := gpt.LoadModel(ckpt)
	if errors.Is(err, os.ErrNotExist) {
		return nil, usagef("--ckpt %s: no checkpoint there", ckpt)
	}
	if err != nil {
		return nil, err
	}
	if m.Warning != "" {
		fmt.Fprintln(stderr, m.Warning)
	}
	return m, nil
}

// useBPE gives a model trained on BPE token files the tokenizer in dir
// (given: --vocab-dir was; default: bpe.DefaultDir), which must be the
// one its tokens were made with.
func useBPE(m *gpt.Model, dir string, given bool) error {
	switch {
	case m.Vocab != nil && given:
		return usagef("--vocab-dir: the model decodes with its own vocabulary")
	case m.Vocab != nil || m.Tokenizer == "" && !given:
		return nil
	case dir == "":
		var err error
		if dir, err = bpe.DefaultDir(); err != nil {
			return err
		}
	}
	t, err := bpe.Load(dir)
	if err != nil {
		return usagef("--vocab-dir: %v", err)
	}
	if err := m.UseBPE(t); err != nil {
		return usagef("--vocab-dir %s: %v", dir, err)
	}
	return nil
}
