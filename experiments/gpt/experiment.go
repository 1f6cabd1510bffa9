package gpt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/psclip/psclip/data/text"
	"github.com/psclip/psclip/internal/atomicfile"
	"github.com/psclip/psclip/internal/plotting"
	"github.com/psclip/psclip/internal/stats"
	"github.com/psclip/psclip/setting"
)

// Experiment is the paper's GPT study: every clip mode at every learning
// rate and seed, from the same base configuration. A seed fixes the
// initialisation and the data order, so at a given seed all modes and
// learning rates start from the same weights and see the same batches.
type Experiment struct {
	// Base is the configuration of every run but LR, MinLR (LR/10, as
	// nanoGPT and the paper), ClipMode and Seed. Its clip settings are
	// defaults for the runs whose mode reads them (Config.Reads): Clip for
	// all modes but none, ClipConvention for micro-batch mode, the
	// estimator settings for per-sample mode; each run has the others
	// unset (Config.Trim).
	Base  Config     `json:"base"`
	LRs   []float64  `json:"lrs"`
	Modes []ClipMode `json:"clip_modes"`
	// Seeds are the runs' seeds, e.g. 1, 2, 3.
	Seeds []uint64 `json:"seeds"`
}

// Check validates the grid and every configuration in it. Learning rates,
// modes and seeds must each be listed once: a repeated one would train
// twice into one directory and shrink the standard deviation. Its errors
// are *setting.Error values naming the field.
func (e *Experiment) Check() error {
	for _, err := range []error{setting.Distinct("LRs", e.LRs), setting.Distinct("Modes", e.Modes), setting.Distinct("Seeds", e.Seeds)} {
		if err != nil {
			return err
		}
	}
	for _, lr := range e.LRs {
		if err := setting.Positive32("LRs", lr); err != nil {
			return err
		}
	}
	for _, lr := range e.LRs {
		for _, m := range e.Modes {
			c := e.config(lr, m, e.Seeds[0])
			if err := c.Validate(); err != nil {
				return err
			}
		}
	}
	return nil
}

// Reads reports whether any run reads field of Base (see Config.Reads).
func (e *Experiment) Reads(field string) bool {
	return slices.ContainsFunc(e.Modes, func(m ClipMode) bool {
		c := e.config(0, m, 0)
		return c.Reads(field)
	})
}

// config is the configuration of one run.
func (e *Experiment) config(lr float64, m ClipMode, seed uint64) Config {
	c := e.Base
	c.LR, c.MinLR, c.ClipMode, c.Seed = lr, lr/10, m, seed
	return c.Trim()
}

// label is the tables' and figure's name of mode m's method (Config.Label).
func (e *Experiment) label(m ClipMode) string {
	c := e.config(0, m, 0)
	return c.Label()
}

// RunResult is what one run of an experiment produced.
type RunResult struct {
	LR   float64  `json:"lr"`
	Mode ClipMode `json:"clip_mode"`
	Seed uint64   `json:"seed"`
	Summary
}

// Row is one line of the experiment's tables: one learning rate and clip
// mode, aggregated over seeds. The standard deviations are the sample ones
// (n−1), null for a single seed.
type Row struct {
	LR   float64  `json:"lr"`
	Mode ClipMode `json:"clip_mode"`
	// Method names the mode's method as the tables do, e.g. "Clip-SGD
	// (global)" or "Auto-PS-Clip-SGD (per-sample)".
	Method      string `json:"method"`
	N           int    `json:"n"`
	ValLoss     Float  `json:"final_val_loss_mean"`
	ValLossSD   Float  `json:"final_val_loss_sd"`
	Seconds     Float  `json:"train_time_s_mean"`
	SecondsSD   Float  `json:"train_time_s_sd"`
	ClippedFrac Float  `json:"clipped_fraction_mean"`
	// ClipThreshold is the threshold the mode held mean gradients to
	// (Config.ClipThreshold), null without clipping.
	ClipThreshold Float `json:"clip_threshold"`
}

// Results is the content of results.json.
type Results struct {
	Experiment Experiment  `json:"experiment"`
	Corpus     string      `json:"corpus"`
	Runs       []RunResult `json:"runs"`
	Table      []Row       `json:"table"`
}

// Output files of an experiment, in its directory.
const (
	ResultsFile  = "results.json"
	LossTableMD  = "final_val_loss.md"
	TimeTableMD  = "train_time.md"
	TableCSV     = "results.csv"
	CurvesPNG    = "val_loss.png"
	CurvesSVG    = "val_loss.svg"
	runsDir      = "runs"
	runSummaryFn = "summary.json"
)

// RunExperiment trains every run of e on corpus in turn, each in its own
// directory under dir/runs, then writes results.json, the tables (markdown
// and CSV) and the validation-loss curves to dir. With resume, finished runs
// are read back rather than retrained and an interrupted run continues from
// its checkpoint. progress, if not nil, receives progress lines.
func RunExperiment(ctx context.Context, e Experiment, corpus *text.Corpus, dir string, resume bool, progress io.Writer) (*Results, error) {
	if err := e.Check(); err != nil {
		return nil, err
	}
	res := &Results{Experiment: e, Corpus: corpus.Name}
	for _, lr := range e.LRs {
		for _, m := range e.Modes {
			for _, seed := range e.Seeds {
				c := e.config(lr, m, seed)
				out := filepath.Join(dir, runsDir, fmt.Sprintf("lr=%s", fmtLR(lr)), string(m), fmt.Sprintf("seed=%d", seed))
				s, err := experimentRun(ctx, c, corpus, out, resume, progress)
				if err != nil {
					return nil, fmt.Errorf("run lr=%s %s seed=%d: %w", fmtLR(lr), m, seed, err)
				}
				res.Runs = append(res.Runs, RunResult{LR: lr, Mode: m, Seed: seed, Summary: *s})
			}
		}
	}
	res.Table = aggregate(res.Runs, e.label)
	return res, res.write(dir)
}

