package images

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/psclip/psclip/internal/loop"
	"github.com/psclip/psclip/run"
	"github.com/psclip/psclip/setting"
)

// TestAverageSteps checks tail averaging against the weights after each
// step, summed here: the run's sum is theirs over the last AverageSteps
// steps, bit for bit; averaging changes no weight; a run interrupted in
// the window and resumed averages the same; a private run writes the
// averaged figures; a window longer than the run is refused naming
// AverageSteps.
func TestAverageSteps(t *testing.T) {
	d := testData(t)
	c := tinyConfig("ps-clip-sgd")
	c.AverageSteps = 7 // 2 epochs of 12 steps: steps 18–24
	var sum []float64
	dir := t.TempDir()
	var r *Run
	r, err := New(c, d, RunOptions{Out: dir, AfterStep: func(done int) {
		if done <= 24-7 {
			return
		}
		i := 0
		for _, p := range r.model.Params() {
			for _, v := range p.Value.Data {
				if len(sum) <= i {
					sum = append(sum, 0)
				}
				sum[i] += float64(v)
				i++
			}
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := r.Train(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s.AvgSteps != 7 || s.AvgTestAcc == nil || !(*s.AvgTestAcc > 0) || len(r.st.AvgSum) != len(sum) {
		t.Fatalf("averaged %d steps, test accuracy %v; %d sums, want %d", s.AvgSteps, s.AvgTestAcc, len(r.st.AvgSum), len(sum))
	}
	for i := range sum {
		if sum[i] != r.st.AvgSum[i] {
			t.Fatalf("weight %d: sum %v, the steps' %v", i, r.st.AvgSum[i], sum[i])
		}
	}
	plain := c
	plain.AverageSteps = 0
	other := t.TempDir()
	if _, err := trainRun(t, plain, d, RunOptions{Out: other}); err != nil {
		t.Fatal(err)
	}
	sameCheckpoints(t, filepath.Join(dir, run.CheckpointFile), filepath.Join(other, run.CheckpointFile))

	parts := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ri, err := New(c, d, RunOptions{Out: parts, AfterStep: func(done int) {
		if done == 20 {
			cancel()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ri.Train(ctx); !errors.Is(err, loop.ErrInterrupted) {
		t.Fatalf("interrupted run: %v", err)
	}
	got, err := trainRun(t, c, d, RunOptions{Out: parts, Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if got.AvgSteps != 7 || *got.AvgTestAcc != *s.AvgTestAcc || *got.AvgTestLoss != *s.AvgTestLoss {
		t.Errorf("resumed: %d steps, test %v %v; uninterrupted %v %v", got.AvgSteps, *got.AvgTestAcc, *got.AvgTestLoss, *s.AvgTestAcc, *s.AvgTestLoss)
	}

	p := dpConfig(0)
	p.AverageSteps = 3
	pdir := t.TempDir()
	ps, err := trainRun(t, p, d, RunOptions{Out: pdir})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(pdir, run.ResultFile))
	if err != nil || ps.AvgSteps != 3 || !strings.Contains(string(b), `"avg_test_acc"`) || !strings.Contains(string(b), `"private": true`) {
		t.Errorf("private run: %d steps averaged; result.json (%v) without avg_test_acc or private:\n%.600s", ps.AvgSteps, err, b)
	}

	c.AverageSteps = 25
	_, err = New(c, d, RunOptions{})
	var se *setting.Error
	if !errors.As(err, &se) || se.Field != "AverageSteps" {
		t.Errorf("a window of 25 steps in a run of 24: %v, want a *setting.Error naming AverageSteps", err)
	}
}
