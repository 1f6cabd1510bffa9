package run

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/psclip/psclip/dist"
	"github.com/psclip/psclip/internal/loop"
)

// onRanks runs f on every rank of a Group of n, each in its own goroutine,
// and returns what each returned.
func onRanks(n int, f func(c dist.Comm) error) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for _, c := range dist.Group(n) {
		wg.Go(func() { errs[c.Rank()] = f(c) })
	}
	wg.Wait()
	return errs
}

// toyOnRank trains a toy run on rank c, interrupted on rank interrupt
// (if ≥ 0) after step stop, and returns its error and final weight.
func toyOnRank(t *testing.T, c dist.Comm, cfg toyConfig, data Data, o Options, interrupt, stop int) (float32, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if c.Rank() == interrupt {
		o.AfterStep = func(done int) {
			if done == stop {
				cancel()
			}
		}
	}
	o.Comm = c
	m, err := newToy(t, cfg, data, o)
	if err != nil {
		return 0, err
	}
	err = m.train(ctx)
	return m.w.Value.Data[0], err
}

// The ranks of a data-parallel run: rank 0 alone writes; an interrupt on
// one rank stops every rank after the same step, with one checkpoint, from
// which one process finishes the uninterrupted run's weights, log and
// result.
func TestRanksInterruptAndResume(t *testing.T) {
	cfg := toyConfig{Steps: 8}
	whole, parts := t.TempDir(), t.TempDir()
	want := trainToy(t, cfg, Options{Out: whole}, 0)
	ws := make([]float32, 3)
	errs := onRanks(3, func(c dist.Comm) error {
		w, err := toyOnRank(t, c, cfg, toyData, Options{Out: parts}, 2, 5)
		ws[c.Rank()] = w
		return err
	})
	for r, err := range errs {
		if !errors.Is(err, loop.ErrInterrupted) || ws[r] != ws[0] {
			t.Errorf("rank %d: %v, w %v (rank 0's %v): want every rank interrupted at the same step", r, err, ws[r], ws[0])
		}
	}
	got := trainToy(t, cfg, Options{Out: parts, Resume: true}, 0)
	if got.seen != 5 || got.w.Value.Data[0] != want.w.Value.Data[0] {
		t.Errorf("resumed in one process: %d kept lines, w %v; want 5 and %v", got.seen, got.w.Value.Data[0], want.w.Value.Data[0])
	}
	for _, f := range []string{LogFile, ResultFile} {
		a, _ := os.ReadFile(filepath.Join(whole, f))
		b, _ := os.ReadFile(filepath.Join(parts, f))
		if string(a) != string(b) {
			t.Errorf("%s of the run on ranks, resumed:\n%s\nuninterrupted:\n%s", f, b, a)
		}
	}
}

// A failure on one rank, where only that rank can see it, ends every rank
// with the same message: rank 0's directory that holds a run, rank 1's
// other data.
func TestRanksAgreeOnFailures(t *testing.T) {
	cfg := toyConfig{Steps: 4}
	taken := t.TempDir()
	trainToy(t, cfg, Options{Out: taken}, 0)
	other := Data{Source: "elsewhere", SHA256: map[string]string{"train": Hash([]byte("other"))}}
	for _, tc := range []struct {
		name string
		out  string
		data func(rank int) Data
		want string
	}{
		{"a run in the directory", taken, func(int) Data { return toyData }, "rank 0: " + (&ExistsError{taken, runFiles}).Error()},
		{"other data on rank 1", t.TempDir(), func(r int) Data {
			if r == 1 {
				return other
			}
			return toyData
		}, "rank 1: the data differs from rank 0's"},
	} {
		errs := onRanks(3, func(c dist.Comm) error {
			_, err := toyOnRank(t, c, cfg, tc.data(c.Rank()), Options{Out: tc.out}, -1, 0)
			return err
		})
		for r, err := range errs {
			if err == nil || err.Error() != tc.want {
				t.Errorf("%s: rank %d: %v, want %q", tc.name, r, err, tc.want)
			}
		}
		if ee := (*ExistsError)(nil); errors.As(errs[0], &ee) != (tc.out == taken) {
			t.Errorf("%s: rank 0's error %v: errors.As finds an *ExistsError: %v", tc.name, errs[0], ee != nil)
		}
	}
}

// Issue 26: ranks that differ in how they use the run directory (another
// directory, a resume or a restart on one rank only, norms logged on one)
// are refused on every rank alike, before anything is written: a fresh
// directory stays empty, not even a lock file.
func TestRanksDifferInOptions(t *testing.T) {
	cfg := toyConfig{Steps: 4}
	for _, tc := range []struct {
		name  string
		rank1 func(o *Options)
		want  string
	}{
		{"another --out", func(o *Options) { o.Out = filepath.Join(o.Out, "elsewhere") }, "rank 1: the output directory differs from rank 0's"},
		{"--resume on rank 1", func(o *Options) { o.Resume = true }, "rank 1: the start (fresh, resumed or restarted) differs from rank 0's"},
		{"--restart on rank 1", func(o *Options) { o.Restart = true }, "rank 1: the start (fresh, resumed or restarted) differs from rank 0's"},
		{"norms on rank 1", func(o *Options) { o.LogNorms = true }, "rank 1: the logging of per-sample norms differs from rank 0's"},
	} {
		dir := t.TempDir()
		errs := onRanks(2, func(c dist.Comm) error {
			o := Options{Out: dir}
			if c.Rank() == 1 {
				tc.rank1(&o)
			}
			_, err := toyOnRank(t, c, cfg, toyData, o, -1, 0)
			return err
		})
		for r, err := range errs {
			if err == nil || err.Error() != tc.want {
				t.Errorf("%s: rank %d: %v, want %q", tc.name, r, err, tc.want)
			}
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("%s: the directory holds %v, want nothing", tc.name, entries)
		}
	}
}

// Every rank ends a run alike whether or not its last step is one the
// trainer checkpoints at (the toy's every third): no rank is left waiting in
// a collective operation the others skipped.
func TestRanksFinish(t *testing.T) {
	for _, steps := range []int{8, 9} {
		ws, out := make([]float32, 2), t.TempDir()
		errs := onRanks(2, func(c dist.Comm) error {
			w, err := toyOnRank(t, c, toyConfig{Steps: steps}, toyData, Options{Out: out}, -1, 0)
			ws[c.Rank()] = w
			return err
		})
		for r, err := range errs {
			if err != nil || ws[r] != ws[0] {
				t.Errorf("%d steps: rank %d: %v, w %v (rank 0's %v)", steps, r, err, ws[r], ws[0])
			}
		}
	}
}
