package tail

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"text/tabwriter"

	"github.com/psclip/psclip/experiments/quadratic"
	"github.com/psclip/psclip/internal/atomicfile"
	"github.com/psclip/psclip/internal/plotting"
)

// Checkpoints are the iterations at which WriteTable reports p̂ (those ≤ T).
var Checkpoints = []int{10, 100, 500, 1000, 2000}

// WriteTable prints the paper's metrics per p and method, marking each
// column's smallest value with '*', then the automatic threshold's p̂
// (mean ± sd over runs) at the Checkpoints and its final σ̂.
func (r Result) WriteTable(w io.Writer) error {
	q := quadratic.Result{}
	for _, row := range r.Rows {
		q.Rows = append(q.Rows, quadratic.Row{P: row.P, Method: row.Label, MinGradNorm: row.MinGradNorm, AvgGradNorm: row.AvgGradNorm})
	}
	if err := q.WriteTable(w); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "\nnoise\tmethod\t")
	for _, t := range Checkpoints {
		if t <= r.Config.T {
			fmt.Fprintf(tw, "p̂ at t=%d\t", t)
		}
	}
	fmt.Fprintf(tw, "σ̂ at t=%d\t\n", r.Config.T)
	for _, row := range r.Rows {
		if row.PHat == nil {
			continue
		}
		fmt.Fprintf(tw, "p = %g\t%s\t", row.P, row.Label)
		for _, t := range Checkpoints {
			if t <= r.Config.T {
				fmt.Fprintf(tw, "%s\t", pm(row.PHat[t-1], row.PHatSD[t-1]))
			}
		}
		fmt.Fprintf(tw, "%.3f\t\n", row.SigmaHat[r.Config.T-1])
	}
	return tw.Flush()
}

func pm(mean, sd float64) string {
	if math.IsNaN(mean) {
		return "warm-up"
	}
	return strconv.FormatFloat(mean, 'f', 3, 64) + " ± " + strconv.FormatFloat(sd, 'f', 3, 64)
}

// Panels returns the convergence figure (run-averaged |∇F(x_t)|, one panel
// per p) followed by the p̂ figure (run-averaged p̂ of every automatic
// threshold against t, with the true p, one panel per p).
func (r Result) Panels() (convergence, phat []plotting.Panel) {
	q := quadratic.Result{}
	for _, row := range r.Rows {
		q.Rows = append(q.Rows, quadratic.Row{P: row.P, Method: row.Label, Curve: row.Curve})
	}
	convergence = q.Panels()
	iters := make([]float64, r.Config.T)
	for t := range iters {
		iters[t] = float64(t + 1)
	}
	for _, row := range r.Rows {
		if row.PHat == nil {
			continue
		}
		title := "p = " + strconv.FormatFloat(row.P, 'g', -1, 64)
		if len(phat) == 0 || phat[len(phat)-1].Title != title {
			truth := []float64{row.P, row.P}
			phat = append(phat, plotting.Panel{Title: title, XLabel: "iteration t", YLabel: "Hill estimate p̂ (mean over runs)",
				Series: []plotting.Series{{Name: "true p", X: []float64{1, float64(r.Config.T)}, Y: truth}}})
		}
		pn := &phat[len(phat)-1]
		pn.Series = append(pn.Series, plotting.Series{Name: row.Label, X: iters, Y: row.PHat})
	}
	return convergence, phat
}

// Save writes dir/tail-quadratic.json, the convergence figure
// dir/tail-quadratic.{png,svg} and the p̂ figure dir/tail-phat.{png,svg},
// each atomically.
func (r Result) Save(dir string) error {
	conv, phat := r.Panels()
	if err := saveJSON(filepath.Join(dir, "tail-quadratic.json"), r); err != nil {
		return err
	}
	if err := saveFigure(filepath.Join(dir, "tail-quadratic"), conv); err != nil {
		return err
	}
	if len(phat) == 0 {
		return nil
	}
	return saveFigure(filepath.Join(dir, "tail-phat"), phat)
}

func saveJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, append(data, '\n'))
}

func saveFigure(base string, panels []plotting.Panel) error {
	for _, ext := range []string{".png", ".svg"} {
		if err := plotting.Save(base+ext, panels); err != nil {
			return err
		}
	}
	return nil
}
