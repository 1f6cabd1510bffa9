package table

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
)

// WriteTable writes the run's curve as a table, one row an epoch: the
// training, validation and test figures (the loss named by Config.Loss,
// the accuracy for classification) and dp-sgd's ε. A column the run has
// no figure in (accuracy for regression, test figures without a test
// file) is left out; with released, so is every column a private run
// does not release (training and validation figures): only the test
// figures and ε remain.
func (s *Summary) WriteTable(w io.Writer, released bool) error {
	type column struct {
		head string
		v    func(e EpochRecord) float64
		keep bool // a private run releases it
	}
	cols := []column{
		{"train " + s.Config.Loss, func(e EpochRecord) float64 { return float64(e.TrainLoss) }, false},
		{"train acc", func(e EpochRecord) float64 { return float64(e.TrainAcc) }, false},
		{"val " + s.Config.Loss, func(e EpochRecord) float64 { return float64(e.ValLoss) }, false},
		{"val acc", func(e EpochRecord) float64 { return float64(e.ValAcc) }, false},
		{"test " + s.Config.Loss, func(e EpochRecord) float64 { return float64(e.TestLoss) }, true},
		{"test acc", func(e EpochRecord) float64 { return float64(e.TestAcc) }, true},
		{"ε", func(e EpochRecord) float64 {
			if e.Epsilon == nil {
				return math.NaN()
			}
			return float64(*e.Epsilon)
		}, true},
	}
	var shown []column
	for _, c := range cols {
		if released && !c.keep {
			continue
		}
		for _, e := range s.Curve {
			if v := c.v(e); !math.IsNaN(v) {
				shown = append(shown, c)
				break
			}
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	heads := []string{"epoch"}
	for _, c := range shown {
		heads = append(heads, c.head)
	}
	fmt.Fprintln(tw, strings.Join(heads, "\t")+"\t")
	for _, e := range s.Curve {
		row := []string{fmt.Sprint(e.Epoch)}
		for _, c := range shown {
			v := c.v(e)
			switch {
			case strings.HasSuffix(c.head, " acc"):
				row = append(row, fmt.Sprintf("%.2f %%", 100*v))
			default:
				row = append(row, fmt.Sprintf("%.4g", v))
			}
		}
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	return tw.Flush()
}
