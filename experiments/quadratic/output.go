package quadratic

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"text/tabwriter"

	"github.com/psclip/psclip/internal/atomicfile"
	"github.com/psclip/psclip/internal/plotting"
)

// displayName is a method's name as the paper's tables print it.
func displayName(method string) string {
	switch method {
	case "sgd":
		return "SGD"
	case "clip-sgd":
		return "Clip-SGD"
	case "nsgd":
		return "Normalized SGD"
	case "ps-clip-sgd":
		return "PS-Clip-SGD"
	}
	return method
}

// label is a method's name in the tables and figures at tail index p:
// displayName, with α and β for a PS-Clip-SGD whose threshold is estimated.
func (c Config) label(p float64, method string) string {
	name := displayName(method)
	if method != "ps-clip-sgd" || !(c.AutoAlpha || c.AutoBeta) {
		return name
	}
	h, _ := c.Hyper(p, method) // Validate has checked it
	return fmt.Sprintf("%s α=%s β=%s", name, autoNum(h.Alpha, c.AutoAlpha), autoNum(h.Beta, c.AutoBeta))
}

// autoNum is x as a flag value: "auto" if auto.
func autoNum(x float64, auto bool) string {
	if auto {
		return "auto"
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

func pLabel(p float64) string { return "p = " + strconv.FormatFloat(p, 'g', -1, 64) }

// WriteTable prints r in the layout of the paper's table, marking the
// smallest value of each column and p with '*'.
func (r Result) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "noise\talgorithm\tmin |∇F(x_t)|\tavg |∇F(x_t)|\t\n")
	for i := 0; i < len(r.Rows); {
		j := i
		for j < len(r.Rows) && r.Rows[j].P == r.Rows[i].P {
			j++
		}
		group := r.Rows[i:j]
		bestMin, bestAvg := 0, 0
		for k, row := range group {
			if row.MinGradNorm < group[bestMin].MinGradNorm {
				bestMin = k
			}
			if row.AvgGradNorm < group[bestAvg].AvgGradNorm {
				bestAvg = k
			}
		}
		for k, row := range group {
			label := ""
			if k == 0 {
				label = pLabel(row.P)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", label, r.Config.label(row.P, row.Method),
				mark(row.MinGradNorm, k == bestMin), mark(row.AvgGradNorm, k == bestAvg))
		}
		i = j
	}
	return tw.Flush()
}

func mark(v float64, best bool) string {
	s := strconv.FormatFloat(v, 'f', 4, 64)
	if best {
		return s + "*"
	}
	return s + " "
}

// Panels returns the convergence figure: the run-averaged gradient norm
// against the iteration, log scale, one panel per p.
func (r Result) Panels() []plotting.Panel {
	var panels []plotting.Panel
	var iters []float64
	for _, row := range r.Rows {
		if len(panels) == 0 || panels[len(panels)-1].Title != pLabel(row.P) {
			panels = append(panels, plotting.Panel{Title: pLabel(row.P), XLabel: "iteration t", YLabel: "gradient norm |x_t|, mean over runs", LogY: true})
		}
		if len(iters) != len(row.Curve) {
			iters = make([]float64, len(row.Curve))
			for t := range iters {
				iters[t] = float64(t + 1)
			}
		}
		pn := &panels[len(panels)-1]
		pn.Series = append(pn.Series, plotting.Series{Name: r.Config.label(row.P, row.Method), X: iters, Y: row.Curve})
	}
	return panels
}

// Save writes dir/quadratic.json and the figure as dir/quadratic.png and
// dir/quadratic.svg, each atomically.
func (r Result) Save(dir string) error {
	return save(dir, "quadratic", r, r.Panels())
}

// WriteTable prints the quantiles, one line per p and method, one column per
// log(1/δ).
func (r HighProbResult) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "(1−δ)-quantile over %d runs of the average gradient norm (1/T)Σ_t |∇F(x_t)|, T = %d\n", r.Config.Runs, r.Config.T)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "noise\talgorithm\t")
	for _, k := range LogInvDeltas {
		fmt.Fprintf(tw, "log(1/δ)=%d\t", k)
	}
	fmt.Fprintln(tw)
	var lastP float64
	for i, row := range r.Rows {
		if row.LogInvDelta == LogInvDeltas[0] {
			label := ""
			if i == 0 || row.P != lastP {
				label = pLabel(row.P)
			}
			lastP = row.P
			fmt.Fprintf(tw, "%s\t%s\t", label, r.Config.label(row.P, row.Method))
		}
		fmt.Fprintf(tw, "%.4f\t", row.Quantile)
		if row.LogInvDelta == LogInvDeltas[len(LogInvDeltas)-1] {
			fmt.Fprintln(tw)
		}
	}
	return tw.Flush()
}

// Panels returns the high-probability figure: the quantile against
// log(1/δ), one panel per p.
func (r HighProbResult) Panels() []plotting.Panel {
	var panels []plotting.Panel
	for _, row := range r.Rows {
		if len(panels) == 0 || panels[len(panels)-1].Title != pLabel(row.P) {
			panels = append(panels, plotting.Panel{Title: pLabel(row.P), XLabel: "log(1/δ)", YLabel: "(1-δ)-quantile of the mean gradient norm"})
		}
		pn := &panels[len(panels)-1]
		if name := r.Config.label(row.P, row.Method); len(pn.Series) == 0 || pn.Series[len(pn.Series)-1].Name != name {
			pn.Series = append(pn.Series, plotting.Series{Name: name})
		}
		s := &pn.Series[len(pn.Series)-1]
		s.X = append(s.X, float64(row.LogInvDelta))
		s.Y = append(s.Y, row.Quantile)
	}
	return panels
}

// Save writes dir/highprob.json and the figure as dir/highprob.png and
// dir/highprob.svg, each atomically.
func (r HighProbResult) Save(dir string) error {
	return save(dir, "highprob", r, r.Panels())
}

func save(dir, name string, v any, panels []plotting.Panel) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, name+".json"), append(data, '\n')); err != nil {
		return err
	}
	for _, ext := range []string{".png", ".svg"} {
		if err := plotting.Save(filepath.Join(dir, name+ext), panels); err != nil {
			return err
		}
	}
	return nil
}
