package main

import (
	"errors"
	"flag"

	"github.com/psclip/psclip/setting"

	"github.com/psclip/psclip/train"
)

// persampleMemoryUsage is the --persample-memory flag's usage.
const persampleMemoryUsage = "per-sample clipping: the memory its per-sample gradients may take: a ratio to the plain step's memory as measured on the model (1.3x, the default), auto (each layer's own rule, about 1.1× a plain step's memory), none (ghost norms only) or a size (512MiB, 2GB); layers materialise where that saves the most time a byte"

// memoryBudget is a train.MemoryBudget as a flag.Value.
type memoryBudget struct{ b *train.MemoryBudget }

func (m memoryBudget) String() string {
	if m.b == nil {
		return train.MemoryBudget{}.String()
	}
	return m.b.String()
}

func (m memoryBudget) Set(s string) error {
	b, err := train.ParseMemoryBudget(s)
	var se *setting.Error
	if errors.As(err, &se) {
		return errors.New("want " + se.Want) // flag names the flag and the value
	}
	if err != nil {
		return err
	}
	*m.b = b
	return nil
}

// definePerSampleMemory defines --persample-memory on fs, bound to b.
func definePerSampleMemory(fs *flag.FlagSet, b *train.MemoryBudget) {
	fs.Var(memoryBudget{b}, "persample-memory", persampleMemoryUsage)
}
