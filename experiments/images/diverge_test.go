package images

import (
	"errors"
	"testing"

	"github.com/psclip/psclip/setting"
)

// An absurd noise multiplier ends a dp-sgd run with an error, not a
// finished run: σ = 1e30 sends the weights to ~1e27 in a step, after
// which every sample's loss is non-finite and each step is the noise
// alone; ten such steps in a row (MaxBadSteps) stop the run. A σ whose
// per-step privacy loss float64 cannot represent is refused before the
// run starts, naming the field.
func TestDPSGDAbsurdNoise(t *testing.T) {
	d := testData(t)
	c := dpConfig(7)
	c.NoiseMultiplier, c.Epochs = 1e30, 3
	s, err := trainRun(t, c, d, RunOptions{Out: t.TempDir()})
	if err == nil {
		t.Fatalf("σ = 1e30 finished (test loss %v): want the run stopped with an error", s.TestLoss)
	}
	c.NoiseMultiplier = 1e200
	_, err = New(c, d, RunOptions{})
	var se *setting.Error
	if !errors.As(err, &se) || se.Field != "NoiseMultiplier" {
		t.Errorf("σ = 1e200: %v, want a *setting.Error naming NoiseMultiplier", err)
	}
}
