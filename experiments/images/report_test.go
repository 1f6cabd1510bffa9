package images

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/internal/stats"
	"github.com/psclip/psclip/run"
)

// t975df2 is Student's t 0.975-quantile with 2 degrees of freedom, R's
// qt(0.975, 2).
const t975df2 = 4.302652729911275

// pairedResults has SGD and Clip-SGD over three seeds, each run's
// validation and test accuracy per epoch given as [epoch][val, test].
func pairedResults(curves map[Method][][][2]float64) Results {
	sgd, clip := sgdMethod, Method{estimator.Spec{Estimator: "clip-sgd", Clip: 2}}
	res := Results{Experiment: Experiment{Methods: []Method{sgd, clip}, Seeds: []uint64{1, 2, 3}}}
	for _, m := range []Method{sgd, clip} {
		for i, c := range curves[m] {
			r := RunResult{Method: m, Name: m.Name(), Seed: uint64(i + 1)}
			for e, vt := range c {
				r.Curve = append(r.Curve, EpochRecord{Epoch: e + 1, ValAcc: Float(vt[0]), TestAcc: Float(vt[1])})
			}
			r.TestAcc = Float(c[len(c)-1][1])
			res.Runs = append(res.Runs, r)
		}
	}
	return res
}

// TestPairedVsSGD checks the paired comparison against a hand computation:
// differences 0.02, 0.03, 0.04 have mean 0.03, sd 0.01 and the interval
// 0.03 ± t(0.975, 2)·0.01/√3; the best epoch is the one of highest
// validation accuracy, not of highest test accuracy.
func TestPairedVsSGD(t *testing.T) {
	clip := Method{estimator.Spec{Estimator: "clip-sgd", Clip: 2}}
	res := pairedResults(map[Method][][][2]float64{
		sgdMethod: {
			{{0.5, 0.50}, {0.7, 0.70}, {0.6, 0.60}}, // best epoch 2
			{{0.5, 0.52}, {0.6, 0.90}, {0.8, 0.62}}, // best epoch 3: the test peak at 2 is not chosen
			{{0.9, 0.70}, {0.6, 0.64}, {0.6, 0.64}}, // best epoch 1
		},
		clip: {
			{{0.5, 0.50}, {0.5, 0.60}, {0.9, 0.62}}, // final −SGD +0.02; best epoch 3: 0.62 − 0.70
			{{0.5, 0.52}, {0.6, 0.60}, {0.8, 0.65}}, // +0.03; best epoch 3: 0.65 − 0.62
			{{0.5, 0.52}, {0.6, 0.60}, {0.8, 0.68}}, // +0.04; best epoch 3: 0.68 − 0.70
		},
	})
	res.aggregate()
	sgdRow, clipRow := res.Table[0], res.Table[1]
	if sgdRow.Paired != nil {
		t.Errorf("SGD has a comparison with itself: %+v", sgdRow.Paired)
	}
	if !slices.Equal(sgdRow.BestEpochs, []int{2, 3, 1}) || !slices.Equal(clipRow.BestEpochs, []int{3, 3, 3}) {
		t.Errorf("best epochs %v and %v, want [2 3 1] and [3 3 3]", sgdRow.BestEpochs, clipRow.BestEpochs)
	}
	h := t975df2 * 0.01 / math.Sqrt(3)
	best := []float64{0.62 - 0.70, 0.65 - 0.62, 0.68 - 0.70}
	bm := (best[0] + best[1] + best[2]) / 3
	var ss float64
	for _, d := range best {
		ss += (d - bm) * (d - bm)
	}
	bh := t975df2 * math.Sqrt(ss/2) / math.Sqrt(3)
	for _, c := range []struct {
		what      string
		got       stats.Paired
		mean, sd  float64
		lo, hi    float64
		pos, negs int
	}{
		{"final test", clipRow.Paired.TestAcc, 0.03, 0.01, 0.03 - h, 0.03 + h, 3, 0},
		{"best-epoch test", clipRow.Paired.BestTestAcc, bm, math.Sqrt(ss / 2), bm - bh, bm + bh, 1, 2},
	} {
		got := c.got
		for _, v := range []struct {
			name      string
			got, want float64
		}{{"mean", float64(got.Mean), c.mean}, {"sd", float64(got.SD), c.sd}, {"ci lo", float64(got.CI95[0]), c.lo}, {"ci hi", float64(got.CI95[1]), c.hi}} {
			// The t quantile is R's to 1e-11 (internal/stats).
			if math.Abs(v.got-v.want) > 1e-10 {
				t.Errorf("%s: %s = %.15g, want %.15g", c.what, v.name, v.got, v.want)
			}
		}
		if got.N != 3 || got.Positive != c.pos || got.Negative != c.negs {
			t.Errorf("%s: n %d, signs %d/%d, want 3, %d/%d", c.what, got.N, got.Positive, got.Negative, c.pos, c.negs)
		}
	}
	table := res.PairedTable()
	for _, want := range []string{"| Clip-SGD γ=2 | 65.00 ± 3.00 | ahead by +3.00 [+0.52, +5.48] | 3/0/0 |", "| 3, 3, 3 |", "| SGD |"} {
		if !strings.Contains(table, want) {
			t.Errorf("paired table lacks %q:\n%s", want, table)
		}
	}
}

