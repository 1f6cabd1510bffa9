package gpt

import (
	"fmt"
	"math"
	"strings"
)

// LossTable is the paper's Table "performance comparison" as markdown: the
// final validation loss per learning rate and clip mode (mean ± sd over
// seeds), with the threshold on mean gradients and the fraction of
// gradients the mode clipped. The best mean at each learning rate is bold.
func (r *Results) LossTable() string {
	var b strings.Builder
	fmt.Fprintf(&b, "| learning rate | method | final val loss (mean ± sd over %s) | Δ vs global, paired [95 %% CI] (lower/higher) | threshold on mean gradients | clipped |\n", r.seedsLabel())
	b.WriteString("|---|---|---|---|---|---|\n")
	for i, row := range r.Table {
		lr := fmtLR(row.LR)
		if i > 0 && r.Table[i-1].LR == row.LR {
			lr = ""
		}
		loss := pm(row.ValLoss, row.ValLossSD, 4)
		if r.bestAt(row.LR) == i {
			loss = "**" + loss + "**"
		}
		delta := "—"
		if p := row.Paired; p != nil {
			delta = fmt.Sprintf("%s (%d/%d)", p.Format(4), p.Negative, p.Positive)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", lr, row.Method, loss, delta, thresholdLabel(row), clippedLabel(row))
	}
	return b.String()
}

// ClipTable says when in training each learning rate and clip mode
// clipped, as markdown: the share of its gradients clipped in every window
// of ClipWindowSteps steps, over all seeds (Row.ClipWindows).
func (r *Results) ClipTable() string {
	var head []ClipWindow
	for _, row := range r.Table {
		if len(row.ClipWindows) > len(head) {
			head = row.ClipWindows
		}
	}
	if head == nil {
		return "No run clips.\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Share of gradients clipped by window of %d steps, over %s:\n\n| learning rate | method |", ClipWindowSteps, r.seedsLabel())
	for _, w := range head {
		fmt.Fprintf(&b, " steps %d–%d |", w.From, w.To)
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---|", len(head)) + "\n")
	for i, row := range r.Table {
		if row.ClipWindows == nil {
			continue
		}
		lr := fmtLR(row.LR)
		if i > 0 && r.Table[i-1].LR == row.LR {
			lr = ""
		}
		fmt.Fprintf(&b, "| %s | %s |", lr, row.Method)
		for _, w := range row.ClipWindows {
			fmt.Fprintf(&b, " %s |", percent(w.Fraction))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// percent formats a share as a percentage with enough decimals to tell a
// rare clip from none: 0 %, 0.012 %, 1.6 %, 100 %; "—" for NaN.
func percent(f Float) string {
	switch x := 100 * float64(f); {
	case math.IsNaN(x):
		return "—"
	case x == 0 || x >= 10:
		return fmt.Sprintf("%.0f %%", x)
	case x >= 1:
		return fmt.Sprintf("%.1f %%", x)
	default:
		return fmt.Sprintf("%.2g %%", x)
	}
}

// TimeTable is the paper's training-time table as markdown: minutes per run
// (mean ± sd over seeds) per learning rate and clip mode.
func (r *Results) TimeTable() string {
	var b strings.Builder
	fmt.Fprintf(&b, "| learning rate | method | training time per run, min (mean ± sd over %s) |\n", r.seedsLabel())
	b.WriteString("|---|---|---|\n")
	for i, row := range r.Table {
		lr := fmtLR(row.LR)
		if i > 0 && r.Table[i-1].LR == row.LR {
			lr = ""
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", lr, row.Method, pm(row.Seconds/60, row.SecondsSD/60, 2))
	}
	return b.String()
}

// CSV is the table with one line per learning rate and clip mode. The
// method column comes last, so that readers of the columns before it are
// unaffected; no method name contains a comma or a quote.
func (r *Results) CSV() string {
	var b strings.Builder
	b.WriteString("lr,clip_mode,n,final_val_loss_mean,final_val_loss_sd,train_time_s_mean,train_time_s_sd,clipped_fraction_mean,clip_threshold,method\n")
	for _, row := range r.Table {
		fmt.Fprintf(&b, "%s,%s,%d,%s,%s,%s,%s,%s,%s,%s\n", fmtLR(row.LR), row.Mode, row.N,
			csvFloat(row.ValLoss), csvFloat(row.ValLossSD), csvFloat(row.Seconds), csvFloat(row.SecondsSD), csvFloat(row.ClippedFrac), csvFloat(row.ClipThreshold), row.Method)
	}
	return b.String()
}

// bestAt returns the index of the row with the lowest mean loss at lr.
func (r *Results) bestAt(lr float64) int {
	best := -1
	for i, row := range r.Table {
		if row.LR == lr && !math.IsNaN(float64(row.ValLoss)) && (best < 0 || row.ValLoss < r.Table[best].ValLoss) {
			best = i
		}
	}
	return best
}

func (r *Results) seedsLabel() string {
	if n := len(r.Experiment.Seeds); n != 1 {
		return fmt.Sprintf("%d seeds", n)
	}
	return "1 seed"
}

// clippedLabel says what share of the gradients the row's mode clipped.
func clippedLabel(row Row) string {
	unit := map[ClipMode]string{
		ClipGlobal:     "of steps",
		ClipMicroBatch: "of micro-batches",
		ClipPerSample:  "of sequences",
	}[row.Mode]
	if unit == "" {
		return "—"
	}
	return fmt.Sprintf("%.1f %% %s", 100*float64(row.ClippedFrac), unit)
}

// thresholdLabel names the threshold and the gradients it bounds.
func thresholdLabel(row Row) string {
	g := map[ClipMode]string{ClipGlobal: "ḡ", ClipMicroBatch: "each g_j", ClipPerSample: "each g_i"}[row.Mode]
	if g == "" || math.IsNaN(float64(row.ClipThreshold)) {
		return "—"
	}
	return fmt.Sprintf("%g on %s", float64(row.ClipThreshold), g)
}

// pm formats mean ± sd with prec decimals, or the mean alone when sd is NaN
// (a single seed).
func pm(mean, sd Float, prec int) string {
	if math.IsNaN(float64(sd)) {
		return fmt.Sprintf("%.*f", prec, float64(mean))
	}
	return fmt.Sprintf("%.*f ± %.*f", prec, float64(mean), prec, float64(sd))
}

func csvFloat(f Float) string {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return ""
	}
	return fmt.Sprint(float64(f))
}
