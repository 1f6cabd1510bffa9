package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/psclip/psclip/internal/inputfile"
	runlayer "github.com/psclip/psclip/run"
)

// restartUsage is the usage of --restart, which every command that writes
// a run directory has.
const restartUsage = "start the run in --out over, discarding it (without --resume or --restart, a directory that holds a run is refused)"

// restartExperimentUsage is the usage of the experiment commands' --restart.
const restartExperimentUsage = "start every run of the experiment in --out over (without --resume or --restart, a directory that holds an experiment is refused)"

// interruptContext is cancelled by Ctrl-C (SIGINT), SIGTERM and SIGHUP (a
// closed terminal): a run then saves the step in flight and stops.
func interruptContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
}

// runErr says what the run layer's typed errors mean on the command line:
// which flags resolve them, and a usage error (exit status 2) where the
// invocation must change. Other errors pass unchanged.
func runErr(err error) error {
	var (
		exists  *runlayer.ExistsError
		notRes  *runlayer.NotResumableError
		data    *runlayer.DataChangedError
		config  *runlayer.ConfigChangedError
		kind    *runlayer.KindError
		res     *runlayer.ResourceError
		out     *runlayer.OutputError
		regular *inputfile.NotRegularError
	)
	switch {
	case err == nil:
		return nil
	case errors.As(err, &exists):
		return usagef("--out %s already holds a run (%s): continue it with --resume, or start it over with --restart",
			exists.Dir, strings.Join(exists.Files, ", "))
	case errors.As(err, &notRes):
		return usagef("--resume: %v; --restart starts it over", notRes)
	case errors.As(err, &data):
		return usagef("--resume: %v; --restart starts the run over on the new data", data)
	case errors.As(err, &config):
		return usagef("--resume: %v", config)
	case errors.As(err, &kind):
		return usagef("%v", kind)
	case errors.As(err, &res):
		return usagef("%v", res)
	case errors.As(err, &out):
		return usagef("--out %s %v", out.Path, out.Err)
	case errors.As(err, &regular):
		return usagef("%v", regular)
	}
	return err
}
