package tail

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"text/tabwriter"

	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/internal/plotting"
)

// NormsRecord is the part of a training log line Trace reads: the step and
// the per-sample gradient norms of the step, in batch order (null for a
// non-finite norm). Trainers write it as fields of their step records,
// e.g. {"step": 12, "loss": 2.31, ..., "sample_norms": [0.91, 1.3, null]}.
// Lines without sample_norms (validation records) are skipped.
type NormsRecord struct {
	Step        int        `json:"step"`
	SampleNorms []*float64 `json:"sample_norms"`
}

// Point is the tail estimate after one logged step.
type Point struct {
	Step int `json:"step"`
	estimator.TailEstimate
	// Median is the median norm of the window.
	Median float64 `json:"median"`
}

// TraceResult is the outcome of Trace.
type TraceResult struct {
	Window int     `json:"window"`
	Steps  int     `json:"steps"`  // logged steps with norms
	Points []Point `json:"points"` // one per step once the window holds MinTailSamples norms
}

// Trace reads a JSON-lines training log and feeds every step's per-sample
// norms through an estimator.Tail with the given window (0:
// estimator.DefaultWindow), returning p̂, β, σ̂ and the median after every
// step that has an estimate. A line that is not JSON, an empty log, or a log
// without sample_norms is an error naming the line.
func Trace(r io.Reader, window int) (TraceResult, error) {
	if window == 0 {
		window = estimator.DefaultWindow
	}
	tl, err := estimator.NewTail(window)
	if err != nil {
		return TraceResult{}, err
	}
	res := TraceResult{Window: window}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 64<<20)
	var norms []float64
	line := 0
	for sc.Scan() {
		line++
		if len(sc.Bytes()) == 0 {
			continue
		}
		var rec NormsRecord
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return TraceResult{}, fmt.Errorf("line %d: %v", line, err)
		}
		if rec.SampleNorms == nil {
			continue
		}
		norms = norms[:0]
		for _, x := range rec.SampleNorms {
			if x == nil {
				norms = append(norms, math.NaN())
			} else {
				norms = append(norms, *x)
			}
		}
		tl.Add(norms)
		res.Steps++
		if e, ok := tl.Estimate(); ok {
			res.Points = append(res.Points, Point{Step: rec.Step, TailEstimate: e, Median: tl.Median()})
		}
	}
	if err := sc.Err(); err != nil {
		return TraceResult{}, fmt.Errorf("line %d: %v", line+1, err)
	}
	switch {
	case res.Steps == 0:
		return TraceResult{}, errors.New("no per-sample norms in the log (no line has \"sample_norms\")")
	case len(res.Points) == 0:
		return TraceResult{}, fmt.Errorf("%d steps of norms, too few for a tail estimate (need %d finite, non-constant norms)", res.Steps, estimator.MinTailSamples)
	}
	return res, nil
}

// WriteTable prints rows points evenly spaced over the run, the first and
// the last included (all of them if there are fewer).
func (r TraceResult) WriteTable(w io.Writer, rows int) error {
	fmt.Fprintf(w, "tail of the per-sample gradient norms over the last %d norms (Hill on the top ⌈√N⌉; β = p̂ clamped to [%g, 2]; σ̂ = (mean |g|^β)^(1/β))\n", r.Window, estimator.MinBeta)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "step\tp̂\tβ\tσ̂\tmedian\tN\tk\t\n")
	n := len(r.Points)
	rows = min(max(rows, 1), n)
	for j := range rows {
		i := n - 1 // a single row is the last point
		if rows > 1 {
			i = j * (n - 1) / (rows - 1)
		}
		p := r.Points[i]
		fmt.Fprintf(tw, "%d\t%.3f\t%.3f\t%s\t%s\t%d\t%d\t\n", p.Step, p.P, p.Beta, g4(p.Sigma), g4(p.Median), p.N, p.K)
	}
	return tw.Flush()
}

func g4(x float64) string { return strconv.FormatFloat(x, 'g', 4, 64) }

// Panels returns the trace figure: p̂ (with β) and σ̂ (with the median
// norm) against the step.
func (r TraceResult) Panels() []plotting.Panel {
	n := len(r.Points)
	step, p, beta, sigma, med := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for i, pt := range r.Points {
		step[i], p[i], beta[i], sigma[i], med[i] = float64(pt.Step), pt.P, pt.Beta, pt.Sigma, pt.Median
	}
	return []plotting.Panel{
		{Title: "tail index", XLabel: "step", YLabel: "estimate", Series: []plotting.Series{{Name: "Hill p̂", X: step, Y: p}, {Name: "β (p̂ clamped)", X: step, Y: beta}}},
		{Title: "moment bound", XLabel: "step", YLabel: "per-sample gradient norm", LogY: true, Series: []plotting.Series{{Name: "σ̂", X: step, Y: sigma}, {Name: "median", X: step, Y: med}}},
	}
}

// Save writes dir/tail.json and the figure dir/tail.{png,svg}, atomically.
func (r TraceResult) Save(dir string) error {
	if err := saveJSON(filepath.Join(dir, "tail.json"), r); err != nil {
		return err
	}
	return saveFigure(filepath.Join(dir, "tail"), r.Panels())
}
