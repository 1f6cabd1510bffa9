package images

import "testing"

// An absurd noise multiplier ends a dp-sgd run with an error, not a
// finished run: σ = 1e30 sends the weights to ~1e27 in a step, after
// which every sample's loss is non-finite and each step is the noise
// alone; ten such steps in a row (MaxBadSteps) stop the run.
func TestDPSGDAbsurdNoise(t *testing.T) {
	d := testData(t)
	c := dpConfig(7)
	c.NoiseMultiplier, c.Epochs = 1e30, 3
	s, err := trainRun(t, c, d, RunOptions{Out: t.TempDir()})
	if err == nil {
		t.Fatalf("σ = 1e30 finished (test loss %v): want the run stopped with an error", s.TestLoss)
	}
}
