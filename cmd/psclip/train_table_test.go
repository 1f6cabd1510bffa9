package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	runlayer "github.com/psclip/psclip/run"
)

// writeTable writes a CSV of n rows whose class ("yes" or "no") the
// feature a separates, beside a noise feature b on a scale of 100, and
// returns its path.
func writeTable(t testing.TB, n int, seed uint64) string {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 2))
	var b strings.Builder
	b.WriteString("a,b,label\n")
	for range n {
		a, label := r.NormFloat64()-2, "no"
		if r.IntN(2) == 1 {
			a, label = a+4, "yes"
		}
		fmt.Fprintf(&b, "%.4f,%.4f,%s\n", a, 100*r.NormFloat64(), label)
	}
	return writeFile(t, b.String())
}

// writeFile writes s to a file of the test's and returns its path.
func writeFile(t testing.TB, s string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "table.csv")
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A CSV the test writes trains from the command line: the task is
// inferred and said so, the terminal shows a table of the epochs and the
// last line, result.json holds a validation accuracy far above chance.
func TestTrainTable(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := runCLI("train", "table", "--data", writeTable(t, 300, 1), "--target", "label", "--hidden", "8",
		"--epochs", "3", "--batch", "32", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, `task: classification, inferred from column "label"`) {
		t.Errorf("stderr does not say the task was inferred:\n%s", stderr)
	}
	if !strings.Contains(stdout, "epoch  train cross-entropy  train acc  val cross-entropy  val acc") || strings.Count(stdout, "\n") != 5 {
		t.Errorf("stdout is not a table of 3 epochs and a last line:\n%s", stdout)
	}
	var res struct {
		ValAcc float64 `json:"val_acc"`
		Config struct {
			Task, Loss, Standardize string
		} `json:"config"`
	}
	b, err := os.ReadFile(filepath.Join(out, runlayer.ResultFile))
	if err == nil {
		err = json.Unmarshal(b, &res)
	}
	if err != nil || res.ValAcc < 0.9 || res.Config.Task != "classification" || res.Config.Loss != "cross-entropy" || res.Config.Standardize != "fit" {
		t.Errorf("result.json (%v): validation accuracy %v (chance 0.5), config %+v", err, res.ValAcc, res.Config)
	}
	// Resumed to more epochs, it continues where it stopped.
	code, stdout, stderr = runCLI("train", "table", "--data", writeTable(t, 300, 1), "--target", "label", "--hidden", "8",
		"--epochs", "4", "--batch", "32", "--out", out, "--resume")
	if code != 0 || strings.Count(stdout, "\n") != 6 {
		t.Errorf("resumed to 4 epochs: exit %d, stdout\n%s\nstderr %s", code, stdout, stderr)
	}
}

// The fixture's regression: a number to predict, whose validation loss
// falls well below the first epoch's training loss, with the Huber loss.
func TestTrainTableRegression(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	var b bytes.Buffer
	b.WriteString("x1,x2,y\n")
	for range 300 {
		x1, x2 := r.NormFloat64(), 5+3*r.NormFloat64()
		fmt.Fprintf(&b, "%.4f,%.4f,%.4f\n", x1, x2, 3*x1-0.5*x2+0.1*r.NormFloat64())
	}
	out := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := runCLI("train", "table", "--data", writeFile(t, b.String()), "--target", "y", "--loss", "huber",
		"--epochs", "5", "--batch", "32", "--lr", "0.02", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res struct {
		ValLoss float64 `json:"val_loss"`
		Curve   []struct {
			TrainLoss float64 `json:"train_loss"`
		} `json:"curve"`
		Config struct{ Task string } `json:"config"`
	}
	rb, err := os.ReadFile(filepath.Join(out, runlayer.ResultFile))
	if err == nil {
		err = json.Unmarshal(rb, &res)
	}
	if err != nil || res.Config.Task != "regression" || len(res.Curve) != 5 || !(res.ValLoss < res.Curve[0].TrainLoss/3) {
		t.Errorf("result.json (%v): task %q, validation loss %v after a first epoch of %+v\n%s", err, res.Config.Task, res.ValLoss, res.Curve, stdout)
	}
	if strings.Contains(stdout, "acc") {
		t.Errorf("a regression's table shows an accuracy:\n%s", stdout)
	}
}
