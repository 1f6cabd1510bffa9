package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHighProbJSONAndFiles(t *testing.T) {
	dir := t.TempDir()
	args := []string{"highprob", "--runs", "50", "--T", "20", "--p", "1.5", "--tuned", "--json", "--out", dir}
	var code int
	var errOut string
	var out string
	code, out, errOut = runCLI(args...)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var res struct {
		Rows []map[string]any `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 3*9 {
		t.Fatalf("%d rows, want 27", len(res.Rows))
	}
	r := res.Rows[0]
	if r["p"] != 1.5 || r["method"] != "clip-sgd" || r["log_inv_delta"] != 1.0 || len(r) != 4 {
		t.Errorf("first row %v", r)
	}
	for _, f := range []string{"highprob.json", "highprob.png", "highprob.svg"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	var table string
	code, table, _ = runCLI(args[:len(args)-3]...)
	if code != 0 || !strings.Contains(table, "log(1/δ)=9") || !strings.Contains(table, "PS-Clip-SGD") {
		t.Errorf("table:\n%s", table)
	}
}
