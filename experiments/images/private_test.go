package images

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/psclip/psclip/checkpoint"
	"github.com/psclip/psclip/dist"
	"github.com/psclip/psclip/internal/loop"
	"github.com/psclip/psclip/run"
)

// batches returns the training images of r's next n batches.
func batches(r *Run, n int) [][]int {
	var b [][]int
	for range n {
		r.it.Next()
		b = append(b, r.it.Indices())
	}
	return b
}

// Two private runs of the same configuration (the same Seed) draw
// different Poisson samples, from keys of crypto/rand, and are private;
// two runs with one fixed noise seed draw the same samples and are not
// private, because of the seed.
func TestPrivateRunsDrawSecretSamples(t *testing.T) {
	d := testData(t)
	draw := func(c Config) ([][]int, *run.Privacy) {
		r, err := New(c, d, RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		return batches(r, 3), r.Privacy()
	}
	a, pa := draw(dpConfig(0))
	b, pb := draw(dpConfig(0))
	if slices.EqualFunc(a, b, slices.Equal) {
		t.Error("two private runs of one configuration draw the same batches")
	}
	if !pa.Private() || !pb.Private() || !pa.Record().Private {
		t.Errorf("a private run is not private: %v", pa.NotPrivateBecause())
	}
	f, pf := draw(dpConfig(9))
	g, _ := draw(dpConfig(9))
	if !slices.EqualFunc(f, g, slices.Equal) {
		t.Error("two runs of one fixed noise seed draw different batches")
	}
	if pf.Private() || !slices.Equal(pf.NotPrivateBecause(), []string{run.BecauseFixedSeed}) {
		t.Errorf("a fixed-seed run: private %v because %v", pf.Private(), pf.NotPrivateBecause())
	}
}

// The ranks of a data-parallel private run draw the same Poisson samples:
// rank 0's key, shared over the communicator.
func TestRanksShareTheSecret(t *testing.T) {
	d := testData(t)
	const ranks = 2
	drawn := make([][][]int, ranks)
	errs := make([]error, ranks)
	var wg sync.WaitGroup
	for _, c := range dist.Group(ranks) {
		wg.Go(func() {
			cfg := dpConfig(0)
			r, err := New(cfg, d, RunOptions{Out: "", Comm: c})
			if errs[c.Rank()] = err; err != nil {
				return
			}
			defer r.Close()
			drawn[c.Rank()] = batches(r, 3)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(drawn[0], drawn[1], slices.Equal) {
		t.Errorf("rank 0 draws %v, rank 1 %v", drawn[0], drawn[1])
	}
}

// A private run interrupted in the middle of an epoch checkpoints no
// statistic of its records (no loss sums, no per-sample norms for the tail
// index, no clipped counts), and resumes; one that releases them
// checkpoints them.
func TestPrivateCheckpoint(t *testing.T) {
	d := testData(t)
	for _, c := range []Config{dpConfig(0), released(dpConfig(0))} {
		c.LabelNoise, c.LabelNoiseKind = 0.2, NoiseUniform
		dir := t.TempDir()
		ctx, cancel := context.WithCancel(context.Background())
		r, err := New(c, d, RunOptions{Out: dir, AfterStep: func(done int) {
			if done == 5 {
				cancel()
			}
		}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Train(ctx); !errors.Is(err, loop.ErrInterrupted) {
			t.Fatalf("interrupted run: %v", err)
		}
		cancel()
		l, err := checkpoint.Load(filepath.Join(dir, run.CheckpointFile))
		if err != nil {
			t.Fatal(err)
		}
		var st struct {
			Epoch map[string]any `json:"epoch_acc"`
		}
		if err := json.Unmarshal([]byte(l.Extra["state"]), &st); err != nil {
			t.Fatal(err)
		}
		_, norms := st.Epoch["tail_norms"]
		_, loss := st.Epoch["loss_sum"]
		_, clipped := st.Epoch["clipped"]
		if c.ReleaseUnprotected != (norms && loss && clipped) || c.ReleaseUnprotected != (len(st.Epoch) > 2) {
			t.Errorf("release %v: the checkpoint's epoch statistics are %v", c.ReleaseUnprotected, st.Epoch)
		}
		if _, err := trainRun(t, c, d, RunOptions{Out: dir, Resume: true}); err != nil {
			t.Fatal(err)
		}
	}
}