// finishedRun is a finished run's summary.json.
type finishedRun struct {
	// Config lets a resumed experiment reuse the run only if nothing about
	// it has changed.
	Config  Config  `json:"config"`
	Summary Summary `json:"summary"`
}

// experimentRun returns a finished run's summary, training it unless resume
// finds it done with the same configuration.
func experimentRun(ctx context.Context, c Config, corpus *text.Corpus, out string, resume bool, progress io.Writer) (*Summary, error) {
	path := filepath.Join(out, runSummaryFn)
	if resume {
		var f finishedRun
		b, err := os.ReadFile(path)
		switch {
		case err == nil:
			if err := json.Unmarshal(b, &f); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			// Settings the mode does not read cannot change the run:
			// older runs hold the defaults of other modes.
			if f.Config.Trim() != c {
				return nil, fmt.Errorf("%s: the run was made with another configuration; use a new output directory", path)
			}
			return &f.Summary, nil
		case !errors.Is(err, fs.ErrNotExist):
			return nil, err
		}
		// Resume only if the run got as far as a checkpoint.
		if _, err := os.Stat(filepath.Join(out, CheckpointFile)); err != nil {
			resume = false
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	r, err := New(c, corpus, RunOptions{Out: out, Resume: resume, Progress: progress,
		Label: fmt.Sprintf("lr=%s %s seed=%d", fmtLR(c.LR), c.ClipMode, c.Seed)})
	if err != nil {
		return nil, err
	}
	s, err := r.Train(ctx)
	if err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(finishedRun{Config: c, Summary: *s}, "", "  ")
	if err != nil {
		return nil, err
	}
	return s, atomicfile.WriteFile(path, append(b, '\n'))
}

// aggregate groups runs by learning rate and mode, in order of appearance,
// naming each mode's method with label.
func aggregate(runs []RunResult, label func(ClipMode) string) []Row {
	var rows []Row
	for _, r := range runs {
		i := slices.IndexFunc(rows, func(w Row) bool { return w.LR == r.LR && w.Mode == r.Mode })
		if i < 0 {
			rows = append(rows, Row{LR: r.LR, Mode: r.Mode, Method: label(r.Mode), ClipThreshold: r.ClipThreshold})
			i = len(rows) - 1
		}
		rows[i].N++
	}
	for i := range rows {
		var loss, secs, frac []float64
		for _, r := range runs {
			if r.LR == rows[i].LR && r.Mode == rows[i].Mode {
				loss = append(loss, float64(r.FinalValLoss))
				secs = append(secs, r.Seconds)
				frac = append(frac, r.ClippedFraction)
			}
		}
		rows[i].ValLoss, rows[i].ValLossSD = stats.MeanSD(loss)
		rows[i].Seconds, rows[i].SecondsSD = stats.MeanSD(secs)
		rows[i].ClippedFrac, _ = stats.MeanSD(frac)
	}
	return rows
}

// write saves results.json, the tables and the curves to dir.
func (r *Results) write(dir string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	files := []struct {
		name string
		data []byte
	}{
		{ResultsFile, append(b, '\n')},
		{LossTableMD, []byte(r.LossTable())},
		{TimeTableMD, []byte(r.TimeTable())},
		{TableCSV, []byte(r.CSV())},
	}
	for _, f := range files {
		if err := atomicfile.WriteFile(filepath.Join(dir, f.name), f.data); err != nil {
			return err
		}
	}
	panels := r.curves()
	for _, name := range []string{CurvesPNG, CurvesSVG} {
		if err := plotting.Save(filepath.Join(dir, name), panels); err != nil {
			return err
		}
	}
	return nil
}

// curves returns one panel per learning rate with each mode's validation
// loss, averaged over seeds at every evaluation step the seeds share.
func (r *Results) curves() []plotting.Panel {
	var panels []plotting.Panel
	for _, lr := range r.Experiment.LRs {
		p := plotting.Panel{Title: "lr = " + fmtLR(lr), XLabel: "step", YLabel: "validation loss"}
		for _, m := range r.Experiment.Modes {
			sum := map[int]float64{}
			n := map[int]int{}
			for _, run := range r.Runs {
				if run.LR != lr || run.Mode != m {
					continue
				}
				for _, pt := range run.Curve {
					sum[pt.Step] += float64(pt.ValLoss)
					n[pt.Step]++
				}
			}
			var s plotting.Series
			s.Name = r.Experiment.label(m)
			for step := range n {
				s.X = append(s.X, float64(step))
			}
			slices.Sort(s.X)
			for _, x := range s.X {
				s.Y = append(s.Y, sum[int(x)]/float64(n[int(x)]))
			}
			p.Series = append(p.Series, s)
		}
		panels = append(panels, p)
	}
	return panels
}

// fmtLR formats a learning rate compactly: 0.0006 as 6e-04.
func fmtLR(lr float64) string { return strconv.FormatFloat(lr, 'g', -1, 64) }
