package train_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, lib, ok := strings.Cut(string(readme), "\n## Library\n")
	if !ok {
		t.Fatal("README.md has no Library section")
	}
	_, rest, ok := strings.Cut(lib, "```go\n")
	program, rest, ok2 := strings.Cut(rest, "```\n")
	_, prints, ok3 := strings.Cut(rest, "It prints\n\n")
	if !ok || !ok2 || !ok3 {
		t.Fatal("README.md's Library section lacks the program or its output")
	}
	var want []string
	for _, line := range strings.Split(prints, "\n") {
		if !strings.HasPrefix(line, "    ") {
			break
		}
		want = append(want, strings.TrimPrefix(line, "    "))
	}

	dir := t.TempDir()
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	mod := "module example\n\ngo 1.26\n\nrequire github.com/psclip/psclip v0.0.0\n\nreplace github.com/psclip/psclip => " + root + "\n"
	for name, data := range map[string]string{"main.go": program, "go.mod": mod, "go.sum": string(sum)} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(goCmd, "run", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go run of the README program: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != strings.Join(want, "\n") {
		t.Errorf("the README program prints\n%s\nthe README shows\n%s", got, strings.Join(want, "\n"))
	}
}
