// Command update rewrites the generated tables of README.md and docs/*.md
// from their templates and the evidence files (package readme). Run it as
// go generate ./internal/readme, from anywhere in the repository.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/psclip/psclip/internal/readme"
)

func main() {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err == nil {
		err = readme.Update(strings.TrimSpace(string(out)))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "update:", err)
		os.Exit(1)
	}
}
