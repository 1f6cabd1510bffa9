package images

import (
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/psclip/psclip/internal/plotting"
	"github.com/psclip/psclip/internal/stats"
)

// MainTable is the paper's Table "performance comparison" as markdown:
// train, validation and test accuracy in %, total training time in
// minutes, and the validation accuracy reached within the fastest method's
// total time, each mean ± sd over seeds, with the per-sample and batch
// clipping rates. The best accuracy of each column is bold.
func (r *Results) MainTable() string {
	var b strings.Builder
	b.WriteString("| method | train acc % | val acc % | test acc % | total time, min | val acc % within the fastest's time | clipped samples per batch | clipped steps |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	col := func(get func(Row) (Float, Float), i int, scale float64, prec int, bold bool) string {
		m, sd := get(r.Table[i])
		s := pm(m*Float(scale), sd*Float(scale), prec)
		if bold && best(r.Table, get) == i {
			s = "**" + s + "**"
		}
		return s
	}
	for i, row := range r.Table {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %.2f | %.1f %% |\n", row.Name,
			col(func(w Row) (Float, Float) { return w.TrainAcc, w.TrainAccSD }, i, 100, 2, true),
			col(func(w Row) (Float, Float) { return w.ValAcc, w.ValAccSD }, i, 100, 2, true),
			col(func(w Row) (Float, Float) { return w.TestAcc, w.TestAccSD }, i, 100, 2, true),
			col(func(w Row) (Float, Float) { return w.Seconds, w.SecondsSD }, i, 1.0/60, 2, false),
			col(func(w Row) (Float, Float) { return w.ValAtFastest, w.ValAtFastestSD }, i, 100, 2, true),
			float64(row.ClippedPerBatch), 100*float64(row.ClippedStepFraction))
	}
	fmt.Fprintf(&b, "\n%s; %d epochs, width divisor %d, batch %d, lr %g, momentum %g, weight decay %g, augmentation %s.\n",
		r.seedsLabel(), r.Experiment.Base.Epochs, r.Experiment.Base.WidthDiv, r.Experiment.Base.Batch,
		r.Experiment.Base.LR, r.Experiment.Base.Momentum, r.Experiment.Base.WeightDecay, r.Experiment.Base.Augment)
	if p := r.PairedTable(); p != "" {
		b.WriteString("\n" + p)
	}
	return b.String()
}

// PairedTable compares every method with SGD seed by seed, as markdown: the
// final test accuracy and the test accuracy at the epoch of best
// validation accuracy, each as the mean difference to SGD in points with
// its 95 % t-interval (stats.Paired), the sign count and what the interval
// says; "" when the methods do not include SGD.
func (r *Results) PairedTable() string {
	var b strings.Builder
	for _, w := range r.Table {
		if w.Paired == nil {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("| method | test acc % | − SGD, points [95 % CI] | +/−/0 | best-epoch test acc % | best epoch | − SGD, points [95 % CI] | +/−/0 |\n")
			b.WriteString("|---|---|---|---|---|---|---|---|\n")
			if sgd := slices.IndexFunc(r.Table, func(w Row) bool { return w.Method == sgdMethod }); sgd >= 0 {
				s := r.Table[sgd]
				fmt.Fprintf(&b, "| %s | %s | – | – | %s | %s | – | – |\n", s.Name, pm(s.TestAcc*100, s.TestAccSD*100, 2),
					pm(s.BestTestAcc*100, s.BestTestAccSD*100, 2), epochs(s.BestEpochs))
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", w.Name,
			pm(w.TestAcc*100, w.TestAccSD*100, 2), Verdict(w.Paired.TestAcc), signs(w.Paired.TestAcc),
			pm(w.BestTestAcc*100, w.BestTestAccSD*100, 2), epochs(w.BestEpochs), Verdict(w.Paired.BestTestAcc), signs(w.Paired.BestTestAcc))
	}
	if b.Len() == 0 {
		return ""
	}
	b.WriteString("\nPaired over seeds against SGD at the same seed (same initial weights, batches and label noise): mean difference " +
		"in points with its 95 % Student t interval, and the number of seeds ahead/behind/equal. The best epoch is the one of highest " +
		"validation accuracy (the validation labels are never noisy), listed per seed.\n")
	return b.String()
}

// Verdict writes a paired difference of accuracies (fractions) in points
// as words that follow its 95 % interval: "ahead by +0.17 [+0.12, +0.22]"
// when the interval lies above 0, "behind by …" below it, "+0.05 [−0.40,
// +0.50], interval holds 0" otherwise, and the difference alone for a
// single pair; "–" without pairs.
func Verdict(p stats.Paired) string {
	pts := stats.Paired{N: p.N, Mean: 100 * p.Mean, SD: 100 * p.SD, CI95: [2]Float{100 * p.CI95[0], 100 * p.CI95[1]}}
	switch {
	case p.N == 0:
		return "–"
	case p.N == 1:
		return fmt.Sprintf("%+.2f (1 seed)", float64(pts.Mean))
	case p.CI95[0] > 0:
		return "ahead by " + pts.Format(2)
	case p.CI95[1] < 0:
		return "behind by " + pts.Format(2)
	}
	return pts.Format(2) + ", interval holds 0"
}

// signs is the sign count of p as "+/−/0"; "–" without pairs.
func signs(p stats.Paired) string {
	if p.N == 0 {
		return "–"
	}
	return fmt.Sprintf("%d/%d/%d", p.Positive, p.Negative, p.Zero)
}

// epochs lists the best epochs per seed, "–" for a seed without one.
func epochs(es []int) string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = "–"
		if e > 0 {
			s[i] = strconv.Itoa(e)
		}
	}
	return strings.Join(s, ", ")
}

