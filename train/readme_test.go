package train_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/psclip/psclip/internal/readme"
)

// README.md's Library section is a program that a user copies into a
// module of their own: this test does exactly that (the program text, a
// go.mod that replaces psclip with this checkout), runs it, and compares its
// output with the one the README shows: it trains to full accuracy.
func TestREADMELibrary(t *testing.T) {
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
	program, want, err := readme.Program(string(text), "Library")
	if err != nil {
		t.Fatal(err)
	}
	got, err := readme.Run(goCmd, root, t.TempDir(), program)
	if err != nil {
		t.Fatalf("go run of the README program: %v", err)
	}
	if got != strings.Join(want, "\n") {
		t.Errorf("the README program prints\n%s\nthe README shows\n%s", got, strings.Join(want, "\n"))
	}
}