// TestPairedMissing leaves out a seed's Clip-SGD run and the per-epoch test
// accuracy of another's log: those seeds drop out of the pairs.
func TestPairedMissing(t *testing.T) {
	clip := Method{estimator.Spec{Estimator: "clip-sgd", Clip: 2}}
	res := pairedResults(map[Method][][][2]float64{
		sgdMethod: {{{0.5, 0.5}}, {{0.5, 0.6}}, {{0.5, 0.7}}},
		clip:      {{{0.5, 0.6}}, {{0.5, 0.8}}},
	})
	res.Runs[4].Curve[0].TestAcc = Float(math.NaN()) // seed 2: no per-epoch test accuracy
	res.aggregate()
	p := res.Table[1].Paired
	if p.TestAcc.N != 2 || p.BestTestAcc.N != 1 || math.Abs(float64(p.BestTestAcc.Mean)-0.1) > 1e-12 {
		t.Errorf("pairs: final %+v, best %+v; want 2 final pairs and 1 best pair of +0.1", p.TestAcc, p.BestTestAcc)
	}
	if got := res.Table[1].BestEpochs; !slices.Equal(got, []int{1, 1, 0}) {
		t.Errorf("best epochs %v, want [1 1 0] (no run at seed 3)", got)
	}
}

func TestVerdict(t *testing.T) {
	for _, c := range []struct {
		p    stats.Paired
		want string
	}{
		{stats.Paired{N: 3, Mean: 0.0031, CI95: [2]Float{0.0012, 0.005}}, "ahead by +0.31 [+0.12, +0.50]"},
		{stats.Paired{N: 3, Mean: -0.02, CI95: [2]Float{-0.03, -0.01}}, "behind by -2.00 [-3.00, -1.00]"},
		{stats.Paired{N: 3, Mean: 0.001, CI95: [2]Float{-0.004, 0.006}}, "+0.10 [-0.40, +0.60], interval holds 0"},
		{stats.Paired{N: 1, Mean: 0.024, CI95: [2]Float{Float(math.NaN()), Float(math.NaN())}}, "+2.40 (1 seed)"},
		{stats.Paired{}, "–"},
	} {
		if got := Verdict(c.p); got != c.want {
			t.Errorf("Verdict(%+v) = %q, want %q", c.p, got, c.want)
		}
	}
}

