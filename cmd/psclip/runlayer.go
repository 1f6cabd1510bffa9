package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/psclip/psclip/internal/regfile"
	runlayer "github.com/psclip/psclip/run"
)

// restartUsage is the usage of --restart, which every command that writes
// a run directory has.
const restartUsage = "start the run in --out over, discarding it (without --resume or --restart, a directory that holds a run is refused)"

// restartExperimentUsage is the usage of the experiment commands' --restart.
const restartExperimentUsage = "start every run of the experiment in --out over (without --resume or --restart, a directory that holds an experiment is refused)"

// runFileNames lists the files a training command leaves in --out, for its
// last line.
var runFileNames = strings.Join([]string{runlayer.LogFile, runlayer.CheckpointFile, runlayer.ResultFile}, ", ")

// interruptContext is cancelled by Ctrl-C (SIGINT), SIGTERM and SIGHUP (a
// closed terminal): a run then saves the step in flight and stops.
func interruptContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
}

// checkOutDir checks, before the work, that the output directory of --out
// (if set) can be created and written (runlayer.PrepareDir), so that no
// work is lost to an output that cannot be saved; it creates nothing.
func checkOutDir(dir string) error {
	if dir == "" {
		return nil
	}
	return runlayer.PrepareDir(dir)
}

// isRunUsage reports, by the error's type, whether err is one of the run
// layer's refusals that the invocation must change to resolve (exit status
// 2): a run directory that holds a run, a resume that does not fit the run
// directory (no run, a missing or foreign log, another configuration or
// data), a checkpoint of another command, sizes that cannot fit, an output
// that cannot be written, an input that is not a regular file. A locked
// directory (another process) is a failure of the work.
func isRunUsage(err error) bool {
	var (
		exists  *runlayer.ExistsError
		notRes  *runlayer.NotResumableError
		data    *runlayer.DataChangedError
		config  *runlayer.ConfigChangedError
		kind    *runlayer.KindError
		res     *runlayer.ResourceError
		out     *runlayer.OutputError
		regular *regfile.NotRegularError
	)
	return errors.As(err, &exists) || errors.As(err, &notRes) || errors.As(err, &data) || errors.As(err, &config) ||
		errors.As(err, &kind) || errors.As(err, &res) || errors.As(err, &out) || errors.As(err, &regular)
}

// runMessage says what the run layer's errors mean on the command line:
// the flags that resolve them. ok is false for other errors.
func runMessage(err error) (msg string, ok bool) {
	var (
		exists *runlayer.ExistsError
		notRes *runlayer.NotResumableError
		data   *runlayer.DataChangedError
		config *runlayer.ConfigChangedError
		out    *runlayer.OutputError
	)
	switch {
	case errors.As(err, &exists):
		return fmt.Sprintf("--out %s already holds a run (%s): continue it with --resume, or start it over with --restart",
			exists.Dir, strings.Join(exists.Files, ", ")), true
	case errors.As(err, &notRes):
		return fmt.Sprintf("--resume: %v; --restart starts it over", notRes), true
	case errors.As(err, &data):
		return fmt.Sprintf("--resume: %v; --restart starts the run over on the new data", data), true
	case errors.As(err, &config):
		return fmt.Sprintf("--resume: %v", config), true
	case errors.As(err, &out):
		return fmt.Sprintf("--out %s %v", out.Path, out.Err), true
	}
	return "", false
}
