package main

import (
	"fmt"
	"os"
	"time"
)

// progressEvery is how often a progress line is written at most.
var progressEvery = time.Second

// progress writes lines of the form "label: 120/500 tokens" to stderr
// about once a second (progressEvery) while long work runs: the commands
// that are not training runs, which the run layer reports on, are never
// silent for long. A nil *progress writes nothing.
type progress struct {
	label, unit string
	total       int
	last        time.Time
}

func newProgress(label, unit string, total int) *progress {
	return &progress{label: label, unit: unit, total: total, last: time.Now()}
}

// update reports done of the total, if the last line is old enough.
func (p *progress) update(done int) {
	if p == nil || time.Since(p.last) < progressEvery {
		return
	}
	p.last = time.Now()
	fmt.Fprintf(stderr, "%s: %d/%d %s\n", p.label, done, p.total, p.unit)
}

// stdoutIsTerminal reports whether the results go to a terminal, where
// output streamed as it is made shows the progress itself.
func stdoutIsTerminal() bool {
	if stdout != os.Stdout {
		return false
	}
	fi, err := os.Stdout.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
