package gpt

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/psclip/psclip/data/text"
	"github.com/psclip/psclip/internal/plotting"
	"github.com/psclip/psclip/internal/stats"
	"github.com/psclip/psclip/run"
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
	if err := setting.First(setting.Distinct("LRs", e.LRs), setting.Distinct("Modes", e.Modes), setting.Distinct("Seeds", e.Seeds)); err != nil {
		return err
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

// Output files of an experiment, in its directory.
const (
	LossTableMD = "final_val_loss.md"
	TimeTableMD = "train_time.md"
	TableCSV    = "results.csv"
	ClipTableMD = "clipped_by_window.md"
	CurvesPNG   = "val_loss.png"
	CurvesSVG   = "val_loss.svg"
)

// Results is the content of results.json: the experiment, the corpus it
// ran on (by name), every run in the order they ran, and their rows.
type Results struct {
	Experiment Experiment  `json:"experiment"`
	Corpus     string      `json:"corpus"`
	Runs       []RunResult `json:"runs"`
	Table      []Row       `json:"table"`
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
	// ClipWindows are the seeds' clipped and clippable gradients summed by
	// window of ClipWindowSteps steps (Summary.ClipWindows): when in
	// training the mode clipped; absent without clipping.
	ClipWindows []ClipWindow `json:"clip_windows,omitempty"`
	// ClipThreshold is the threshold the mode held mean gradients to
	// (Config.ClipThreshold), null without clipping.
	ClipThreshold Float `json:"clip_threshold"`
	// Paired compares the mode's final validation loss with global
	// clipping's at the same learning rate, paired by seed (mode − global:
	// negative is lower); absent for global clipping and in experiments
	// without it.
	Paired *stats.Paired `json:"paired,omitempty"`
}

// RunExperiment trains every run of e on corpus in turn, each in its own
// directory under o.Out/runs, then writes results.json, the tables
// (markdown and CSV) and the validation-loss curves to o.Out. The
// experiment directory is held as a run directory is (run.OpenDir): a fresh
// experiment into one that holds an experiment is refused. With o.Resume,
// finished runs are read back rather than retrained and an interrupted run
// continues from its checkpoint (run.Reuse), with the same configuration
// and corpus only; o.Restart starts every run over. o.Progress, if not nil,
// receives progress lines.
func RunExperiment(ctx context.Context, e Experiment, corpus *text.Corpus, o run.Options) (*Results, error) {
	o.Kind = Kind + " experiment" // a directory holds one kind of run
	x, err := run.OpenExperiment(o, e, e.Check)
	if err != nil {
		return nil, err
	}
	defer x.Close()
	res := &Results{Experiment: e, Corpus: corpus.Name}
	for _, lr := range e.LRs {
		for _, m := range e.Modes {
			for _, seed := range e.Seeds {
				c := e.config(lr, m, seed)
				c.VocabSize, _ = modelVocab(c, corpus) // as New resolves it: a finished run's result records it so
				ro := x.RunOptions(fmt.Sprintf("lr=%s %s seed=%d", fmtLR(lr), m, seed), "lr="+fmtLR(lr), string(m), fmt.Sprintf("seed=%d", seed))
				s, err := run.Train[Summary](ctx, ro, c, c.identity(corpus), func(ro RunOptions) (*Run, error) { return New(c, corpus, ro) })
				if err != nil {
					return nil, err
				}
				res.Runs = append(res.Runs, RunResult{LR: lr, Mode: m, Seed: seed, Summary: *s})
			}
		}
	}
	res.Table = aggregate(res.Runs, e.label)
	if err := x.Finish(res, map[string]string{LossTableMD: res.LossTable(), TimeTableMD: res.TimeTable(), TableCSV: res.CSV(), ClipTableMD: res.ClipTable()}); err != nil {
		return nil, err
	}
	return res, res.figures(o.Out)
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
				rows[i].ClipWindows = mergeClipWindows(rows[i].ClipWindows, r.ClipWindows)
			}
		}
		rows[i].ValLoss, rows[i].ValLossSD = stats.MeanSD(loss)
		rows[i].Seconds, rows[i].SecondsSD = stats.MeanSD(secs)
		rows[i].ClippedFrac, _ = stats.MeanSD(frac)
	}
	// The runs of a learning rate and mode come in the order of the seeds,
	// so the i-th losses of two rows are one seed's.
	losses := func(lr float64, m ClipMode) []float64 {
		var l []float64
		for _, r := range runs {
			if r.LR == lr && r.Mode == m {
				l = append(l, float64(r.FinalValLoss))
			}
		}
		return l
	}
	for i, row := range rows {
		ref := losses(row.LR, ClipGlobal)
		if row.Mode == ClipGlobal || ref == nil {
			continue
		}
		if p, err := stats.Pair(losses(row.LR, row.Mode), ref); err == nil {
			rows[i].Paired = &p
		}
	}
	return rows
}

// figures saves the validation-loss curves to dir.
func (r *Results) figures(dir string) error {
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