// TestReport rewrites a results file whose logs predate the per-epoch test
// accuracy: the runs stay byte for byte, the table gains the paired
// comparisons, the unrecorded best-epoch test accuracy is unknown (not 0),
// and a second report changes nothing.
func TestReport(t *testing.T) {
	clip := Method{estimator.Spec{Estimator: "clip-sgd", Clip: 2}}
	res := pairedResults(map[Method][][][2]float64{
		sgdMethod: {{{0.5, 0.5}}, {{0.5, 0.6}}, {{0.5, 0.7}}},
		clip:      {{{0.5, 0.6}}, {{0.5, 0.8}}, {{0.5, 0.75}}},
	})
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	// An older log: no test figures per epoch.
	var file map[string]any
	if err := json.Unmarshal(b, &file); err != nil {
		t.Fatal(err)
	}
	for _, r := range file["runs"].([]any) {
		for _, ep := range r.(map[string]any)["curve"].([]any) {
			delete(ep.(map[string]any), "test_acc")
			delete(ep.(map[string]any), "test_loss")
		}
	}
	old, err := json.MarshalIndent(file, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, run.ResultsFile)
	if err := os.WriteFile(path, old, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Report(dir)
	if err != nil {
		t.Fatal(err)
	}
	if p := got.Table[1].Paired; p == nil || p.TestAcc.N != 3 || p.BestTestAcc.N != 0 || !math.IsNaN(float64(got.Table[1].BestTestAcc)) {
		t.Fatalf("paired %+v, best test acc %v; want 3 final pairs, none at the best epoch", p, got.Table[1].BestTestAcc)
	}
	written, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var before, after map[string]json.RawMessage
	if err := json.Unmarshal(old, &before); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(written, &after); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before["runs"], after["runs"]) || !bytes.Equal(before["experiment"], after["experiment"]) {
		t.Error("the report changed the runs or the experiment")
	}
	if !bytes.Contains(after["table"], []byte(`"paired"`)) {
		t.Errorf("table has no paired entry: %s", after["table"])
	}
	if md, err := os.ReadFile(filepath.Join(dir, TableMD)); err != nil || !strings.Contains(string(md), "| Clip-SGD γ=2 | 71.67 ± 10.41 | +11.67 [-7.31, +30.64], interval holds 0 | 3/0/0 |") {
		t.Errorf("table.md (%v) lacks the paired comparison:\n%s", err, md)
	}
	if _, err := os.Stat(filepath.Join(dir, GridMD)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("an empty grid table was written: %v", err)
	}
	if _, err := Report(dir); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(path); !bytes.Equal(again, written) {
		t.Error("a second report changed results.json")
	}
}

func TestReportErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Report(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("no results.json: %v, want fs.ErrNotExist", err)
	}
	if err := os.WriteFile(filepath.Join(dir, run.ResultsFile), []byte(`{"runs": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var nr *NoRunsError
	if _, err := Report(dir); !errors.As(err, &nr) {
		t.Errorf("no runs: %v, want a *NoRunsError", err)
	}
}

// TestEvalEvery evaluates after epochs 2 and 3 of 3 only: epoch 1 logs
// null for the validation and test figures, and training is the same as
// with an evaluation after every epoch.
func TestEvalEvery(t *testing.T) {
	d := testData(t)
	every := func(n int) *Summary {
		c := ImagesDefault()
		c.Batch, c.Epochs, c.EvalEvery, c.WidthDiv, c.TrainSubset = 16, 3, n, 4, 48
		s, err := trainRun(t, c, d, RunOptions{Out: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	all, some := every(0), every(2)
	for i, ep := range some.Curve {
		evaluated := i > 0
		if finite(float64(ep.ValAcc)) != evaluated || finite(float64(ep.TestAcc)) != evaluated {
			t.Errorf("epoch %d: val %v, test %v; evaluated: want %v", ep.Epoch, ep.ValAcc, ep.TestAcc, evaluated)
		}
		if ep.TrainLoss != all.Curve[i].TrainLoss || (evaluated && ep.TestAcc != all.Curve[i].TestAcc) {
			t.Errorf("epoch %d: train loss %v, test acc %v; every epoch evaluated: %v, %v", ep.Epoch, ep.TrainLoss, ep.TestAcc,
				all.Curve[i].TrainLoss, all.Curve[i].TestAcc)
		}
	}
	if some.TestAcc != all.TestAcc {
		t.Errorf("test accuracy %v, evaluated every epoch %v", some.TestAcc, all.TestAcc)
	}
}

// TestNoisyLabelStudyMiniature is the long noisy-label study
// (evidence/fashion-mnist-long) in miniature: the five methods over two
// seeds on a tiny synthetic set with 40 % of the training labels flipped,
// evaluated every other epoch; results.json holds each method's per-seed
// values and its paired comparison with SGD, and the tables and figures
// come from it.
func TestNoisyLabelStudyMiniature(t *testing.T) {
	d := testData(t)
	base := ImagesDefault()
	base.Model, base.Batch, base.Epochs, base.EvalEvery = ModelSmallCNN, 16, 4, 2
	base.WidthDiv, base.TrainSubset, base.LabelNoise, base.LabelNoiseKind = 4, 48, 0.4, NoiseUniform
	e := Experiment{Base: base, Seeds: []uint64{1, 2}}
	for _, name := range []string{"sgd", "clip-sgd", "ps-clip-sgd", "inc-ps-clip-sgd", "ps-clip-auto"} {
		m, err := ImagesThresholds().Method(name)
		if err != nil {
			t.Fatal(err)
		}
		e.Methods = append(e.Methods, m)
	}
	dir := t.TempDir()
	res, err := RunExperiment(context.Background(), e, d, RunOptions{Out: dir})
	if err != nil {
		t.Fatal(err)
	}
	if res.Provenance == nil || res.Provenance.Finished.IsZero() || res.Provenance.Runs != len(res.Runs) {
		t.Errorf("provenance %+v, want a finished record of the %d runs", res.Provenance, len(res.Runs))
	}
	for _, r := range res.Runs {
		if p := r.Provenance; len(p.Command) == 0 || p.Kernel == "" || p.Finished.IsZero() || p.Commit != res.Provenance.Commit {
			t.Errorf("%s seed %d: provenance %+v, want the session's, of the results' commit %q", r.Name, r.Seed, p, res.Provenance.Commit)
		}
	}
	for i, w := range res.Table {
		if len(w.TestAccs) != 2 || len(w.BestEpochs) != 2 || (i > 0) != (w.Paired != nil) {
			t.Fatalf("%s: per seed %v, best epochs %v, paired %v", w.Name, w.TestAccs, w.BestEpochs, w.Paired)
		}
		for s, ep := range w.BestEpochs {
			if ep != 2 && ep != 4 {
				t.Errorf("%s seed %d: best epoch %d, want an evaluated one (2 or 4)", w.Name, s+1, ep)
			}
		}
		if w.Paired != nil && (w.Paired.TestAcc.N != 2 || w.Paired.BestTestAcc.N != 2) {
			t.Errorf("%s: %d and %d pairs, want 2", w.Name, w.Paired.TestAcc.N, w.Paired.BestTestAcc.N)
		}
		if w.Method.Estimator != "sgd" && w.Method.Estimator != "clip-sgd" && w.Detection == nil {
			t.Errorf("%s: no detection statistics with label noise", w.Name)
		}
	}
	for _, f := range []string{TableMD, ClippingMD, AccuracyPNG, AccuracySVG, DetectionPNG, DetectionSVG} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	table, err := os.ReadFile(filepath.Join(dir, TableMD))
	if err != nil || !strings.Contains(string(table), "[95 % CI]") {
		t.Fatalf("table.md (%v) has no paired comparison:\n%s", err, table)
	}
	// The tables follow from results.json alone.
	if _, err := Report(dir); err != nil {
		t.Fatal(err)
	}
	if again, err := os.ReadFile(filepath.Join(dir, TableMD)); err != nil || !bytes.Equal(again, table) {
		t.Errorf("table.md from results.json differs from the experiment's (%v):\n%s\nwant\n%s", err, again, table)
	}
}
