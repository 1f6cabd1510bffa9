// Command psclip trains neural networks with per-sample gradient clipping and
// reproduces the experiments of "Robust and Fast Training via Per-Sample Clipping".
//
// Usage:
//
//	psclip <command> [flags]
//
// Run "psclip help" for the list of commands and "psclip <command> -h" for the
// flags of one command.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/psclip/psclip/checkpoint"
	"github.com/psclip/psclip/dist"
	"github.com/psclip/psclip/internal/loop"
	"github.com/psclip/psclip/setting"
)

// A command is one psclip subcommand. Each lives in its own file and adds
// itself to the table with register, so commands stay independent.
type command struct {
	name  string // may contain a space for nested commands: "train cifar"
	short string // one line for "psclip help"
	// run parses args with fs (already named and wired to stderr) and does
	// the work. A usage mistake is returned as a usageError or as one of
	// the libraries' input errors (see isUsage).
	run func(fs *flag.FlagSet, args []string) error
	// flags maps the fields of library errors to this command's flags
	// where they differ from fieldFlags (see flagOf).
	flags map[string]string
	// ranks says that the command runs as one job on the ranks of an MPI
	// job (world); the others refuse to start under mpirun with more than
	// one rank, where each rank would do all the work into the same files.
	ranks bool
}

var commands = map[string]*command{}

// stdout and stderr are where commands print results and progress. run
// points them at its arguments, so tests see exactly what a user would.
var stdout, stderr io.Writer = os.Stdout, os.Stderr

func register(c *command) {
	if _, dup := commands[c.name]; dup {
		panic("psclip: command registered twice: " + c.name)
	}
	commands[c.name] = c
}

// usageError marks a mistake in how psclip was invoked; it exits with status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usagef returns a usageError with a formatted message.
func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// usage marks err as a usage mistake: the failure of an input the command
// was given, such as a file a flag names.
func usage(err error) error { return usageError{err} }

// world is the job this process is a rank of: one process (dist.Local)
// unless main started as one of the ranks of an MPI job, in a build with
// the tag mpi.
var world dist.Comm = dist.Local{}

func main() {
	c, err := dist.Init()
	if err != nil {
		fmt.Fprintf(os.Stderr, "psclip: %v\n", err)
		if nb := (*dist.NotBuiltError)(nil); errors.As(err, &nb) {
			os.Exit(2) // the wrong binary for mpirun
		}
		os.Exit(1)
	}
	world = c
	var out io.Writer = os.Stdout
	if c.Rank() != 0 {
		out = io.Discard // rank 0 reports for the job
	}
	code := run(os.Args[1:], out, os.Stderr)
	if err := c.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "psclip: %v\n", err)
		code = max(code, 1)
	}
	os.Exit(code)
}

// run executes one psclip invocation and returns the process exit status:
// 0 on success, 1 when the work failed, 2 for a usage mistake, 128 plus the
// signal's number for a run a signal interrupted (after saving it).
func run(args []string, out, errOut io.Writer) int {
	stdout, stderr = out, errOut
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
		if len(args) > 1 && args[0] == "help" {
			return run(append(args[1:], "-h"), stdout, stderr)
		}
		printHelp(stdout)
		return 0
	}
	cmd, rest := lookup(args)
	if cmd == nil {
		fmt.Fprintf(stderr, "psclip: unknown command %q (run 'psclip help')\n", strings.Join(args[:min(len(args), 2)], " "))
		return 2
	}
	if world.Size() > 1 && !cmd.ranks {
		fmt.Fprintf(stderr, "psclip %s: runs in one process, not on the %d ranks of an MPI job (start it without mpirun)\n", cmd.name, world.Size())
		return 2
	}
	fs := flag.NewFlagSet("psclip "+cmd.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported once, below, on one line
	fs.Usage = func() {}
	err := cmd.run(fs, rest)
	var line string
	code := 1
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		fs.SetOutput(stdout)
		fmt.Fprintf(stdout, "psclip %s: %s\n\nFlags:\n", cmd.name, cmd.short)
		fs.PrintDefaults()
		return 0
	case isUsage(err):
		line, code = fmt.Sprintf("psclip %s: %s (see 'psclip %s -h')", cmd.name, cmd.message(err), cmd.name), 2
	case errors.Is(err, loop.ErrInterrupted):
		line, code = fmt.Sprintf("psclip %s: %s", cmd.name, cmd.message(err)), interruptedStatus()
	default:
		line = fmt.Sprintf("psclip %s: %s", cmd.name, cmd.message(err))
	}
	// On the ranks of a job, the error's type is known only where it
	// happened: every rank ends as that one does.
	line, code = dist.AgreeExit(world, err, line, code)
	fmt.Fprintln(stderr, line)
	return code
}

// message is err on one line in the command's words: a setting the
// libraries name by its field is named by its flag, the run layer's
// refusals name the flags that resolve them, and an interrupted run says
// how to continue.
func (c *command) message(err error) string {
	var se *setting.Error
	if errors.As(err, &se) {
		return oneLine(fmt.Errorf("--%s = %v, want %s", c.flagOf(se.Field), se.Value, se.Want))
	}
	if m, ok := runMessage(err); ok {
		return oneLine(errors.New(m))
	}
	if errors.Is(err, loop.ErrInterrupted) {
		return oneLine(err) + "; rerun with --resume to continue"
	}
	return oneLine(err)
}

// lookup finds the longest registered command name that prefixes args.
func lookup(args []string) (*command, []string) {
	if len(args) >= 2 {
		if c, ok := commands[args[0]+" "+args[1]]; ok {
			return c, args[2:]
		}
	}
	if c, ok := commands[args[0]]; ok {
		return c, args[1:]
	}
	return nil, nil
}

// isUsage reports, by the error's type, whether err comes from bad flags,
// arguments or input files: a usageError, an error of flag.FlagSet.Parse,
// a setting out of range (*setting.Error), a rank of a data-parallel run
// whose data or configuration differs from rank 0's (*dist.DifferError),
// a safetensors file given as a checkpoint that is none
// (*checkpoint.ForeignError),
// or a resume that does not fit its run directory (isRunUsage). Anything else, a damaged checkpoint
// included, is a failure of the work.
func isUsage(err error) bool {
	var (
		u  usageError
		pe flagParseError
		se *setting.Error
		ce *checkpoint.ConfigError
		fe *checkpoint.ForeignError // a safetensors file of another program
		de *dist.DifferError        // a rank's data or flags differ from rank 0's
	)
	return errors.As(err, &u) || errors.As(err, &pe) || errors.As(err, &se) || errors.As(err, &ce) || errors.As(err, &fe) || errors.As(err, &de) || isRunUsage(err)
}

// flagParseError wraps an error returned by flag.FlagSet.Parse.
type flagParseError struct{ err error }

func (e flagParseError) Error() string { return e.err.Error() }
func (e flagParseError) Unwrap() error { return e.err }

// parse parses args with fs and marks a failure as a usage error. Positional
// arguments are refused: every psclip input is a named flag.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return flagParseError{err}
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

func oneLine(err error) string {
	return strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", "; ")
}

func printHelp(w io.Writer) {
	fmt.Fprintln(w, "psclip: robust training under heavy-tailed gradient noise with per-sample clipping.")
	fmt.Fprintln(w, "\nUsage: psclip <command> [flags]   (psclip <command> -h for its flags)\n\nCommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	width := 0 // the longest name, so that two spaces always follow each
	for _, n := range names {
		width = max(width, len(n))
	}
	for _, n := range names {
		fmt.Fprintf(w, "  %-*s  %s\n", width, n, commands[n].short)
	}
}
