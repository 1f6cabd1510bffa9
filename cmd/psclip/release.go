package main

import (
	"fmt"
	"io"
	"strings"

	runlayer "github.com/psclip/psclip/run"
)

// releaseUsage is the usage of --release-unprotected, which every command
// that trains with dp-sgd has.
const releaseUsage = "dp-sgd: also write what a private run withholds (training loss and accuracy, validation figures, per-sample norms, clipped counts, batch sizes, --log-norms); every output then lists these fields as unprotected, and the run is NOT private"

// printRelease prints a dp-sgd run's last lines: line, which holds only
// what the run may release (what ε covers, or public data), unless it
// releases its unprotected statistics; then full, the command's usual
// line, and the keys of summary that ε does not cover. The run's
// privacy, and why it is not private, come last.
func printRelease(w io.Writer, p *runlayer.Privacy, summary any, line, full string) error {
	if !p.ReleaseUnprotected {
		fmt.Fprintln(w, line)
	} else {
		fmt.Fprintln(w, full)
		keys, err := runlayer.Unprotected(summary)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "unprotected (ε does not cover them): %s\n", strings.Join(keys, ", "))
	}
	if why := p.NotPrivateBecause(); len(why) > 0 {
		fmt.Fprintf(w, "private: false (%s)\n", strings.Join(why, "; "))
	} else {
		fmt.Fprintln(w, "private: true")
	}
	return nil
}