// ClippingTable compares the main methods with SGD and shows whom they
// clip, as markdown: test accuracy, its difference to SGD's at the same
// seed (paired: the mean with its 95 % interval, then seed by seed, in
// points), the clipping rates, the
// last epoch's tail index p̂ of the per-sample norms and, with label
// noise, clipping as a detector of the mislabelled samples in the last
// epoch: precision against the noisy share (random clipping's
// precision), recall, and the mean per-sample norm of clean and
// mislabelled samples.
func (r *Results) ClippingTable() string {
	noise := r.Experiment.Base.LabelNoise > 0
	var b strings.Builder
	b.WriteString("| method | test acc % | test acc − SGD, points [95 % CI] | per seed | clipped samples per batch | clipped steps | p̂ |")
	if noise {
		b.WriteString(" clip precision (noisy share) | clip recall | mean norm clean / mislabelled |")
	}
	b.WriteString("\n|---|---|---|---|---|---|---|")
	if noise {
		b.WriteString("---|---|---|")
	}
	b.WriteString("\n")
	for _, w := range r.Table {
		diffs := make([]float64, len(w.TestAccVsSGD))
		seeds := make([]string, len(w.TestAccVsSGD))
		for i, d := range w.TestAccVsSGD {
			diffs[i] = 100 * float64(d)
			seeds[i] = fmt.Sprintf("%+.2f", diffs[i])
		}
		diff, per := "–", "–"
		if len(diffs) > 0 && w.Paired != nil {
			diff, per = Verdict(w.Paired.TestAcc), strings.Join(seeds, ", ")
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %.2f | %.1f %% | %s |", w.Name, pm(w.TestAcc*100, w.TestAccSD*100, 2), diff, per,
			float64(w.ClippedPerBatch), 100*float64(w.ClippedStepFraction), pm(w.TailIndex, Float(math.NaN()), 2))
		if noise {
			if d := w.Detection; d != nil {
				fmt.Fprintf(&b, " %.3f (%.3f) | %.3f | %.2f / %.2f |", float64(d.Precision), float64(d.NoisyShare), float64(d.Recall),
					float64(d.MeanNormClean), float64(d.MeanNormNoisy))
			} else {
				b.WriteString(" – | – | – |")
			}
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "\n%s; p̂ and the detection figures are the last epoch's", r.seedsLabel())
	if noise {
		fmt.Fprintf(&b, "; label noise %g (%s) on the training split", r.Experiment.Base.LabelNoise, r.Experiment.Base.LabelNoiseKind)
	}
	b.WriteString(".\n")
	return b.String()
}

// AugmentTable is per-sample clipping by AutoAugment operation as
// markdown, over every epoch and seed of each method that logged it
// (EpochRecord.Augment): for each operation (and AugmentNone, the samples
// AutoAugment left unchanged) the share of the samples that received it,
// then per method the share of those samples that were clipped and its
// ratio to the method's share over all samples (above 1: the operation's
// samples are clipped more often than the rest). "" when no run logged it.
func (r *Results) AugmentTable() string {
	type sums struct{ samples, clipped map[string]int }
	var names []string
	by := map[string]sums{}
	total := map[string]int{}
	for _, run := range r.Runs {
		for _, ep := range run.Curve {
			a := ep.Augment
			if a == nil {
				continue
			}
			s, ok := by[run.Name]
			if !ok {
				s = sums{map[string]int{}, map[string]int{}}
				by[run.Name] = s
				names = append(names, run.Name)
			}
			for op, c := range a.Ops {
				s.samples[op] += c.Samples
				s.clipped[op] += c.Clipped
			}
			for _, c := range a.SubPolicies {
				s.samples[""] += c.Samples
				s.clipped[""] += c.Clipped
				total[""] += c.Samples
			}
			for op, c := range a.Ops {
				total[op] += c.Samples
			}
		}
	}
	if len(names) == 0 {
		return ""
	}
	ops := slices.Sorted(maps.Keys(total))
	ops = slices.DeleteFunc(ops, func(op string) bool { return op == "" || op == AugmentNone })
	ops = append(ops, AugmentNone)
	var b strings.Builder
	b.WriteString("| AutoAugment op | share of samples % |")
	for _, n := range names {
		fmt.Fprintf(&b, " %s: clipped %% (× overall) |", n)
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---|", len(names)) + "\n")
	rate := func(clipped, samples int) float64 { return float64(clipped) / float64(samples) }
	for _, op := range ops {
		fmt.Fprintf(&b, "| %s | %.1f |", op, 100*rate(total[op], total[""]))
		for _, n := range names {
			s := by[n]
			if s.samples[op] == 0 {
				b.WriteString(" – |")
				continue
			}
			r := rate(s.clipped[op], s.samples[op])
			fmt.Fprintf(&b, " %.2f (× %.2f) |", 100*r, r/rate(s.clipped[""], s.samples[""]))
		}
		b.WriteString("\n")
	}
	b.WriteString("| all | 100.0 |")
	for _, n := range names {
		s := by[n]
		fmt.Fprintf(&b, " %.2f |", 100*rate(s.clipped[""], s.samples[""]))
	}
	fmt.Fprintf(&b, "\n\nOver every epoch of every seed (%d); a sample whose sub-policy ran two operations counts for both, %s for none.\n", len(r.Experiment.Seeds), AugmentNone)
	return b.String()
}

// GridTable is the appendix's "increasing vs constant threshold" table as
// markdown: the final validation accuracy of every grid point α·k^(1/β),
// below those of the main table's other methods: the constant and the
// automatic thresholds. The best mean is bold.
func (r *Results) GridTable() string {
	if len(r.Grid) == 0 {
		return ""
	}
	rows := make([]Row, 0, len(r.Table)+len(r.Grid))
	for _, w := range r.Table {
		// A given α and β are the grid's kind of threshold.
		if m := w.Method; !m.Reads("Alpha") || m.AutoAlpha || m.AutoBeta {
			rows = append(rows, w)
		}
	}
	rows = append(rows, r.Grid...)
	get := func(w Row) (Float, Float) { return w.ValAcc, w.ValAccSD }
	top := best(rows, get)
	var b strings.Builder
	fmt.Fprintf(&b, "| method | γ | α | β | val acc %% after %d epochs (%s) |\n", r.Experiment.Base.Epochs, r.seedsLabel())
	b.WriteString("|---|---|---|---|---|\n")
	for i, w := range rows {
		m := w.Method
		gamma, alpha, beta := "–", "–", "–"
		switch m.Estimator {
		case "ps-clip-auto":
			alpha, beta = "auto", "auto"
		case "ps-clip-quantile":
			gamma = "auto"
		case "clip-sgd", "ps-clip-sgd":
			if m.Reads("Alpha") {
				alpha, beta = autoNum(m.Alpha, m.AutoAlpha), autoNum(m.Beta, m.AutoBeta)
			} else {
				gamma = num(m.Clip)
			}
		}
		name, _, _ := strings.Cut(w.Name, " ")
		acc := pm(w.ValAcc*100, w.ValAccSD*100, 2)
		if i == top {
			acc = "**" + acc + "**"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", name, gamma, alpha, beta, acc)
	}
	return b.String()
}

// best returns the index of the row with the highest finite mean, -1 if
// there is none.
func best(rows []Row, get func(Row) (Float, Float)) int {
	top, topV := -1, math.Inf(-1)
	for i, w := range rows {
		if m, _ := get(w); finite(float64(m)) && float64(m) > topV {
			top, topV = i, float64(m)
		}
	}
	return top
}

// pm formats mean ± sd with prec decimals, the mean alone when sd is NaN
// (a single seed), or "–" when the mean is NaN.
func pm(mean, sd Float, prec int) string {
	switch {
	case math.IsNaN(float64(mean)):
		return "–"
	case math.IsNaN(float64(sd)):
		return fmt.Sprintf("%.*f", prec, float64(mean))
	}
	return fmt.Sprintf("%.*f ± %.*f", prec, float64(mean), prec, float64(sd))
}

// histograms is the panel of the last epoch's per-sample norm
// distributions, clean and mislabelled samples apart, of every per-sample
// method: each the share of its samples per bin of NormBin, over all
// seeds.
func (r *Results) histograms() plotting.Panel {
	p := plotting.Panel{Title: "last epoch's per-sample norms: clean and mislabelled", XLabel: "log10 norm", YLabel: "share of samples per bin"}
	for _, m := range r.Experiment.Methods {
		clean, noisy := make([]float64, NormBins), make([]float64, NormBins)
		for _, run := range r.Runs {
			if run.Method != m || len(run.Curve) == 0 || run.Curve[len(run.Curve)-1].Detection == nil {
				continue
			}
			d := run.Curve[len(run.Curve)-1].Detection
			for b := range min(len(d.HistClean), len(d.HistNoisy), NormBins) {
				clean[b] += float64(d.HistClean[b])
				noisy[b] += float64(d.HistNoisy[b])
			}
		}
		for _, h := range []struct {
			name   string
			counts []float64
		}{{" clean", clean}, {" mislabelled", noisy}} {
			var total float64
			for _, c := range h.counts {
				total += c
			}
			if total == 0 {
				continue
			}
			s := plotting.Series{Name: m.Name() + h.name}
			for b, c := range h.counts {
				s.X = append(s.X, math.Log10(NormBinCentre(b)))
				s.Y = append(s.Y, c/total)
			}
			p.Series = append(p.Series, s)
		}
	}
	return p
}

// figures draws the accuracy curves (the paper's figure) and the clipping
// statistics (the appendix figure) of the main methods, averaged over seeds
// epoch by epoch, as PNG and SVG.
func (r *Results) figures(dir string) error {
	curve := func(m Method, get func(EpochRecord) float64, scale float64) plotting.Series {
		s := plotting.Series{Name: m.Name()}
		for ep := 1; ep <= r.Experiment.Base.Epochs; ep++ {
			var sum float64
			n := 0
			for _, run := range r.Runs {
				if run.Method == m && ep <= len(run.Curve) {
					sum += get(run.Curve[ep-1])
					n++
				}
			}
			if n > 0 {
				s.X = append(s.X, float64(ep))
				s.Y = append(s.Y, scale*sum/float64(n))
			}
		}
		return s
	}
	panel := func(title, ylabel string, get func(EpochRecord) float64, scale float64) plotting.Panel {
		p := plotting.Panel{Title: title, XLabel: "epoch", YLabel: ylabel}
		for _, m := range r.Experiment.Methods {
			p.Series = append(p.Series, curve(m, get, scale))
		}
		return p
	}
	figs := []struct {
		names  [2]string
		panels []plotting.Panel
	}{
		{[2]string{AccuracyPNG, AccuracySVG}, []plotting.Panel{
			panel("training accuracy", "accuracy %", func(e EpochRecord) float64 { return float64(e.TrainAcc) }, 100),
			panel("validation accuracy", "accuracy %", func(e EpochRecord) float64 { return float64(e.ValAcc) }, 100),
			panel("test accuracy", "accuracy %", func(e EpochRecord) float64 { return float64(e.TestAcc) }, 100),
		}},
		{[2]string{ClippingPNG, ClippingSVG}, []plotting.Panel{
			panel("average per-sample gradient norm", "norm", func(e EpochRecord) float64 { return float64(e.MeanSampleNorm) }, 1),
			panel("clipped samples per batch", "samples", func(e EpochRecord) float64 { return e.ClippedPerBatch }, 1),
		}},
	}
	if r.Experiment.Base.LabelNoise > 0 {
		det := func(get func(*Detection) Float) func(EpochRecord) float64 {
			return func(e EpochRecord) float64 {
				if e.Detection == nil {
					return math.NaN()
				}
				return float64(get(e.Detection))
			}
		}
		norms := plotting.Panel{Title: "mean per-sample norm of clean and of mislabelled samples", XLabel: "epoch", YLabel: "norm"}
		for _, m := range r.Experiment.Methods {
			clean := curve(m, det(func(d *Detection) Float { return d.MeanNormClean }), 1)
			noisy := curve(m, det(func(d *Detection) Float { return d.MeanNormNoisy }), 1)
			clean.Name, noisy.Name = m.Name()+" clean", m.Name()+" mislabelled"
			norms.Series = append(norms.Series, clean, noisy)
		}
		figs = append(figs, struct {
			names  [2]string
			panels []plotting.Panel
		}{[2]string{DetectionPNG, DetectionSVG}, []plotting.Panel{
			panel("share of clipped samples that are mislabelled (precision)", "precision", det(func(d *Detection) Float { return d.Precision }), 1),
			panel("share of mislabelled samples clipped (recall)", "recall", det(func(d *Detection) Float { return d.Recall }), 1),
			norms, r.histograms(),
		}})
	}
	for _, f := range figs {
		for _, name := range f.names {
			if err := plotting.Save(filepath.Join(dir, name), f.panels); err != nil {
				return err
			}
		}
	}
	return nil
}
