package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestQuadraticBadFlags(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"quadratic", "highprob"} {
		tests := []struct {
			args []string
			want string
		}{
			{[]string{"--p", "1"}, "p = 1"},
			{[]string{"--p", "0.5,1.5"}, "p = 0.5"},
			{[]string{"--p", "x"}, `"x" is not a number`},
			{[]string{"--T", "0"}, "T = 0"},
			{[]string{"--T", "-3"}, "T = -3"},
			{[]string{"--n", "0"}, "n = 0"},
			{[]string{"--eta", "0"}, "--eta = 0"},
			{[]string{"--eta", "-0.1"}, "--eta = -0.1"},
			{[]string{"--gamma", "0"}, "--gamma = 0"},
			{[]string{"--gamma", "1e39"}, "--gamma = 1e+39"},
			{[]string{"--alpha", "NaN"}, "--alpha = NaN"},
			{[]string{"--alpha", "-1"}, "--alpha = -1, want a positive normal float32"},
			{[]string{"--alpha", "autox"}, `"autox" is not a number or auto`},
			{[]string{"--alpha", ""}, `"" is not a number or auto`},
			{[]string{"--alpha", "auto", "--beta", "0"}, "--alpha applies to none"}, // β = 0 would be the constant threshold
			{[]string{"--beta", "0"}, "--beta = 0, want a positive normal float32 or automatic"},
			{[]string{"--beta", "-1"}, "--beta = -1"},
			{[]string{"--beta", "Auto"}, `"Auto" is not a number or auto`},
			{[]string{"--beta", "auto", "--alpha", "+Inf"}, "--alpha = +Inf"},
			{[]string{"--runs", "0"}, "runs = 0"},
			{[]string{"--methods", "adam"}, `unknown method "adam"`},
			// Issue 13: duplicates and settings no method reads are refused.
			{[]string{"--methods", "sgd,sgd"}, `--methods = "sgd", want each method once`},
			{[]string{"--methods", "nsgd", "--gamma", "2"}, "--gamma applies to none of --methods nsgd"},
			{[]string{"--tuned", "--eta", "0.1"}, "--eta applies to none of --methods clip-sgd,ps-clip-sgd,nsgd with --tuned"},
			{[]string{"--tuned", "--p", "1.3"}, "no tuned parameters"},
			{[]string{"--out", file}, "is a file"},
			{[]string{"--bogus"}, "bogus"},
			{[]string{"extra"}, `unexpected argument "extra"`},
		}
		for _, tt := range tests {
			args := append([]string{cmd}, tt.args...)
			code, _, errOut := runCLI(args...)
			if code != 2 || !strings.Contains(errOut, tt.want) || strings.Count(errOut, "\n") != 1 {
				t.Errorf("psclip %s: exit %d, stderr %q; want 2 and one line containing %q", strings.Join(args, " "), code, errOut, tt.want)
			}
		}
	}
}

func TestQuadraticTableJSONAndFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "out")
	args := []string{"quadratic", "--T", "50", "--runs", "2", "--p", "1.5,1.2", "--out", dir}
	var code int
	var errOut string
	var table string
	code, table, errOut = runCLI(args...)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"p = 1.5", "p = 1.2", "Clip-SGD", "PS-Clip-SGD", "Normalized SGD"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	for _, f := range []string{"quadratic.json", "quadratic.png", "quadratic.svg"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	var out string
	code, out, _ = runCLI(append(args[:len(args)-2], "--json")...)
	var res struct {
		Rows []struct {
			P           float64 `json:"p"`
			Method      string  `json:"method"`
			MinGradNorm float64 `json:"min_grad_norm"`
			AvgGradNorm float64 `json:"avg_grad_norm"`
		} `json:"rows"`
		Config map[string]any `json:"config"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 {
		t.Fatalf("--json: exit %d, %v:\n%s", code, err, out)
	}
	if len(res.Rows) != 6 || res.Rows[0].P != 1.5 || res.Rows[0].Method != "clip-sgd" || res.Config["T"] != 50.0 {
		t.Errorf("--json rows %+v config %v", res.Rows, res.Config)
	}
	_, again, _ := runCLI(append(args[:len(args)-2], "--json")...)
	if again != out {
		t.Error("the same flags gave different output")
	}
}

// --alpha and --beta take "auto", each on its own; the table and the JSON
// configuration say which was estimated.
func TestQuadraticAutoThreshold(t *testing.T) {
	for _, cmd := range []string{"quadratic", "highprob"} {
		tests := []struct {
			args  []string
			label string
			auto  []string // the JSON configuration's auto_ keys
		}{
			{[]string{"--alpha", "auto", "--beta", "auto"}, "PS-Clip-SGD α=auto β=auto", []string{"auto_alpha", "auto_beta"}},
			{[]string{"--alpha", "auto", "--beta", "1.5"}, "PS-Clip-SGD α=auto β=1.5", []string{"auto_alpha"}},
			{[]string{"--alpha", "2", "--beta", "auto"}, "PS-Clip-SGD α=2 β=auto", []string{"auto_beta"}},
			{[]string{"--beta", "auto", "--tuned"}, "PS-Clip-SGD α=1 β=auto", []string{"auto_beta"}},
			{[]string{"--alpha", "auto", "--tuned"}, "PS-Clip-SGD α=auto β=1.5", []string{"auto_alpha"}},
			{[]string{"--alpha", "auto", "--alpha", "1"}, "PS-Clip-SGD", nil}, // the last value counts
		}
		for _, tt := range tests {
			args := append([]string{cmd, "--T", "20", "--runs", "4", "--p", "1.5", "--methods", "clip-sgd,ps-clip-sgd"}, tt.args...)
			code, table, errOut := runCLI(args...)
			if code != 0 || errOut != "" || !strings.Contains(table, tt.label) || tt.auto == nil && strings.Contains(table, "α=") {
				t.Errorf("psclip %s: exit %d, stderr %q, table lacks %q:\n%s", strings.Join(args, " "), code, errOut, tt.label, table)
			}
			_, out, _ := runCLI(append(args, "--json")...)
			var res struct {
				Rows   []struct{ Method string } `json:"rows"`
				Config map[string]any            `json:"config"`
			}
			if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Rows) == 0 {
				t.Fatalf("psclip %s --json: %v:\n%s", strings.Join(args, " "), err, out)
			}
			var auto []string
			for _, k := range []string{"auto_alpha", "auto_beta"} {
				if res.Config[k] == true {
					auto = append(auto, k)
				}
			}
			if !slices.Equal(auto, tt.auto) || res.Rows[len(res.Rows)-1].Method != "ps-clip-sgd" {
				t.Errorf("psclip %s --json: config %v, last row %v; want %v set and method ps-clip-sgd", strings.Join(args, " "), res.Config, res.Rows[len(res.Rows)-1], tt.auto)
			}
		}
	}
}
