package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/psclip/psclip/internal/regfile"
	runlayer "github.com/psclip/psclip/run"
)

// restartUsage is the usage of --restart, which every command that writes
// a run directory has.
const restartUsage = "start the run in --out over, discarding it (without --resume or --restart, a directory that holds a run is refused)"

// restartExperimentUsage is the usage of the experiment commands' --restart.
const restartExperimentUsage = "start every run of the experiment in --out over (without --resume or --restart, a directory that holds an experiment is refused)"

// experimentResume is the --resume, --restart and --gather of an
// experiment command.
type experimentResume struct {
	resume, restart bool
	gather          string
}

func (r *experimentResume) bind(fs *flag.FlagSet) {
	fs.BoolVar(&r.resume, "resume", r.resume, "reuse finished runs in --out and continue an interrupted one")
	fs.BoolVar(&r.restart, "restart", r.restart, restartExperimentUsage)
	fs.StringVar(&r.gather, "gather", r.gather, "comma-separated `directories` of this experiment's parts, run apart with the same flags but a share of its methods, seeds or learning rates: their runs are copied into --out (a new directory, or with --resume) and read back or continued, not trained again")
}

// check refuses --restart with --resume or --gather.
func (r experimentResume) check() error {
	switch {
	case r.resume && r.restart:
		return usagef("--resume and --restart exclude each other")
	case r.gather != "" && r.restart:
		return usagef("--gather and --restart exclude each other")
	}
	return nil
}

// options are the run options of the experiment in out.
func (r experimentResume) options(out string) runlayer.Options {
	o := runlayer.Options{Out: out, Resume: r.resume, Restart: r.restart, Progress: stderr}
	if r.gather != "" {
		o.Gather = strings.Split(r.gather, ",")
	}
	return o
}

// runFileNames lists the files a training command leaves in --out, for its
// last line.
var runFileNames = strings.Join([]string{runlayer.LogFile, runlayer.CheckpointFile, runlayer.ResultFile}, ", ")

// interruptContext is cancelled by Ctrl-C (SIGINT), SIGTERM and SIGHUP (a
// closed terminal): a run then saves the step in flight and stops, and
// psclip exits as shells expect of a process a signal ended
// (interruptedStatus).
func interruptContext() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		select {
		case s := <-ch:
			if n, ok := s.(syscall.Signal); ok {
				caught.Store(int32(n))
			}
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		cancel()
	}
}

// caught is the number of the signal that interrupted the run; 0 if none.
var caught atomic.Int32

// interruptedStatus is the exit status of a run a signal interrupted: 128
// plus the signal's number, as a shell reports a process the signal
// ended (130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP), although psclip
// saved the step in flight first. A rank of an MPI job that the signal did
// not reach stops with the others, as if by SIGINT.
func interruptedStatus() int {
	if n := caught.Load(); n > 0 {
		return 128 + int(n)
	}
	return 128 + int(syscall.SIGINT)
}

// forceUsage is the usage of --force, which every command that writes
// outputs outside a run directory has.
const forceUsage = "replace the files of an earlier output (without it, an output goes into a new or empty directory, or a new file; never into a run directory)"

// checkOutDir checks, before the work, that the output directory of --out
// (if set) can be created and written and is a fresh place, or, with
// force, one whose files the command may replace, and no run directory
// (runlayer.PrepareDir), so that no work is lost to an output that cannot
// be saved and no output replaces what the command did not make; it
// creates nothing.
func checkOutDir(dir string, force bool) error {
	if dir == "" {
		return nil
	}
	return outputError("out", runlayer.PrepareDir(dir, force))
}

// checkOutFile is checkOutDir for the output file of the flag name.
func checkOutFile(name, path string, force bool) error {
	if path == "" {
		return nil
	}
	return outputError(name, runlayer.PrepareFile(path, force))
}

// outputError says which flag's output err is about, and how to resolve
// it: a usage error, or nil for nil.
func outputError(name string, err error) error {
	var (
		ow *runlayer.OverwriteError
		dk *runlayer.DirKindError
		oe *runlayer.OutputError
	)
	switch {
	case errors.As(err, &ow) && len(ow.Files) == 0:
		return usagef("--%s %s exists: name a new file, or pass --force to replace it", name, ow.Path)
	case errors.As(err, &ow):
		return usagef("--%s %s is not empty (%s): name a new directory, or pass --force to replace its files", name, ow.Path, listed(ow.Files, 3))
	case errors.As(err, &dk):
		return usagef("--%s: %v", name, dk)
	case errors.As(err, &oe):
		return usagef("--%s %s %v", name, oe.Path, oe.Err)
	}
	return err
}

// listed joins the first n of names, and says how many more there are.
func listed(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}

// isRunUsage reports, by the error's type, whether err is one of the run
// layer's refusals that the invocation must change to resolve (exit status
// 2): a run directory that holds a run, a resume that does not fit the run
// directory (no run, a missing or foreign log, another configuration or
// data), a checkpoint of another command, a directory of another kind of
// run, of another owner or not psclip's, sizes that cannot fit, an output
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
		dirKind *runlayer.DirKindError
		owner   *runlayer.OwnerError
		foreign *runlayer.NotOwnedError
	)
	return errors.As(err, &exists) || errors.As(err, &notRes) || errors.As(err, &data) || errors.As(err, &config) ||
		errors.As(err, &kind) || errors.As(err, &res) || errors.As(err, &out) || errors.As(err, &regular) || errors.As(err, &dirKind) ||
		errors.As(err, &owner) || errors.As(err, &foreign)
}

// runMessage says what the run layer's errors mean on the command line:
// the flags that resolve them. ok is false for other errors.
func runMessage(err error) (msg string, ok bool) {
	var (
		exists  *runlayer.ExistsError
		notRes  *runlayer.NotResumableError
		data    *runlayer.DataChangedError
		config  *runlayer.ConfigChangedError
		out     *runlayer.OutputError
		kind    *runlayer.DirKindError
		owner   *runlayer.OwnerError
		foreign *runlayer.NotOwnedError
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
	case errors.As(err, &kind):
		return fmt.Sprintf("--out %v", kind), true
	case errors.As(err, &foreign):
		return fmt.Sprintf("--out %s holds files psclip did not make (%s): name a new or empty directory; psclip starts over or resumes only what it made",
			foreign.Dir, listed(foreign.Files, 3)), true
	case errors.As(err, &owner):
		return fmt.Sprintf("--out %v; resume or restart the experiment, or copy the run elsewhere", owner), true
	}
	return "", false
}
