package loop

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

func TestRunAllStepsAndAfter(t *testing.T) {
	var steps, afters []int
	var progress bytes.Buffer
	l := Loop{
		Total:        5,
		Step:         func(_ context.Context, i int) (bool, error) { steps = append(steps, i); return false, nil },
		After:        func(done int) error { afters = append(afters, done); return nil },
		Progress:     &progress,
		ItemsPerStep: 64, ItemUnit: "img",
	}
	if err := l.Run(context.Background(), 2); err != nil {
		t.Fatal(err)
	}
	if got := steps; len(got) != 3 || got[0] != 2 || got[2] != 4 {
		t.Fatalf("steps = %v, want [2 3 4]", got)
	}
	if got := afters; len(got) != 3 || got[2] != 5 {
		t.Fatalf("after = %v, want [3 4 5]", got)
	}
	if !strings.Contains(progress.String(), "step 5/5") || !strings.Contains(progress.String(), "img/s") {
		t.Fatalf("final progress line missing: %q", progress.String())
	}
}

func TestInterruptSaves(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	saved := -1
	l := Loop{
		Total: 10,
		Step: func(_ context.Context, i int) (bool, error) {
			if i == 3 {
				cancel()
			}
			return false, nil
		},
		Save: func(done int) error { saved = done; return nil },
	}
	err := l.Run(ctx, 0)
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("err = %v, want ErrInterrupted", err)
	}
	if saved != 4 {
		t.Fatalf("saved after %d steps, want 4 (the step in flight completes)", saved)
	}
}

func TestMaxBadSteps(t *testing.T) {
	tests := []struct {
		name    string
		bad     func(i int) bool
		max     int
		wantErr bool
		saved   int
	}{
		{"never bad", func(int) bool { return false }, 3, false, -1},
		{"bad streaks shorter than the limit", func(i int) bool { return i%3 != 0 }, 3, false, -1},
		{"three in a row", func(i int) bool { return i >= 4 }, 3, true, 7},
		{"no limit", func(int) bool { return true }, 0, false, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			saved := -1
			l := Loop{
				Total:       10,
				Step:        func(_ context.Context, i int) (bool, error) { return tt.bad(i), nil },
				Save:        func(done int) error { saved = done; return nil },
				MaxBadSteps: tt.max,
			}
			err := l.Run(context.Background(), 0)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if saved != tt.saved {
				t.Fatalf("saved = %d, want %d", saved, tt.saved)
			}
		})
	}
}

func TestStepErrorStops(t *testing.T) {
	boom := errors.New("boom")
	n := 0
	l := Loop{Total: 10, Step: func(_ context.Context, i int) (bool, error) {
		n++
		if i == 2 {
			return false, boom
		}
		return false, nil
	}}
	if err := l.Run(context.Background(), 0); !errors.Is(err, boom) || n != 3 {
		t.Fatalf("err = %v after %d steps, want boom after 3", err, n)
	}
}
