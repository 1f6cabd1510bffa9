package checkpoint_test

import (
	"errors"
	"fmt"
	"io/fs"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/psclip/psclip/checkpoint"
	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/optim"
)

// A run that checkpoints and another that resumes from it.
func Example() {
	dir, err := os.MkdirTemp("", "run")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "ckpt.safetensors")
	config := map[string]string{"lr": "0.1", "momentum": "0.9"}

	newRun := func() ([]*nn.Param, *optim.SGD, *rand.PCG) {
		w := nn.NewParam("fc.weight", 2, 2)
		opt, err := optim.NewSGD([]*nn.Param{w}, optim.SGDConfig{LR: 0.1, Momentum: 0.9})
		if err != nil {
			log.Fatal(err)
		}
		return []*nn.Param{w}, opt, rand.NewPCG(1, 2)
	}

	// The first run trains a little and saves.
	params, opt, pcg := newRun()
	rng := rand.New(pcg)
	for range 5 {
		for i := range params[0].Grad.Data {
			params[0].Grad.Data[i] = float32(rng.NormFloat64())
		}
		opt.Step()
	}
	meta := checkpoint.Meta{Step: 5, Config: config}
	if err := meta.SetRNG("data", pcg); err != nil {
		log.Fatal(err)
	}
	if err := checkpoint.Save(path, meta, params, opt); err != nil {
		log.Fatal(err)
	}

	// The second run resumes.
	params2, opt2, pcg2 := newRun()
	ck, err := checkpoint.Load(path)
	if errors.Is(err, fs.ErrNotExist) {
		fmt.Println("no checkpoint: starting afresh")
		return
	} else if err != nil {
		log.Fatal(err)
	}
	if w := ck.Warning(); w != "" {
		fmt.Fprintln(os.Stderr, w)
	}
	if err := ck.CheckConfig(config); err != nil {
		log.Fatal(err)
	}
	if err := ck.Restore(params2, opt2); err != nil {
		log.Fatal(err)
	}
	if err := ck.RestoreRNG("data", pcg2); err != nil {
		log.Fatal(err)
	}
	fmt.Println("resumed at step", ck.Step, "from", filepath.Base(ck.Path))
	fmt.Println("same weights:", fmt.Sprint(params[0].Value.Data) == fmt.Sprint(params2[0].Value.Data))
	fmt.Println("same optimizer steps:", opt.State().Steps == opt2.State().Steps)
	fmt.Println("same random stream:", pcg.Uint64() == pcg2.Uint64())
	// Output:
	// resumed at step 5 from ckpt.safetensors
	// same weights: true
	// same optimizer steps: true
	// same random stream: true
}
