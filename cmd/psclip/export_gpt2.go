package main

import (
	"flag"
	"fmt"

	"github.com/psclip/psclip/models"
	runlayer "github.com/psclip/psclip/run"
)

func init() {
	register(&command{
		name:  "export gpt2",
		short: "write a GPT checkpoint as a Hugging Face GPT-2 directory (config.json, model.safetensors)",
		run:   runExportGPT2,
	})
}

func runExportGPT2(fs *flag.FlagSet, args []string) error {
	ckpt := fs.String("ckpt", "out-gpt", "checkpoint file, or a run directory holding "+runlayer.CheckpointFile+", of a GPT with biases (--bias, or trained from --init; a LoRA run's adapters are merged into the weights)")
	out := fs.String("out", "", "output `directory`, new or empty (created if needed): config.json and model.safetensors in GPT-2's names and layout")
	force := fs.Bool("force", false, forceUsage)
	if err := parse(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return usagef("--out is required")
	}
	m, err := loadGPT(*ckpt)
	if err != nil {
		return err
	}
	if !m.Config.Bias {
		return usagef("--ckpt %s: the GPT has no biases, and GPT-2's layout has them (train with --bias or --init)", *ckpt)
	}
	if err := checkOutDir(*out, *force); err != nil {
		return err
	}
	merged := ""
	if m.Adapted() {
		m.MergeLoRA()
		merged = ", its LoRA adapters merged into the weights"
	}
	if err := models.WriteGPT2(*out, m.GPT); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s: %s and %s, a GPT-2 of %d layers, width %d, %d positions, %d tokens (step %d of %s%s)\n",
		*out, models.GPT2ConfigFile, models.GPT2WeightsFile, m.Config.NLayer, m.Config.NEmbd, m.Config.BlockSize, m.Config.VocabSize, m.Step, *ckpt, merged)
	return nil
}
