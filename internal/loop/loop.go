// Package loop drives long training runs: it calls a step function for a
// range of steps, shows progress (steps/s, items/s, ETA) on a terminal,
// checkpoints on interrupt, and stops a run whose steps keep failing.
// The CIFAR and GPT trainers share it, so they behave alike.
package loop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// ErrInterrupted is returned by Run when its context was cancelled (Ctrl-C)
// and the run was checkpointed.
var ErrInterrupted = errors.New("interrupted; checkpoint saved")

// Loop describes a run of steps [from, Total).
type Loop struct {
	// Total is the number of steps of the whole run.
	Total int
	// Step performs step i. bad reports that the step made no update
	// because its gradient was not finite, or that every sample of it was
	// non-finite; an error stops the run.
	Step func(ctx context.Context, i int) (bad bool, err error)
	// After, if set, runs after every step that did not fail, with the
	// number of completed steps (evaluation, logging, periodic checkpoints).
	After func(done int) error
	// Save writes a checkpoint after done completed steps; it is called
	// when the run is interrupted or stopped for bad steps.
	Save func(done int) error
	// MaxBadSteps stops the run with an error after that many consecutive
	// bad steps (0: never).
	MaxBadSteps int
	// Progress, if set, receives a progress line about once a second.
	Progress io.Writer
	// Label prefixes progress lines, e.g. "ps-clip-sgd".
	Label string
	// ItemsPerStep and ItemUnit, if set, add a throughput such as "812 img/s".
	ItemsPerStep int
	ItemUnit     string
	// Describe, if set, adds run-specific text (epoch, loss) to progress lines.
	Describe func(done int) string
}

// Run executes steps from to Total-1. When ctx is cancelled it saves a
// checkpoint after the step in flight and returns ErrInterrupted.
func (l *Loop) Run(ctx context.Context, from int) error {
	start := time.Now()
	last := start
	bad := 0
	for i := from; i < l.Total; i++ {
		if ctx.Err() != nil {
			return l.stop(i, ErrInterrupted)
		}
		b, err := l.Step(ctx, i)
		if err != nil {
			return err
		}
		if b {
			bad++
			if l.MaxBadSteps > 0 && bad >= l.MaxBadSteps {
				return l.stop(i+1, fmt.Errorf("%d consecutive steps had a non-finite gradient or only non-finite samples (last: step %d); stopped", bad, i+1))
			}
		} else {
			bad = 0
		}
		if l.After != nil {
			if err := l.After(i + 1); err != nil {
				return err
			}
		}
		if now := time.Now(); l.Progress != nil && (now.Sub(last) >= time.Second || i+1 == l.Total) {
			last = now
			l.report(i+1-from, i+1, now.Sub(start))
		}
	}
	return nil
}

func (l *Loop) stop(done int, why error) error {
	if l.Save != nil {
		if err := l.Save(done); err != nil {
			return fmt.Errorf("%w (and the checkpoint failed: %v)", why, err)
		}
	}
	return why
}

func (l *Loop) report(ran, done int, elapsed time.Duration) {
	rate := float64(ran) / elapsed.Seconds()
	line := fmt.Sprintf("step %d/%d  %.2f steps/s", done, l.Total, rate)
	if l.ItemsPerStep > 0 {
		line += fmt.Sprintf("  %.0f %s/s", rate*float64(l.ItemsPerStep), l.ItemUnit)
	}
	if rate > 0 && done < l.Total {
		eta := time.Duration(float64(l.Total-done) / rate * float64(time.Second))
		line += "  ETA " + eta.Round(time.Second).String()
	}
	if l.Describe != nil {
		line += "  " + l.Describe(done)
	}
	if l.Label != "" {
		line = l.Label + ": " + line
	}
	fmt.Fprintln(l.Progress, line)
}
