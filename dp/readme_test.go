package dp_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/psclip/psclip/internal/readme"
)

// README.md's Differential privacy section shows a main function that,
// put into the Library section's program in place of its own (and the
// estimator import replaced by data/dataset and dp, as the section says),
// trains privately to a target ε: this test builds exactly that program
// in a module of its own, runs it, and compares its output with the one
// the README shows.
func TestREADMEPrivate(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	library, _, err := readme.Program(string(text), "Library")
	if err != nil {
		t.Fatal(err)
	}
	main, want, err := readme.Program(string(text), "Differential privacy")
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok := strings.Cut(library, "\nfunc main() {\n")
	_, after, ok2 := strings.Cut(rest, "\n}\n")
	const est = "\t\"github.com/psclip/psclip/estimator\"\n"
	if !ok || !ok2 || !strings.Contains(before, est) {
		t.Fatal("the Library program has no main function or no estimator import")
	}
	before = strings.Replace(before, est, "\t\"github.com/psclip/psclip/data/dataset\"\n\t\"github.com/psclip/psclip/dp\"\n", 1)
	program := before + "\n" + main + after
	got, err := readme.Run(goCmd, root, t.TempDir(), program)
	if err != nil {
		t.Fatalf("go run of the README program: %v\n%s", err, program)
	}
	if got != strings.Join(want, "\n") {
		t.Errorf("the README program prints\n%s\nthe README shows\n%s", got, strings.Join(want, "\n"))
	}
}
