package readme

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Program returns the Go program of README.md's section "## <section>"
// (its first ```go block) and the lines shown after the block's "It
// prints" paragraph, indented four spaces, without the indentation. readme
// is README.md's text.
func Program(readme, section string) (program string, prints []string, err error) {
	_, sec, ok := strings.Cut(readme, "\n## "+section+"\n")
	if !ok {
		return "", nil, errors.New("README.md has no section " + section)
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	_, rest, ok := strings.Cut(sec, "```go\n")
	program, rest, ok2 := strings.Cut(rest, "```\n")
	_, out, ok3 := strings.Cut(rest, "It prints\n\n")
	if !ok || !ok2 || !ok3 {
		return "", nil, errors.New("README.md's section " + section + " lacks the program or its output")
	}
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "    ") {
			break
		}
		prints = append(prints, strings.TrimPrefix(line, "    "))
	}
	return program, prints, nil
}

// Run runs program as a user would: as the main package of a module of its
// own in a temporary directory dir, requiring psclip replaced by the
// checkout at root (with root's go.sum), and returns its trimmed output.
func Run(goCmd, root, dir, program string) (string, error) {
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		return "", err
	}
	mod := "module example\n\ngo 1.26\n\nrequire github.com/psclip/psclip v0.0.0\n\nreplace github.com/psclip/psclip => " + root + "\n"
	for name, data := range map[string]string{"main.go": program, "go.mod": mod, "go.sum": string(sum)} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			return "", err
		}
	}
	cmd := exec.Command(goCmd, "run", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", errors.Join(err, errors.New(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}
