package gpt

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/internal/stats"
	"github.com/psclip/psclip/run"
	"github.com/psclip/psclip/setting"
)

// TestExperiment runs a tiny grid and checks the files, the tables, that
// every mode starts from the same weights and data at a given seed, and that
// a resumed experiment reuses its finished runs.
func TestExperiment(t *testing.T) {
	corpus := testCorpus(t)
	base := tinyConfig(ClipGlobal)
	base.Steps, base.Warmup, base.EvalInterval = 4, 1, 2
	e := Experiment{Base: base, LRs: []float64{1e-3, 3e-3}, Modes: []ClipMode{ClipGlobal, ClipMicroBatch}, Seeds: []uint64{1, 2}}
	dir := t.TempDir()
	res, err := RunExperiment(context.Background(), e, corpus, RunOptions{Out: dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 8 || len(res.Table) != 4 {
		t.Fatalf("%d runs and %d table rows, want 8 and 4", len(res.Runs), len(res.Table))
	}
	initial := map[uint64]Float{}
	for _, r := range res.Runs {
		if len(r.Curve) != 3 || r.Curve[0].Step != 0 {
			t.Fatalf("run %v %s %d: curve %v", r.LR, r.Mode, r.Seed, r.Curve)
		}
		// Same seed ⇒ same initial weights and evaluation batches, whatever
		// the mode and learning rate.
		v0 := r.Curve[0].ValLoss
		if w, ok := initial[r.Seed]; ok && w != v0 {
			t.Errorf("seed %d: initial validation loss %v, another run had %v", r.Seed, v0, w)
		}
		initial[r.Seed] = v0
		if r.Clippable == 0 || r.ClippedFraction < 0 || r.ClippedFraction > 1 {
			t.Errorf("run %v %s %d: clipped %d of %d", r.LR, r.Mode, r.Seed, r.Clipped, r.Clippable)
		}
		if w := r.ClipWindows; len(w) != 1 || w[0] != (ClipWindow{1, 4, r.Clipped, r.Clippable, Float(float64(r.Clipped) / float64(r.Clippable))}) {
			t.Errorf("run %v %s %d: clip windows %+v, want one of steps 1–4 with the run's counts", r.LR, r.Mode, r.Seed, w)
		}
	}
	if initial[1] == initial[2] {
		t.Error("seeds 1 and 2 start from the same validation loss")
	}
	for _, row := range res.Table {
		want := base.Clip
		if row.Mode == ClipMicroBatch {
			want *= float64(base.Accum) // the nanogpt convention
		}
		if float64(row.ClipThreshold) != want {
			t.Errorf("%s row: threshold %v, want %v", row.Mode, row.ClipThreshold, want)
		}
	}
	row := res.Table[1]
	var losses []float64
	for _, r := range res.Runs {
		if r.LR == row.LR && r.Mode == row.Mode {
			losses = append(losses, float64(r.FinalValLoss))
		}
	}
	if m, sd := stats.MeanSD(losses); row.N != 2 || row.ValLoss != m || row.ValLossSD != sd {
		t.Errorf("row %+v does not aggregate the runs' losses %v", row, losses)
	}
	// The micro-batch row is paired with the global one by seed.
	var ref []float64
	for _, r := range res.Runs {
		if r.LR == row.LR && r.Mode == ClipGlobal {
			ref = append(ref, float64(r.FinalValLoss))
		}
	}
	if p, d := row.Paired, (losses[0]-ref[0]+losses[1]-ref[1])/2; res.Table[0].Paired != nil || p == nil || p.N != 2 || math.Abs(float64(p.Mean)-d) > 1e-12 {
		t.Errorf("paired %+v (global's %+v), want the mean difference %v", p, res.Table[0].Paired, d)
	}
	for _, f := range []string{run.ResultsFile, LossTableMD, TimeTableMD, TableCSV, ClipTableMD, CurvesPNG, CurvesSVG} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
			t.Errorf("output %s: %v", f, err)
		}
	}
	var back Results
	b, _ := os.ReadFile(filepath.Join(dir, run.ResultsFile))
	if err := json.Unmarshal(b, &back); err != nil || len(back.Runs) != 8 {
		t.Errorf("results.json does not read back: %v", err)
	}
	table := res.LossTable()
	if !strings.Contains(table, "MB-Clip-SGD") || strings.Count(table, "**") != 4 || strings.Count(table, "\n") != 6 {
		t.Errorf("loss table:\n%s", table)
	}
	for _, row := range res.Table {
		var clipped, clippable int64
		for _, r := range res.Runs {
			if r.LR == row.LR && r.Mode == row.Mode {
				clipped, clippable = clipped+r.Clipped, clippable+r.Clippable
			}
		}
		if w := row.ClipWindows; len(w) != 1 || w[0].Clipped != clipped || w[0].Clippable != clippable {
			t.Errorf("%v %s row: clip windows %+v, want the seeds' %d of %d", row.LR, row.Mode, w, clipped, clippable)
		}
	}
	if ct := res.ClipTable(); !strings.Contains(ct, "| steps 1–4 |") || strings.Count(ct, "\n") != 8 {
		t.Errorf("clip table:\n%s", ct)
	}
	if csv := res.CSV(); strings.Count(csv, "\n") != 5 {
		t.Errorf("CSV:\n%s", csv)
	}

	// Resuming a finished experiment trains nothing (no log is rewritten)
	// and reports the same.
	logs, _ := filepath.Glob(filepath.Join(dir, run.RunsDir, "*", "*", "*", run.LogFile))
	if len(logs) != 8 {
		t.Fatalf("%d run logs, want 8", len(logs))
	}
	before := map[string]time.Time{}
	for _, l := range logs {
		fi, _ := os.Stat(l)
		before[l] = fi.ModTime()
	}
	again, err := RunExperiment(context.Background(), e, corpus, RunOptions{Out: dir, Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range again.Runs {
		if again.Runs[i].FinalValLoss != res.Runs[i].FinalValLoss || again.Runs[i].Seconds != res.Runs[i].Seconds {
			t.Errorf("resumed run %d differs: %+v vs %+v", i, again.Runs[i].Summary, res.Runs[i].Summary)
		}
	}
	for _, l := range logs {
		if fi, _ := os.Stat(l); !fi.ModTime().Equal(before[l]) {
			t.Errorf("%s was rewritten by the resume", l)
		}
	}

	// Finished runs of another configuration are not reused.
	e.Base.ClipConvention = ConventionMean
	if _, err := RunExperiment(context.Background(), e, corpus, RunOptions{Out: dir, Resume: true}); err == nil || !strings.Contains(err.Error(), "another configuration") {
		t.Errorf("resume with another clip convention: %v", err)
	}
}

// Base's per-sample threshold is the per-sample runs' alone, and the
// tables, CSV and curves name it.
func TestExperimentPerSampleThreshold(t *testing.T) {
	corpus := testCorpus(t)
	base := tinyConfig(ClipGlobal)
	base.Steps, base.Warmup = 4, 1
	base.Estimator, base.Window = "ps-clip-auto", 256
	e := Experiment{Base: base, LRs: []float64{1e-3}, Modes: []ClipMode{ClipGlobal, ClipPerSample}, Seeds: []uint64{1}}
	dir := t.TempDir()
	res, err := RunExperiment(context.Background(), e, corpus, RunOptions{Out: dir})
	if err != nil {
		t.Fatal(err)
	}
	const label = "Auto-PS-Clip-SGD window=256 (per-sample)"
	if res.Table[0].Method != "Clip-SGD (global)" || res.Table[1].Method != label {
		t.Errorf("methods %q, %q", res.Table[0].Method, res.Table[1].Method)
	}
	for _, out := range []string{res.LossTable(), res.TimeTable(), res.CSV()} {
		if !strings.Contains(out, label) {
			t.Errorf("%q missing from\n%s", label, out)
		}
	}
	if got := res.curves()[0].Series[1].Name; got != label {
		t.Errorf("curve named %q", got)
	}
	for _, want := range []struct {
		mode   ClipMode
		ps     string
		window int
	}{{ClipGlobal, "", 0}, {ClipPerSample, "ps-clip-auto", 256}} {
		var f Summary
		b, err := os.ReadFile(filepath.Join(dir, run.RunsDir, "lr=0.001", string(want.mode), "seed=1", run.ResultFile))
		if err == nil {
			err = json.Unmarshal(b, &f)
		}
		if err != nil || f.Config.Estimator != want.ps || f.Config.Window != want.window {
			t.Errorf("%s run: ps_estimator %q window %d (%v), want %q %d", want.mode, f.Config.Estimator, f.Config.Window, err, want.ps, want.window)
		}
	}
	// The per-sample run clipped by the estimated threshold, not Clip.
	if r := res.Runs[1]; !math.IsNaN(float64(r.ClipThreshold)) || r.Clippable == 0 {
		t.Errorf("per-sample run: threshold %v, clipped %d of %d", r.ClipThreshold, r.Clipped, r.Clippable)
	}

	e.Modes = []ClipMode{ClipGlobal, ClipMicroBatch}
	if e.Reads("Window") || e.Reads("Estimator") {
		t.Error("a per-sample threshold is read without per-sample runs")
	}
}

func TestExperimentCheck(t *testing.T) {
	ok := Experiment{Base: tinyConfig(ClipGlobal), LRs: []float64{1e-3}, Modes: []ClipMode{ClipGlobal}, Seeds: []uint64{1}}
	if err := ok.Check(); err != nil {
		t.Fatal(err)
	}
	for name, mutate := range map[string]func(*Experiment){
		"no lr":      func(e *Experiment) { e.LRs = nil },
		"no mode":    func(e *Experiment) { e.Modes = nil },
		"no seed":    func(e *Experiment) { e.Seeds = nil },
		"lr ≤ 0":     func(e *Experiment) { e.LRs = []float64{0} },
		"clip 0":     func(e *Experiment) { e.Base.Clip = 0 },
		"bad config": func(e *Experiment) { e.Base.NHead = 3 },
	} {
		e := ok
		mutate(&e)
		if e.Check() == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// Reads(Clip) is false only when no mode clips to Clip: none, and
// per-sample with a threshold of its own.
func TestExperimentReadsClip(t *testing.T) {
	for _, tc := range []struct {
		modes []ClipMode
		spec  estimator.Spec
		want  bool
	}{
		{[]ClipMode{ClipGlobal}, estimator.Spec{Estimator: "ps-clip-auto"}, true},
		{[]ClipMode{ClipMicroBatch, ClipNone}, estimator.Spec{}, true},
		{[]ClipMode{ClipPerSample}, estimator.Spec{}, true},
		{[]ClipMode{ClipPerSample}, estimator.Spec{Estimator: "ps-clip-quantile"}, true},
		{[]ClipMode{ClipNone}, estimator.Spec{}, false},
		{[]ClipMode{ClipPerSample}, estimator.Spec{Estimator: "ps-clip-auto"}, false},
		{[]ClipMode{ClipNone, ClipPerSample}, estimator.Spec{Estimator: "auto-clip"}, false},
		{[]ClipMode{ClipPerSample}, estimator.Spec{Estimator: "ps-clip-sgd", AutoAlpha: true, Beta: 2}, false},
		{[]ClipMode{ClipPerSample}, estimator.Spec{Estimator: "ps-clip-sgd", Alpha: 1, Beta: 2}, false},
	} {
		e := Experiment{Base: Default(), Modes: tc.modes}
		e.Base.Spec = tc.spec
		if got := e.Reads("Clip"); got != tc.want {
			t.Errorf("modes %v, %+v: Reads(Clip) = %v, want %v", tc.modes, tc.spec, got, tc.want)
		}
	}
}

// Check refuses repeated learning rates, modes and seeds (issue 13), and
// learning rates that are not positive normal float32s.
func TestExperimentCheckDuplicates(t *testing.T) {
	ok := Experiment{Base: tinyConfig(ClipGlobal), LRs: []float64{1e-3}, Modes: []ClipMode{ClipGlobal}, Seeds: []uint64{1}}
	for _, tc := range []struct {
		mutate func(*Experiment)
		field  string
	}{
		{func(e *Experiment) { e.LRs = []float64{1e-3, 1e-3} }, "LRs"},
		{func(e *Experiment) { e.Modes = []ClipMode{ClipGlobal, ClipGlobal} }, "Modes"},
		{func(e *Experiment) { e.Seeds = []uint64{1, 1} }, "Seeds"},
		{func(e *Experiment) { e.LRs = []float64{1e39} }, "LRs"},
		{func(e *Experiment) { e.LRs = []float64{1e-320} }, "LRs"},
	} {
		e := ok
		tc.mutate(&e)
		var se *setting.Error
		if err := e.Check(); !errors.As(err, &se) || se.Field != tc.field {
			t.Errorf("%+v: %v, want a *setting.Error for %s", e, err, tc.field)
		}
	}
}
