package main

import (
	"bytes"
	"strings"
	"testing"
)

// runCLI runs psclip with args and returns the exit status and both outputs.
func runCLI(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestHelpListsEveryCommand(t *testing.T) {
	code, out, _ := runCLI("help")
	if code != 0 {
		t.Fatalf("psclip help exited %d", code)
	}
	for name := range commands {
		if !strings.Contains(out, name) {
			t.Errorf("psclip help does not list %q", name)
		}
	}
}

func TestEveryCommandHasHelp(t *testing.T) {
	for name := range commands {
		args := append(strings.Fields(name), "-h")
		code, out, errOut := runCLI(args...)
		if code != 0 || !strings.Contains(out, "Flags:") || errOut != "" {
			t.Errorf("psclip %s -h: exit %d, stdout %q, stderr %q", name, code, out, errOut)
		}
	}
}

func TestUnknownCommandIsUsageError(t *testing.T) {
	code, _, errOut := runCLI("no-such-command")
	if code != 2 || !strings.Contains(errOut, "unknown command") || strings.Count(errOut, "\n") != 1 {
		t.Fatalf("exit %d, stderr %q; want 2 and one line naming the unknown command", code, errOut)
	}
}

func TestUnknownFlagIsUsageError(t *testing.T) {
	for name := range commands {
		args := append(strings.Fields(name), "--no-such-flag")
		code, _, errOut := runCLI(args...)
		if code != 2 || !strings.Contains(errOut, "no-such-flag") || strings.Count(errOut, "\n") != 1 {
			t.Errorf("psclip %s --no-such-flag: exit %d, stderr %q; want 2 and one line", name, code, errOut)
		}
	}
}
